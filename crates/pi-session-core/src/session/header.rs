//! A new session: its identity (a custom id, checked, or a UUIDv7; the timestamp), its file name,
//! and its header line, exactly as the reference writes them.

use std::path::{Path, PathBuf};

use super::Session;
use crate::error::Result;
use crate::ids;
use crate::json;
use crate::paths;
use crate::record;
use crate::timefmt;

/// What `newSession` produced.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub id: String,
    pub timestamp: String,
    pub file: Option<PathBuf>,
    /// The header line, as the session holds it (the header object JS hands out is its parse).
    pub header: String,
}

impl Session {
    /// `newSession(options)`: `custom_id` is validated first; `parent_session_json` is the JSON of
    /// `options.parentSession` (omitted when undefined). Never touches disk.
    pub fn new_session(
        &mut self,
        custom_id: Option<&str>,
        parent_session_json: Option<&str>,
    ) -> Result<NewSession> {
        let Identity { id, timestamp } = new_identity(custom_id)?;
        let line = header_line(&id, &timestamp, &self.cwd, parent_session_json);
        self.reset_state();
        let meta = record::read_meta(line.as_bytes()).expect("header line is valid JSON");
        self.push_record(line.as_bytes(), meta);
        self.session_id = id.clone();
        self.flushed = false;
        if self.persist {
            self.file = Some(session_file_path(
                Path::new(&self.session_dir),
                &timestamp,
                &id,
            ));
        }
        self.guard.follow(self.file.as_deref());
        Ok(NewSession {
            id,
            timestamp,
            file: self.file.clone(),
            header: line,
        })
    }
}

/// Who a new session is: its id and its creation time (ISO, as the header's `timestamp`).
pub(super) struct Identity {
    pub id: String,
    pub timestamp: String,
}

/// The identity of a new session (`newSession`, `forkFrom`, `createBranchedSession`): `custom_id`
/// when given, checked first (`INVALID_SESSION_ID`), else a UUIDv7 of the creation time.
pub(super) fn new_identity(custom_id: Option<&str>) -> Result<Identity> {
    if let Some(id) = custom_id {
        ids::check_session_id(id)?;
    }
    let (timestamp, ms) = timefmt::now_iso();
    let id = custom_id
        .map(str::to_owned)
        .unwrap_or_else(|| ids::session_uuid_v7(ms));
    Ok(Identity { id, timestamp })
}

/// A new session's file in `dir`: `<timestamp with : and . as ->_<id>.jsonl`, joined onto the
/// dir as the reference's `path.join` does (see [`paths::join`]).
pub(super) fn session_file_path(dir: &Path, timestamp: &str, id: &str) -> PathBuf {
    paths::join_in(
        dir,
        &format!("{}_{}.jsonl", timefmt::file_timestamp(timestamp), id),
    )
}

/// The header line exactly as the reference serializes it: `type, version, id, timestamp, cwd,
/// parentSession` (the last omitted when undefined).
pub fn header_line(
    id: &str,
    timestamp: &str,
    cwd: &str,
    parent_session_json: Option<&str>,
) -> String {
    let mut s = String::with_capacity(96 + cwd.len());
    s.push_str("{\"type\":\"session\",\"version\":3,\"id\":");
    s.push_str(&json::string_to_json(id));
    s.push_str(",\"timestamp\":");
    s.push_str(&json::string_to_json(timestamp));
    s.push_str(",\"cwd\":");
    s.push_str(&json::string_to_json(cwd));
    if let Some(p) = parent_session_json {
        s.push_str(",\"parentSession\":");
        s.push_str(p);
    }
    s.push('}');
    s
}

/// The header's `id` when it is a string, else `""`.
pub(super) fn header_id_string(line: &[u8]) -> String {
    match json::parse(line) {
        Ok(v) => match v.get("id") {
            Some(json::Value::String(s)) => s.to_string_lossy(),
            _ => String::new(),
        },
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_session_file_is_named_by_its_timestamp_and_id() {
        let path = session_file_path(
            Path::new("./sessions//x"),
            "2025-03-01T10:20:30.456Z",
            "abc",
        );
        assert_eq!(
            path,
            PathBuf::from("sessions/x/2025-03-01T10-20-30-456Z_abc.jsonl")
        );
    }

    #[test]
    fn a_new_identity_takes_a_valid_custom_id_and_refuses_an_invalid_one() {
        assert_eq!(new_identity(Some("my-id.1")).unwrap().id, "my-id.1");
        let err = new_identity(Some("-bad")).err().expect("refused");
        assert_eq!(err.code, crate::error::ErrorCode::InvalidSessionId);
        let fresh = new_identity(None).unwrap();
        assert!(ids::is_valid_session_id(&fresh.id));
        assert_eq!(fresh.id.len(), 36, "a UUID");
        assert!(timefmt::parse_iso_strict(&fresh.timestamp).is_some());
    }

    #[test]
    fn the_header_line_has_the_members_in_the_reference_order() {
        assert_eq!(
            header_line("i", "t", "/w \"q\"", None),
            r#"{"type":"session","version":3,"id":"i","timestamp":"t","cwd":"/w \"q\""}"#
        );
        assert_eq!(
            header_line("i", "t", "/w", Some("\"/old.jsonl\"")),
            r#"{"type":"session","version":3,"id":"i","timestamp":"t","cwd":"/w","parentSession":"/old.jsonl"}"#
        );
        assert_eq!(header_id_string(br#"{"type":"session","id":7}"#), "");
        assert_eq!(header_id_string(br#"{"type":"session","id":"x"}"#), "x");
    }
}
