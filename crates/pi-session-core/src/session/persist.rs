//! Writing the session file: the lazy first write, appends, full rewrites, `flush()`, the
//! writer lease (exclusive mode) and restore mode (a vanished file or directory written back).

use std::path::Path;

use super::Session;
#[cfg(doc)]
use crate::config::Config;
use crate::error::Result;
use crate::fsio::{self, Durability};

/// When [`Session::persist_line`] writes its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Urgency {
    /// By the lazy-write rules, with the session's durability.
    Lazy,
    /// Now, even before the first user or assistant message, and fsynced (an append with
    /// `flush`).
    Durable,
}

/// Whether a line being written is held in memory too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Held {
    /// The line is the last record's (an append): a whole write-back already holds it.
    LastRecord,
    /// The line is written without being held (`_persist` of an arbitrary entry), or there is
    /// none.
    External,
}

impl Session {
    /// The reference's public `_persist(entry)` for an arbitrary entry JSON (not added to memory).
    pub fn persist_external(&mut self, line: &[u8]) -> Result<()> {
        self.persist_line(line, Urgency::Lazy, Held::External)
    }

    /// Restore mode (off by default, as the reference; [`Config::restore_missing`] turns it on
    /// for a new manager). On, a write that finds the session file's directory gone (an `rm -rf`
    /// of the sessions dir between two turns, a file opened in a directory never made) makes it
    /// again instead of failing with `ENOENT`, then writes the session back whole.
    ///
    /// A session file deleted while its directory stays is written back whole in either mode:
    /// the next append writes every record held and the new line, where the reference would make
    /// a file of that one line, which no reader opens again. The file written back is complete or
    /// absent (temp file, linked into place; fsynced with fsync per write) and follows the same
    /// lease rules.
    pub fn set_restore_missing(&mut self, on: bool) {
        self.restore_missing = on;
    }

    pub fn restores_missing(&self) -> bool {
        self.restore_missing
    }

    /// `_persist`: before the first write nothing happens until the session holds a user or
    /// assistant message, then the whole session is written at once; afterwards `line` is appended.
    /// [`Urgency::Durable`] (an append with `flush`): written now even before such a message,
    /// and fsynced. [`Held::LastRecord`]: `line` is the last record's (an append), not one
    /// written without being held.
    pub(super) fn persist_line(&mut self, line: &[u8], urgency: Urgency, held: Held) -> Result<()> {
        if !self.persist {
            return Ok(());
        }
        let durable = urgency == Urgency::Durable;
        let durability = if durable {
            Durability::Fsync
        } else {
            self.durability
        };
        if !self.flushed {
            let Some(file) = self.file.clone() else {
                return Ok(());
            };
            if self.records.conversation == 0 && !durable {
                return Ok(());
            }
            self.guard.before_write(&file)?;
            if self.restore_missing && fsio::ensure_parent(&file, durability)? {
                self.guard.renew(&file)?;
            }
            fsio::create_new_with(
                fsio::session_options(self.private_files),
                &file,
                &self.records.all_lines()?,
                durability,
            )?;
            self.flushed = true;
            return Ok(());
        }
        let Some(file) = self.file.clone() else {
            return Ok(());
        };
        self.guard.before_write(&file)?;
        if self.appender.reopens(&file) && self.gone(&file) {
            return self.write_back(&file, Some(line), held, durability);
        }
        self.appender.append_line(&file, line, durability)
    }

    /// The session file is gone and is to be written back: deleted from its directory, or (in
    /// restore mode) gone with it. Without restore mode a vanished directory fails the write
    /// with the reference's `ENOENT`.
    fn gone(&self, file: &Path) -> bool {
        if self.restore_missing {
            !fsio::exists(file)
        } else {
            fsio::vanished_from_its_dir(file)
        }
    }

