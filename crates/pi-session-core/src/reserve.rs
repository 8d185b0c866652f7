//! Reserved entry ids: ids handed out before their entry exists, so that a caller can name an
//! entry (in a message it sends, a file it writes) before appending it.
//!
//! A reserved id is one no entry of the session has. While reserved, no other append can take
//! it (a fresh id that hits one is refused as taken, and the caller draws another); it is
//! consumed by the append that names it, and only once that append succeeded, so a failed
//! write leaves it reserved. Reservations belong to one session: they are dropped when the
//! manager moves to another (new session, another file, a branched session).

use std::collections::HashSet;

use crate::error::{Error, ErrorCode, Result};
use crate::fxhash::FxBuild;
use crate::ids;
use crate::record::{self, Key};

#[derive(Debug, Default)]
pub struct Reservations {
    keys: HashSet<Key, FxBuild>,
}

impl Reservations {
    /// A new id that `in_session` does not know (by key) and that is not reserved yet, now reserved.
    pub fn reserve(&mut self, in_session: impl Fn(&str) -> bool) -> String {
        let id = ids::entry_id(|id| {
            let key = record::string_key(id);
            in_session(&key) || self.keys.contains(&*key)
        });
        self.keys.insert(record::string_key(&id));
        id
    }

    /// Give up the reservation of `key`; false when it was not reserved.
    pub fn release(&mut self, key: &str) -> bool {
        self.keys.remove(key)
    }

    pub fn contains(&self, key: &str) -> bool {
        !self.keys.is_empty() && self.keys.contains(key)
    }

    pub fn clear(&mut self) {
        self.keys.clear();
    }

    /// Whether an append that names `key` may go ahead: the id must be reserved and in no entry.
    pub fn check(&self, key: &str, in_session: bool) -> Result<()> {
        if in_session {
            return Err(Error::new(
                ErrorCode::DuplicateEntryId,
                format!("Entry id {key} is already in the session"),
            ));
        }
        if !self.contains(key) {
            return Err(Error::new(
                ErrorCode::EntryIdNotReserved,
                format!("Entry id {key} is not reserved (reserveEntryId() first)"),
            ));
        }
        Ok(())
    }
}
