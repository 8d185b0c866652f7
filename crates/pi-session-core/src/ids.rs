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

/// Entry ids a caller reserves by name follow the session ids' pattern (upstream's rule).
pub fn is_valid_entry_id(id: &str) -> bool {
    is_valid_session_id(id)
}

/// `reserveEntryId(id)`'s check of the form: `INVALID_ENTRY_ID` unless `id` is a string (`None`:
/// it is not) of the pattern; the message shows the value as `shown` spells it.
pub fn check_entry_id(id: Option<&str>, shown: &str) -> crate::Result<()> {
    if id.is_some_and(is_valid_entry_id) {
        return Ok(());
    }
    Err(crate::Error::new(
        crate::ErrorCode::InvalidEntryId,
        format!("Session entry id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character, got {shown}"),
    ))
}

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

/// How many random draws a fresh entry id gets before it is a whole UUID.
const ENTRY_ID_TRIES: usize = 100;

/// A fresh entry id: 8 lower-case hex chars of fresh randomness (as the first 8 of a random v4
/// UUID), drawn again while `taken` says so, up to [`ENTRY_ID_TRIES`] times; after that a whole
/// UUID (what the reference does, so ids stay unique in huge sessions). The one rule for entry
/// ids: JS draws from [`random_entry_ids`] and, when the session has the one it drew, asks for
/// this.
pub fn entry_id(mut taken: impl FnMut(&str) -> bool) -> String {
    for _ in 0..ENTRY_ID_TRIES {
        let id = random_entry_ids(1);
        if !taken(&id) {
            return id;
        }
    }
    uuid::Uuid::new_v4().hyphenated().to_string()
}

/// `count` random entry ids of 8 lower-case hex chars, one after the other, from one draw of the
/// system's randomness; none is checked against a session (an append refuses a taken one).
pub fn random_entry_ids(count: usize) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut bytes = vec![0u8; count * 4];
    if getrandom::fill(&mut bytes).is_err() {
        // As the UUIDs of the session ids would, had the system's randomness failed here alone.
        for chunk in bytes.chunks_mut(4) {
            chunk.copy_from_slice(&uuid::Uuid::new_v4().as_bytes()[..4]);
        }
    }
    let mut out = String::with_capacity(count * 8);
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
    out
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
        let mut tries = 0;
        let late = entry_id(|_| {
            tries += 1;
            tries < 100
        });
        assert_eq!(late.len(), 8, "the 100th draw is still a short id");
    }

    #[test]
    fn random_entry_ids_come_eight_hex_chars_each_and_differ() {
        let ids = random_entry_ids(64);
        assert_eq!(ids.len(), 64 * 8);
        assert!(ids
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)));
        let distinct: std::collections::HashSet<&str> =
            (0..64).map(|i| &ids[i * 8..i * 8 + 8]).collect();
        assert!(distinct.len() > 60, "random ids barely repeat");
    }

    #[test]
    fn a_named_entry_id_must_be_a_string_of_the_session_id_pattern() {
        assert!(check_entry_id(Some("abc-1.x_Y"), "x").is_ok());
        for bad in [Some(""), Some("-a"), Some("a b"), Some("ä"), None] {
            let e = check_entry_id(bad, "\"shown\"").unwrap_err();
            assert_eq!(e.code.as_str(), "INVALID_ENTRY_ID");
            assert!(e.message.ends_with(", got \"shown\""), "{}", e.message);
        }
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
