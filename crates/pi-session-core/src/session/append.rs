//! Appending entries: id checks (taken, reserved), the new leaf, persisting per the lazy-write
//! rules, and the exact rollback of memory when the write fails. Long lines are left in the file.

use super::persist::{Held, Urgency};
use super::Session;
use crate::error::{Error, ErrorCode, Result};
use crate::fsio;
use crate::ids;
use crate::record::{self, Kind};
use crate::store::Leaf;

/// How [`Session::append_with`] appends: naming a reserved id (consumed once the append
/// succeeded, kept if it fails), and durably (written at once, even before the first user or
/// assistant message, and fsynced, as `flush()` would make it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AppendHow {
    pub reserved: bool,
    pub durable: bool,
}

impl Session {
    /// A fresh entry id that is not in the index.
    pub fn next_entry_id(&self) -> String {
        ids::entry_id(|id| {
            self.ids
                .index
                .slot_of
                .contains_key(&*record::string_key(id))
        })
    }

    /// Append one entry line (compact JSON text of an object, as `JSON.stringify` writes it, without
    /// newline) as the new leaf, persisting it per the
    /// lazy-write rules. On a failed write, memory is restored exactly (entry, index, leaf) and the
    /// error is returned.
    pub fn append(&mut self, line: &[u8]) -> Result<u32> {
        self.append_record(line, false, AppendHow::default())
    }

    /// [`Session::append`] (or [`Session::append_skeleton`]) of an entry that names a reserved
    /// id, or that must be durable at once (see [`AppendHow`]).
    pub fn append_with(&mut self, line: &[u8], skeleton: bool, how: AppendHow) -> Result<u32> {
        if skeleton {
            self.check_skeletons(true)?;
        }
        self.append_record(line, skeleton, how)
    }

    /// `reserveEntryId()`: a new id that no entry has and that is not reserved yet, now reserved
    /// for an append that names it (see [`crate::reserve`]).
    pub fn reserve_entry_id(&mut self) -> String {
        let index = &self.ids.index;
        self.reserved.reserve(|key| index.slot_of.contains_key(key))
    }

    /// `reserveEntryId(id)` of an id the caller chose, by key (see [`Reservations::reserve_named`]).
    ///
    /// [`Reservations::reserve_named`]: crate::reserve::Reservations::reserve_named
    pub fn reserve_named_entry_id(&mut self, key: &str) -> Result<()> {
        let in_session = self.ids.has(key);
        self.reserved.reserve_named(key, in_session)
    }

    /// `reserveEntryId(id)` of an id the caller chose, checked first: `key` is its key (`None`:
    /// no value of it can be an entry id's), `shown` how a refusal's message shows the value.
    pub fn reserve_entry_id_named(&mut self, key: Option<&str>, shown: &str) -> Result<()> {
        let id = key.and_then(|k| match crate::json::parse(k.as_bytes()) {
            Ok(crate::json::Value::String(ref s)) => Some(s.to_string_lossy()),
            _ => None,
        });
        crate::ids::check_entry_id(id.as_deref(), shown)?;
        self.reserve_named_entry_id(key.unwrap_or_default())
    }

    /// An entry id that no entry has and none reserved (the one rule of [`crate::ids::entry_id`]),
    /// for an append whose first random id was taken.
    pub fn fresh_entry_id(&self) -> String {
        crate::ids::entry_id(|id| {
            let key = record::string_key(id);
            self.ids.has(&key) || self.reserved.contains(&key)
        })
    }

    /// `releaseEntryId(id)` by key; false when the id was not reserved.
    pub fn release_entry_id(&mut self, key: &str) -> bool {
        self.reserved.release(key)
    }

    /// [`Session::append`] for a session that never writes (`inMemory`), given only a skeleton of
    /// the entry: a JSON object with the members the structure reads (see `record::Meta`), while
    /// JavaScript keeps the entry itself. The reference never serializes such an entry, so it
    /// accepts values `JSON.stringify` refuses (BigInt, cycles), and so does this. The skeleton
    /// is never handed out as the entry, nor written: both are refused as internal errors.
    pub fn append_skeleton(&mut self, line: &[u8]) -> Result<u32> {
        self.check_skeletons(true)?;
        self.append_record(line, true, AppendHow::default())
    }

    fn append_record(&mut self, line: &[u8], skeleton: bool, how: AppendHow) -> Result<u32> {
        let mut meta = record::read_meta_trusted(line)
            .ok_or_else(|| Error::new(ErrorCode::InvalidArgument, "entry is not a JSON object"))?;
        meta.skeleton = skeleton;
        // New entries must not shadow an existing id (callers pick a fresh one and retry), nor
        // take a reserved one unless they name it.
        let in_session = self.ids.has(&meta.id);
        if how.reserved {
            self.reserved.check(&meta.id, in_session)?;
        } else if in_session || self.reserved.contains(&meta.id) {
            return Err(Error::new(
                ErrorCode::IdTaken,
                format!("Entry id {} is already in use", meta.id),
            ));
        }
        let id = meta.id.clone();
        let is_label = meta.kind == Kind::Label;
        let (target, label_truthy) = (meta.target.clone(), meta.label_truthy);
        let text_len = self.records.text.len();
        // A long line appended to the file (flushed already) is read back from there when needed
        // (see `Tuning::backed_line_bytes`).
        let to_file = self.persist
            && self.flushed
            && self.file.is_some()
            && line.len() >= self.tuning.backed_line_bytes
            && cfg!(unix);
        let pos = if to_file {
            self.push_meta(meta)
        } else {
            self.push_record(line, meta)
        };
        let (slot, prev_index) = self.ids.index.set(&id, pos);
        self.ids.rec_slot[pos as usize] = slot;
        let prev_leaf = std::mem::replace(&mut self.ids.leaf, Leaf::Slot(slot));
        // `line` is what was just pushed: written from the caller's bytes, not copied back out.
        let urgency = if how.durable {
            Urgency::Durable
        } else {
            Urgency::Lazy
        };
        let persisted = self.persist_line(line, urgency, Held::LastRecord);
        if persisted.is_ok() && to_file && !self.back_by_file(pos, line) {
            self.records.keep_in_text(pos, line);
        }
        if let Err(e) = persisted {
            self.records.pop();
            self.ids.shrink();
            self.records.text.truncate(text_len);
            self.ids.index.undo(&id, prev_index);
            self.ids.leaf = prev_leaf;
            return Err(e);
        }
        self.ids.resolve_parents(&self.records.recs, pos as usize);
        if how.reserved {
            self.reserved.release(&id);
        }
        if is_label {
            self.ids.apply_label(&target, label_truthy, pos);
        }
        Ok(pos)
    }

