//! The pi session store in plain Rust.
//!
//! A session is an append-only JSONL file: a header line, then entries linked by `id`/`parentId`
//! into a tree. This crate reads and writes those files exactly as the TypeScript reference
//! (`@earendil-works/pi-coding-agent` 1.6.0) does, byte for byte, and answers the structural
//! questions (index, branches, tree, compaction-aware context selection, listing) without turning
//! entries into objects. It has no Node.js dependency: the napi binding is a thin layer on top.

pub mod config;
pub mod context;
pub mod cores;
pub mod error;
pub mod fault;
pub mod file;
pub mod fsio;
pub mod fxhash;
pub mod ids;
pub mod inspect;
pub mod json;
pub mod key;
pub mod lazy;
pub mod listing;
pub mod lock;
pub mod materialize;
pub mod merge;
pub mod paths;
pub mod places;
pub mod pool;
pub mod record;
pub mod relocate;
pub mod reports;
pub mod reserve;
pub mod secrets;
pub mod session;
pub mod store;
pub mod sync;
pub mod text;
pub mod timefmt;
pub mod torn;
pub mod transcript;
pub mod trash;
pub mod tree;

#[cfg(test)]
mod testing;

pub use config::{Config, Tuning};
pub use error::{Error, ErrorCode, Result};
pub use session::Session;

/// The session format version this crate writes.
pub const CURRENT_SESSION_VERSION: u32 = 3;