    /// The session file is gone. Write it again whole (every record held, then `line` unless it
    /// is the last record's), making its directory first if that went too (restore mode only).
    fn write_back(
        &mut self,
        file: &Path,
        line: Option<&[u8]>,
        held: Held,
        durability: Durability,
    ) -> Result<()> {
        if self.restore_missing && fsio::ensure_parent(file, durability)? {
            self.guard.renew(file)?;
        }
        // The appender's descriptor is of the old file: the next append opens the new one, and
        // no record may be pointed into the old one by this write.
        self.appender.close();
        let count = self.records.len() - usize::from(held == Held::LastRecord);
        let extra = line.map_or(0, |l| l.len() + 1);
        let mut bytes = self.records.lines_of_first(count, extra)?;
        if let Some(line) = line {
            bytes.extend_from_slice(line);
            bytes.push(b'\n');
        }
        let mut tmp = fsio::TempFile::create(file)?;
        tmp.write_all(&bytes)?;
        tmp.link_new(file, durability).map(drop)
    }

    /// Full rewrite of the session file with every in-memory record (atomic replace).
    pub(super) fn rewrite_file(&mut self) -> Result<()> {
        if !self.persist {
            return Ok(());
        }
        match self.file.clone() {
            Some(f) => {
                self.guard.before_write(&f)?;
                fsio::replace_atomic(&f, &self.records.all_lines()?)
            }
            None => Ok(()),
        }
    }

    /// Exclusive mode (see [`crate::lock`]). On: the lease of the session file is taken at once if
    /// the file exists, else before the first write (`SESSION_LOCKED` if another process holds it;
    /// the mode stays on). Off: the lease is released.
    pub fn set_exclusive(&mut self, on: bool) -> Result<()> {
        let existing = self
            .file
            .as_deref()
            .filter(|f| self.persist && fsio::exists(f));
        self.guard.set_exclusive(on, existing)
    }

    pub fn is_exclusive(&self) -> bool {
        self.guard.is_exclusive()
    }

    /// Make the session durable now: a session not written yet (no user or assistant message
    /// so far) gets its file at once, header and every entry held, as its first write would
    /// write them; then the file is fsynced (a new file's directory too). Later appends add their
    /// line to that file, so it ends up as the lazy first write would have left it. Returns
    /// whether the session persists (false: in-memory, nothing to do). Idempotent: a second call
    /// only fsyncs again.
    pub fn flush(&mut self) -> Result<bool> {
        if !self.persist {
            return Ok(false);
        }
        let Some(file) = self.file.clone() else {
            return Ok(false);
        };
        if self.flushed && self.gone(&file) {
            self.guard.before_write(&file)?;
            self.write_back(&file, None, Held::External, Durability::Fsync)?;
        } else if self.flushed {
            fsio::fsync_file(&file)?;
        } else {
            self.guard.before_write(&file)?;
            if self.restore_missing && fsio::ensure_parent(&file, Durability::Fsync)? {
                self.guard.renew(&file)?;
            }
            fsio::create_new_with(
                fsio::session_options(self.private_files),
                &file,
                &self.records.all_lines()?,
                Durability::Fsync,
            )?;
            self.flushed = true;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::temp_dir;

    const CUSTOM: &[u8] = br#"{"type":"custom","id":"c","parentId":null,"customType":"t"}"#;
    const USER: &[u8] =
        br#"{"type":"message","id":"u","parentId":"c","message":{"role":"user","content":"x"}}"#;

    #[test]
    fn nothing_is_written_before_the_first_user_or_assistant_message() {
        let dir = temp_dir("lazy");
        let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true).unwrap();
        s.new_session(None, None).unwrap();
        let file = s.session_file().unwrap().to_path_buf();
        s.append(CUSTOM).unwrap();
        assert!(!file.exists());
        s.append(USER).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text.lines().count(), 3, "header, custom, user at once");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn flush_writes_a_session_not_yet_on_disk_as_its_first_write_would() {
        let dir = temp_dir("flush");
        let mut s = Session::blank("/w".into(), dir.to_string_lossy().into_owned(), true).unwrap();
        s.new_session(None, None).unwrap();
        s.append(CUSTOM).unwrap();
        assert!(s.flush().unwrap());
        let file = s.session_file().unwrap().to_path_buf();
        assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 2);
        s.append(USER).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 3);
        let mut memory = Session::blank("/w".into(), String::new(), false).unwrap();
        assert!(
            !memory.flush().unwrap(),
            "an in-memory session has nothing to flush"
        );
        drop(s);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
