//! Integration tests of `hook-model`: every example parses, every output has its exact shape.
#![allow(clippy::unwrap_used, reason = "a test that cannot unwrap has failed")]

mod examples;
mod outputs;
