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
use crate::json;
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

    /// Reserve the id the caller chose (its key): refused with `DUPLICATE_ENTRY_ID` when an
    /// entry has it (`in_session`) or it is reserved already. The id's form is the caller's
    /// check (the binding's), as upstream words it.
    pub fn reserve_named(&mut self, key: &str, in_session: bool) -> Result<()> {
        if in_session {
            return Err(exists(key));
        }
        if self.contains(key) {
            return Err(Error::new(
                ErrorCode::DuplicateEntryId,
                format!("Session entry ID is already reserved: {}", shown(key)),
            ));
        }
        self.keys.insert(Key::from(key));
        Ok(())
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
            return Err(exists(key));
        }
        if !self.contains(key) {
            return Err(Error::new(
                ErrorCode::EntryIdNotReserved,
                format!("Session entry ID was not reserved: {}", shown(key)),
            ));
        }
        Ok(())
    }
}

/// The refusal of an id an entry has (upstream's wording).
fn exists(key: &str) -> Error {
    Error::new(
        ErrorCode::DuplicateEntryId,
        format!("Session entry ID already exists: {}", shown(key)),
    )
}

/// An id as a message shows it: a string id as itself, another value as its JSON text.
fn shown(key: &str) -> String {
    match json::parse(key.as_bytes()) {
        Ok(json::Value::String(ref s)) => s.to_string_lossy(),
        _ => key.to_owned(),
    }
}
