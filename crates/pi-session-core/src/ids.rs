//! Session ids (UUIDv7), entry ids (8 hex chars) and their validation.

use std::sync::Mutex;

/// `^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`, ASCII only, as the reference checks custom ids.
pub fn is_valid_session_id(id: &str) -> bool {
    let b = id.as_bytes();
    let edge = |c: u8| c.is_ascii_alphanumeric();
    let inner = |c: u8| c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || c == b'-';
    match b {
        [] => false,
        [only] => edge(*only),
        [first, mid @ .., last] => edge(*first) && edge(*last) && mid.iter().all(|c| inner(*c)),
    }
}

pub const INVALID_SESSION_ID_MESSAGE: &str = "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character";

/// `assertValidSessionId(id)`: `INVALID_SESSION_ID` with the reference's message unless `id` is a
/// valid custom session id ([`is_valid_session_id`]).
pub fn check_session_id(id: &str) -> crate::Result<()> {
    if is_valid_session_id(id) {
        Ok(())
    } else {
        Err(crate::Error::new(
            crate::ErrorCode::InvalidSessionId,
            INVALID_SESSION_ID_MESSAGE,
        ))
    }
}

/// A fresh entry id: the first 8 hex chars of a random v4 UUID, retried against `taken` up to 100
/// times; after that a whole UUID (what the reference does, so ids stay unique in huge sessions).
pub fn entry_id(mut taken: impl FnMut(&str) -> bool) -> String {
    for _ in 0..100 {
        let u = uuid::Uuid::new_v4();
        let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
        let id = &u.hyphenated().encode_lower(&mut buf)[..8];
        if !taken(id) {
            return id.to_owned();
        }
    }
    uuid::Uuid::new_v4().hyphenated().to_string()
}

struct V7State {
    last_ms: u64,
    sequence: Option<u64>,
}

static V7: Mutex<V7State> = Mutex::new(V7State {
    last_ms: 0,
    sequence: None,
});

const MAX_SEQUENCE: u64 = (1 << 41) - 1;

/// A UUIDv7 laid out like the reference's generator: 48-bit ms clock that never goes backwards in
/// this process, then a 41-bit counter (randomly seeded once, +1 per call) in `rand_a` and the top of
/// `rand_b`, the rest random. Ids made by one process are therefore strictly increasing.
pub fn session_uuid_v7(now_ms: u64) -> String {
    let mut st = V7.lock().unwrap_or_else(|e| e.into_inner());
    let ms = now_ms.max(st.last_ms);
    st.last_ms = ms;
    let mut bytes = *uuid::Uuid::new_v4().as_bytes();
    let seq = match st.sequence {
        None => {
            ((bytes[1] as u64) << 32)
                | ((bytes[2] as u64) << 24)
                | ((bytes[3] as u64) << 16)
                | ((bytes[4] as u64) << 8)
                | bytes[5] as u64
        }
        // Wrapping instead of failing: 2^41 ids in one process cannot happen in practice.
        Some(s) => (s + 1) & MAX_SEQUENCE,
    };
    st.sequence = Some(seq);
    drop(st);
    for (i, b) in bytes.iter_mut().take(6).enumerate() {
        *b = ((ms >> ((5 - i) * 8)) & 0xff) as u8;
    }
    bytes[6] = 0x70 | ((seq >> 37) & 0x0f) as u8;
    bytes[7] = ((seq >> 29) & 0xff) as u8;
    bytes[8] = 0x80 | ((seq >> 23) & 0x3f) as u8;
    bytes[9] = ((seq >> 15) & 0xff) as u8;
    bytes[10] = ((seq >> 7) & 0xff) as u8;
    bytes[11] = (((seq & 0x7f) << 1) as u8) | (bytes[11] & 0x01);
    uuid::Uuid::from_bytes(bytes).hyphenated().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_follow_the_reference_pattern() {
        for ok in ["1", "a", "abc-DEF_1.2", "019abc"] {
            assert!(is_valid_session_id(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", ".a", "a b", "ä", "a/b", "_"] {
            assert!(!is_valid_session_id(bad), "{bad}");
        }
    }

    #[test]
    fn an_invalid_session_id_is_refused_with_the_reference_message() {
        assert!(check_session_id("abc-1").is_ok());
        let e = check_session_id("a b").unwrap_err();
        assert_eq!(e.code.as_str(), "INVALID_SESSION_ID");
        assert_eq!(e.message, INVALID_SESSION_ID_MESSAGE);
    }

    #[test]
    fn entry_ids_are_eight_lower_hex_and_avoid_taken_ones() {
        let id = entry_id(|_| false);
        assert_eq!(id.len(), 8);
        assert!(id
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)));
        let full = entry_id(|_| true);
        assert_eq!(full.len(), 36);
    }

    #[test]
    fn uuid_v7_ids_are_version_seven_and_strictly_increasing() {
        let mut prev = String::new();
        for _ in 0..1000 {
            let id = session_uuid_v7(1_700_000_000_000);
            assert_eq!(&id[14..15], "7");
            assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"));
            assert!(id > prev, "{id} <= {prev}");
            prev = id;
        }
        // The clock never goes backwards within the process.
        let later = session_uuid_v7(1);
        assert!(later > prev);
    }
}
