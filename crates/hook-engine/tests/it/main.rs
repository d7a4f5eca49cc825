//! hook-engine's integration tests.

mod readings;
