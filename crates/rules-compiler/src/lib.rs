//! hookpack's rule packs: the language, its diagnostics, scopes and config, and the compiler.
//!
//! [`parse_pack`] reads one pack file into a [`Pack`] and reports every problem in it as a
//! [`Diagnostic`] with its `file:line:col`; [`load`] reads every pack and config of a project's
//! scopes (nothing outside their folders, nothing but regular files, each within a cap).
//!
//! ```
//! use std::sync::Arc;
//! use rules_compiler::{SourceFile, parse_pack};
//!
//! let source = Arc::new(SourceFile::new("api.toml", r#"
//! [pack]
//! name = "api"
//!
//! [[rule]]
//! id = "sql"
//! on = "UserPromptSubmit"
//! keywords = ["sql", "migration"]
//! context = "Migrations live in db/migrations and are reviewed by the DBA."
//! "#));
//! let (pack, diagnostics) = parse_pack(&source, std::path::Path::new("."));
//! assert!(diagnostics.is_empty(), "{}", diagnostics.render());
//! assert_eq!(pack.unwrap().rules[0].full_id(), "api/sql");
//! ```
#![deny(missing_docs)]

mod builtin;
mod compile;
mod diag;
mod emit;
mod error;
mod files;
mod model;
mod pack;
mod project;
mod shape;
mod source;
mod testing;

pub use compile::{
    Compiled, ConfigSettings, DirStamp, FileStamp, MAX_AUTOMATA_BYTES, Sources, compile,
    compiler_fingerprint, fail_closed_list,
};
pub use diag::{Diagnostic, Diagnostics, Note, Severity};
pub use error::{Error, MatcherKind};
pub use files::MAX_CONTEXT_FILE_BYTES;
pub use model::*;
pub use pack::{is_pack_name, is_rule_id, parse_pack};
pub use project::{
    BracketConfig, BudgetConfig, Config, Fate, Layout, Loaded, MemoryConfig, Scope, StateConfig,
    load, mtime_ns,
};
pub use source::SourceFile;
pub use testing::{InProject, TEST_CWD, TestOutcome, run_project_tests, run_tests};

/// The JSON Schema of rule pack files, for editors (`#:schema` in a pack's first line).
pub fn rule_pack_schema() -> serde_json::Value {
    shape::json_schema(&shape::PACK_FILE, "https://hookpack.dev/schemas/rule-pack.schema.json")
}

/// The JSON Schema of `hookpack.toml` config files.
pub fn config_schema() -> serde_json::Value {
    shape::json_schema(&shape::CONFIG_FILE, "https://hookpack.dev/schemas/config.schema.json")
}
