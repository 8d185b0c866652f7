//! napi binding: a thin shell over `pi_session_core`. Each method converts its arguments, calls
//! the core, and converts the result; errors become JS `Error`s whose `code` is stable.
//!
//! Ids cross the boundary as *keys* (the JSON text of the id value, see `record.rs`), positions as
//! `u32` record indices, and bulk results as typed arrays or one JSON text, so that building JS
//! objects stays on the JS side where `JSON.parse` does it fastest.
//!
//! Modules, one concept each:
//! - [`error`]: the one mapping from a core error to a JS `Error`; [`config`]: what a new
//!   manager is configured with (the product variables, the internal thresholds);
//! - [`session`]: the `NativeSession` class (split by method group), [`memory`]: what it reports
//!   to V8, [`reclaim`]: dropping the state of collected managers early;
//! - [`cut`]: record lines with long strings cut out, [`strings`]: JS strings made from code
//!   units (external when long);
//! - [`task`]: work on the libuv pool, [`listing`]: `list`/`listAll`, [`store`]: the other free
//!   functions over the session store, [`paths`]: where sessions live (the core's places and path
//!   rules, so the shell decides none), [`lazy`]: the big values of entries read when first read;
//! - [`secrets`] holds `scanSecrets`, the library form of `pi-sessions secrets`;
//! - [`wire`]: the core's typed query results (tree, context plan, transcript page) encoded for
//!   JavaScript, with every constant of their layouts, which JavaScript reads from here;
//! - [`cli`]: the `pi-sessions` command line; [`merge_sessions`], [`sync_sessions`],
//!   [`move_sessions`]: the library forms of `pi-sessions merge`, `sync` and `move`, each
//!   returning its command's `--json` report.

// Lints: `[workspace.lints]` in the top-level Cargo.toml.

// The modules that export to JS are public: their items are reached from JS, not from Rust.
pub mod cli;
pub mod config;
pub mod cut;
mod error;
pub mod lazy;
pub mod listing;
pub mod memory;
pub mod merge_sessions;
pub mod move_sessions;
pub mod paths;
pub mod reclaim;
pub mod secrets;
pub mod session;
pub mod store;
mod strings;
pub mod sync_sessions;
mod task;
pub mod wire;
