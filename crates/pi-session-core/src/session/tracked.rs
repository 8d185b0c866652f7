//! A value whose every mutable access counts as a change: the session's records and id index are
//! kept in one each, so the generation callers cache on follows them by construction, and a new
//! mutation site cannot forget to say so.

use std::ops::{Deref, DerefMut};

/// `T`, read freely through `Deref`; each `DerefMut` (any write, or a `&mut` method call) adds
/// one to [`Tracked::changes`]. Counting a write that turns out to change nothing is harmless:
/// a cache keyed on the count is recomputed once more.
#[derive(Debug, Default)]
pub(super) struct Tracked<T> {
    value: T,
    changes: u64,
}

impl<T> Tracked<T> {
    /// How many mutable accesses there have been (wrapping).
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// A mutable access that does not count: for changes to where data is kept that leave what it
    /// says as it was (such as sharing a text buffer with another session).
    pub fn storage_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T> Deref for Tracked<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for Tracked<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.changes = self.changes.wrapping_add(1);
        &mut self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_do_not_count_and_every_write_does() {
        let mut t = Tracked::<Vec<u32>>::default();
        assert_eq!(t.len(), 0);
        assert_eq!(t.changes(), 0);
        t.push(1);
        t[0] = 2;
        assert_eq!(t.changes(), 2);
        t.storage_mut().push(3);
        assert_eq!((t.changes(), t.len()), (2, 2));
    }
}

#[cfg(test)]
mod session_tests {
    use crate::record;
    use crate::session::Session;

    const CUSTOM: &[u8] = br#"{"type":"custom","id":"c","parentId":null,"customType":"t"}"#;

    #[test]
    fn the_generation_moves_with_every_change_and_stays_through_reads_and_flushes() {
        let mut s = Session::blank("/w".into(), String::new(), false).unwrap();
        let mut last = s.generation();
        let mut moved = |s: &Session, what: &str| {
            assert_ne!(s.generation(), last, "{what} changes the generation");
            last = s.generation();
        };
        s.new_session(None, None).unwrap();
        moved(&s, "new_session");
        s.append(CUSTOM).unwrap();
        moved(&s, "append");
        s.reset_leaf();
        moved(&s, "reset_leaf");
        s.branch(Some(&record::string_key("c")), "c").unwrap();
        moved(&s, "branch");
        s.set_leaf_key(None);
        moved(&s, "set_leaf_key");
        let before = s.generation();
        let _ = (
            s.view().context_path(),
            s.branch_from(None),
            s.flush().unwrap(),
        );
        assert!(s.branch(Some("nope"), "nope").is_err());
        assert_eq!(
            s.generation(),
            before,
            "reads, a flush and a refused branch change nothing"
        );
    }
}