    /// Point the record at `pos` to `line`, just appended by the appender, in the session file.
    /// Without a `reader`, the appender's descriptor becomes it (no descriptor of our own). False
    /// when that cannot be done safely (the appender's file is not the one `reader` reads, or its
    /// descriptor is write-only): the caller keeps the line in memory then.
    fn back_by_file(&mut self, pos: u32, line: &[u8]) -> bool {
        let Some((opened, written, end)) = self.appender.last_write_end() else {
            return false;
        };
        let same = match self.backed {
            Some((checked, same)) if checked == opened => same,
            _ => {
                let same = match (&self.records.reader, written, &self.file) {
                    (Some((_, r)), Some(w), _) => fsio::same_file(r, &w),
                    // The descriptor written through becomes the one read from.
                    (None, Some(w), Some(path)) => {
                        self.records.reader = Some((path.clone(), w));
                        true
                    }
                    _ => false,
                };
                self.backed = Some((opened, same));
                same
            }
        };
        if !same {
            return false;
        }
        let Some(start) = end.checked_sub(line.len() as u64 + 1) else {
            return false;
        };
        self.records.point_into_file(pos, start as usize, line);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::temp_dir;

    fn user(id: &str, parent: &str) -> Vec<u8> {
        format!(r#"{{"type":"message","id":"{id}","parentId":{parent},"message":{{"role":"user","content":"hi"}}}}"#).into_bytes()
    }

    #[test]
    fn a_failed_write_leaves_memory_exactly_as_it_was() {
        let dir = temp_dir("rollback");
        let sessions = dir.join("sessions");
        let mut s =
            Session::blank("/w".into(), sessions.to_string_lossy().into_owned(), true).unwrap();
        s.set_restore_missing(false);
        s.new_session(None, None).unwrap();
        s.append(&user("a", "null")).unwrap();
        assert!(s.is_flushed(), "the first user message writes the file");
        let (count, leaf, entries) = (s.record_count(), s.leaf(), s.entry_count());
        std::fs::remove_dir_all(&sessions).unwrap();
        assert!(s.append(&user("b", "\"a\"")).is_err());
        assert_eq!(
            (s.record_count(), s.leaf(), s.entry_count()),
            (count, leaf, entries)
        );
        assert_eq!(s.lookup("\"b\""), None);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_id_in_use_or_reserved_is_refused() {
        let mut s = Session::blank("/w".into(), String::new(), false).unwrap();
        s.new_session(None, None).unwrap();
        s.append(&user("a", "null")).unwrap();
        let err = s.append(&user("a", "null")).unwrap_err();
        assert_eq!(err.code, ErrorCode::IdTaken);
        let reserved = s.reserve_entry_id();
        let line = user(&reserved, "\"a\"");
        assert_eq!(s.append(&line).unwrap_err().code, ErrorCode::IdTaken);
        let how = AppendHow {
            reserved: true,
            durable: false,
        };
        let pos = s.append_with(&line, false, how).unwrap();
        assert_eq!(s.leaf_pos(), Some(pos));
        assert!(
            !s.release_entry_id(&record::string_key(&reserved)),
            "consumed"
        );
    }

    #[test]
    #[cfg(unix)]
    fn an_appended_line_as_long_as_the_backed_threshold_is_read_back_from_the_file() {
        let dir = temp_dir("backed");
        let long = "y".repeat(16 * 1024);
        let line = format!(
            r#"{{"type":"message","id":"m","parentId":"a","message":{{"role":"assistant","content":"{long}"}}}}"#
        );
        let held = |backed_line_bytes: usize| {
            let config = crate::Config {
                tuning: crate::Tuning {
                    backed_line_bytes,
                    ..crate::Tuning::PRODUCT
                },
                ..crate::Config::default()
            };
            let dir = dir.to_string_lossy().into_owned();
            let mut s = Session::with_config("/w".into(), dir, true, config).unwrap();
            s.new_session(None, None).unwrap();
            s.append(&user("a", "null")).unwrap();
            let before = s.memory_bytes();
            let pos = s.append(line.as_bytes()).unwrap();
            assert_eq!(*s.line(pos).unwrap(), *line.as_bytes());
            s.memory_bytes() - before
        };
        assert!(held(line.len() + 1) > long.len());
        assert!(held(line.len()) < long.len());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
