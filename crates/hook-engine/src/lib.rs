//! Answers a hook event from compiled rules.
//!
//! The hot path of every hook: the artifact read in place, its matchers, and the evaluation of
//! rules against a payload. Nothing here parses TOML or builds an automaton.

pub mod text;
