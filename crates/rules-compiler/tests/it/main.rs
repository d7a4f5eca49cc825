//! Integration tests of `rules-compiler`: the diagnostics corpus and the valid packs.
#![allow(clippy::unwrap_used, reason = "a test that cannot unwrap has failed")]

mod artifact;
mod crafted;
mod diagnostics;
mod differential;
mod effort;
mod hostile;
mod pack_tests;
mod scopes;
