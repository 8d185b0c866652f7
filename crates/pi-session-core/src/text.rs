//! The bytes of a session's in-memory lines: frozen chunks (loaded from a file, or appended and
//! then frozen) that are never changed again and can be shared, and the tail appended since.
//! A session built from another's records (`inMemory` of `[header, ...sm.getBranch()]`, which pi
//! does at every turn boundary an extension listens to) shares the other's chunks instead of
//! copying its lines: the other's tail is frozen into a chunk first, which moves no byte.

use std::ops::{Index, Range};
use std::sync::Arc;

#[derive(Debug, Clone)]
struct Chunk {
    /// Offset of its first byte.
    start: usize,
    bytes: Arc<Vec<u8>>,
    /// Made by this session (its memory is this session's to report), not shared from another.
    owned: bool,
}

/// Offsets below `tail_start` are in the chunks; the rest in `tail`. A line never spans two.
#[derive(Debug, Default)]
pub struct Text {
    chunks: Vec<Chunk>,
    tail_start: usize,
    tail: Vec<u8>,
}

impl Text {
    /// Loaded bytes (moved in, not copied).
    pub fn loaded(bytes: Vec<u8>) -> Text {
        let mut text = Text {
            tail: bytes,
            ..Text::default()
        };
        text.freeze();
        text
    }

    /// Everything `other` holds, shared (`other`'s tail is frozen for it, without a copy).
    pub fn sharing(other: &mut Text) -> Text {
        other.freeze();
        Text {
            chunks: other
                .chunks
                .iter()
                .map(|c| Chunk {
                    owned: false,
                    ..c.clone()
                })
                .collect(),
            tail_start: other.tail_start,
            tail: Vec::new(),
        }
    }

    fn freeze(&mut self) {
        if self.tail.is_empty() {
            return;
        }
        let bytes = std::mem::take(&mut self.tail);
        let len = bytes.len();
        self.chunks.push(Chunk {
            start: self.tail_start,
            bytes: Arc::new(bytes),
            owned: true,
        });
        self.tail_start += len;
    }

    pub fn len(&self) -> usize {
        self.tail_start + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes this session holds for the memory it reports (shared chunks are the other's).
    pub fn held_bytes(&self) -> usize {
        let chunks: usize = self
            .chunks
            .iter()
            .filter(|c| c.owned)
            .map(|c| c.bytes.capacity())
            .sum();
        chunks + self.tail.capacity()
    }

    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.tail.extend_from_slice(bytes);
    }

    /// Drop appended bytes past `len` (only from the tail: a rollback of the last append).
    pub fn truncate(&mut self, len: usize) {
        debug_assert!(len >= self.tail_start, "only the tail is truncated");
        self.tail.truncate(len.saturating_sub(self.tail_start));
    }

    pub fn clear(&mut self) {
        *self = Text::default();
    }
}

impl Index<Range<usize>> for Text {
    type Output = [u8];

    fn index(&self, range: Range<usize>) -> &[u8] {
        if range.start >= self.tail_start {
            return &self.tail[range.start - self.tail_start..range.end - self.tail_start];
        }
        let at = self.chunks.partition_point(|c| c.start <= range.start) - 1;
        let c = &self.chunks[at];
        &c.bytes[range.start - c.start..range.end - c.start]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_found_wherever_they_are_and_sharing_copies_nothing() {
        let mut t = Text::loaded(b"one\ntwo\n".to_vec());
        t.extend_from_slice(b"three\n");
        assert_eq!(&t[0..3], b"one");
        assert_eq!(&t[8..13], b"three");
        let shared = Text::sharing(&mut t);
        assert_eq!(shared.len(), t.len());
        assert_eq!(&shared[4..7], b"two");
        assert_eq!(&shared[8..13], b"three");
        assert!(std::ptr::eq(&shared[8..13], &t[8..13]), "the same bytes");
        assert_eq!(shared.held_bytes(), 0);
        // Both go on independently.
        t.extend_from_slice(b"four\n");
        let mut other = shared;
        other.extend_from_slice(b"FOUR\n");
        assert_eq!(&t[14..18], b"four");
        assert_eq!(&other[14..18], b"FOUR");
        t.truncate(14);
        assert_eq!(t.len(), 14);
        t.clear();
        assert!(t.is_empty());
        assert_eq!(
            &other[0..3],
            b"one",
            "a clear does not take shared bytes away"
        );
    }
}
