//! Answers a hook event from compiled rules.
//!
//! The hot path of every hook: the artifact read in place, its matchers, and the evaluation of
//! rules against a payload. Nothing here parses TOML or builds an automaton.

mod answer;
pub mod artifact;
pub mod bounded;
pub mod call;
pub mod code;
pub mod codec;
pub mod command;
mod eval;
pub mod find;
pub mod layout;
pub mod memory;
pub mod observe;
pub mod path_keys;
pub mod paths;
pub mod rule;
pub mod screen;
mod session;
pub mod shell;
pub mod signal;
pub mod sql;
pub mod template;
pub mod text;

pub use answer::{Response, respond};
pub use eval::{
    Bracket, Engine, Evaluation, Facts, Fired, Mode, NearMiss, Scan, SessionState, Settings,
    star_commands, tool_path,
};
pub use rule::{Decision, EventSet, Layer, Once, RecallFrom, RecallSpec};
