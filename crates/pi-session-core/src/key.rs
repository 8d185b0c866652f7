//! [`Key`]: an immutable string of 16 bytes that holds up to 15 bytes inline.
//!
//! Every record keeps its id and parent id as keys (see `record.rs`), and the id index a third
//! copy. Ids are 8 hex digits, `"abcd1234"` with quotes: as `Box<str>` each was a 32-byte heap
//! block on top of the 16-byte handle, about 100 bytes per record (1.4 MB for a 14,000-entry
//! session). Inline, they cost nothing beyond the handle; longer keys (UUIDs of old files,
//! hand-edited ids) still go to the heap.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// Bytes 0..15 hold an inline string and byte 15 its length with the top bit set; a heap string
/// has its pointer in bytes 0..8 and its length, little-endian, in bytes 8..16 (so byte 15 is 0:
/// lengths stay below 2^56).
pub struct Key {
    bytes: [u8; 16],
}

const INLINE_MAX: usize = 15;
const INLINE_TAG: u8 = 0x80;

impl Key {
    fn is_inline(&self) -> bool {
        self.bytes[15] & INLINE_TAG != 0
    }

    fn heap_parts(&self) -> (*mut u8, usize) {
        let mut addr = [0u8; 8];
        addr.copy_from_slice(&self.bytes[..8]);
        let mut len = [0u8; 8];
        len.copy_from_slice(&self.bytes[8..]);
        (
            std::ptr::with_exposed_provenance_mut(usize::from_ne_bytes(addr)),
            u64::from_le_bytes(len) as usize,
        )
    }

    pub fn as_str(&self) -> &str {
        if self.is_inline() {
            let len = usize::from(self.bytes[15] & !INLINE_TAG);
            // SAFETY: inline keys are built from a &str of `len` bytes (see `From<&str>`).
            unsafe { std::str::from_utf8_unchecked(&self.bytes[..len]) }
        } else {
            let (ptr, len) = self.heap_parts();
            // SAFETY: a heap key owns the `Box<str>` these parts came from (see `From<&str>`).
            unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(ptr, len)) }
        }
    }
}

impl From<&str> for Key {
    fn from(s: &str) -> Key {
        let mut bytes = [0u8; 16];
        if s.len() <= INLINE_MAX {
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            bytes[15] = INLINE_TAG | s.len() as u8;
        } else {
            let len = s.len() as u64;
            assert!(len < 1 << 56, "key too long");
            let ptr = Box::into_raw(Box::<str>::from(s)).cast::<u8>();
            bytes[..8].copy_from_slice(&ptr.expose_provenance().to_ne_bytes());
            bytes[8..].copy_from_slice(&len.to_le_bytes());
        }
        Key { bytes }
    }
}

impl From<String> for Key {
    fn from(s: String) -> Key {
        Key::from(s.as_str())
    }
}

impl From<std::borrow::Cow<'_, str>> for Key {
    fn from(s: std::borrow::Cow<'_, str>) -> Key {
        Key::from(&*s)
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        if !self.is_inline() {
            let (ptr, len) = self.heap_parts();
            // SAFETY: the parts of the `Box<str>` made in `From<&str>`, dropped once.
            unsafe {
                drop(Box::from_raw(
                    std::ptr::slice_from_raw_parts_mut(ptr, len) as *mut str
                ))
            }
        }
    }
}

impl Clone for Key {
    fn clone(&self) -> Key {
        if self.is_inline() {
            Key { bytes: self.bytes }
        } else {
            Key::from(self.as_str())
        }
    }
}

impl Default for Key {
    fn default() -> Key {
        Key::from("")
    }
}

impl Deref for Key {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Key {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Key {}

/// Hashes as the `str` does, so maps keyed by `Key` can be looked up with a `&str`.
impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

// SAFETY: a key owns its bytes (inline or one heap block) and never mutates them after creation,
// like `Box<str>`.
unsafe impl Send for Key {}
// SAFETY: as for `Send`: shared access only ever reads the immutable bytes.
unsafe impl Sync for Key {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn round_trips_inline_and_heap() {
        let long = "\"01968adc-1000-7eb0-b687-910d538c39b8\"";
        for s in [
            "",
            "5",
            "\"abcd1234\"",
            "123456789012345",
            "1234567890123456",
            long,
            "é\"ü",
        ] {
            let k = Key::from(s);
            assert_eq!(k.as_str(), s);
            assert_eq!(k.is_inline(), s.len() <= INLINE_MAX, "{s}");
            let c = k.clone();
            drop(k);
            assert_eq!(&*c, s);
            assert_eq!(c, Key::from(s.to_owned()));
            assert_eq!(format!("{c:?}"), format!("{s:?}"));
        }
        assert_eq!(std::mem::size_of::<Key>(), 16);
        assert_eq!(Key::default().as_str(), "");
    }

    #[test]
    fn works_as_a_map_key_looked_up_by_str() {
        let mut m: HashMap<Key, u32> = HashMap::new();
        let long = "x".repeat(100);
        m.insert(Key::from("\"a\""), 1);
        m.insert(Key::from(long.as_str()), 2);
        assert_eq!(m.get("\"a\""), Some(&1));
        assert_eq!(m.get(long.as_str()), Some(&2));
        assert_eq!(m.get("\"b\""), None);
    }
}
