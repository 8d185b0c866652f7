//! Listing sessions without loading them, one concept per module:
//!
//! - [`discover`]: finding session files (header scan, most recent, by id, the files of a
//!   directory or of the whole sessions root, in the reference's order);
//! - [`summary`]: one file's [`FileSummary`] (the ingredients of a `SessionInfo`), computed in one
//!   streaming pass ([`lines`] reads the file as Node's `readline` does, [`js`] holds the
//!   JavaScript string rules it needs);
//! - [`cache`]: the listing cache that keeps summaries between runs;
//! - [`job`]: a listing run on worker threads, results handed out in input order.

pub mod cache;
pub mod discover;
pub mod job;
mod js;
mod lines;
pub mod summary;

pub(crate) use discover::may_lead;
pub use discover::{
    find_by_id, find_most_recent, list_all_candidates, list_dir_files, mtime_ms, read_header,
    read_header_for_discovery, sort_names_desc, Header, NameOrder, ScanError,
    MAX_HEADER_SCAN_BYTES,
};
pub use summary::{summarize_file_parts, FileSummary, NeedsJsDate, SummaryInfo};
