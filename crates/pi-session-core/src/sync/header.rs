//! The header line of a session file: its id, cwd and parentSession, and the file with those
//! paths in the other side's spelling (see `pathmap`).

use super::PathMap;
use crate::json::{self, JsStr, Value};

/// What sync reads of a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub id: String,
    pub cwd: Option<String>,
    /// The file a fork was made from, when it says.
    pub parent: Option<String>,
}

/// The header of a session file; `None` when the first line is no session header.
pub fn read(bytes: &[u8]) -> Option<Head> {
    let v = parse(first_line(bytes).0)?;
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(JsStr::to_string_lossy);
    Some(Head {
        id: s("id")?,
        cwd: s("cwd"),
        parent: s("parentSession"),
    })
}

/// The first line without its line end, and the rest after the line end.
fn first_line(bytes: &[u8]) -> (&[u8], &[u8]) {
    let end = memchr::memchr(b'\n', bytes).unwrap_or(bytes.len());
    let line = &bytes[..end];
    let rest = &bytes[(end + 1).min(bytes.len())..];
    (line.strip_suffix(b"\r").unwrap_or(line), rest)
}

fn parse(line: &[u8]) -> Option<Value> {
    let v = json::parse(line).ok()?;
    let is_session = v
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.eq_str("session"));
    (is_session && v.as_object().is_some()).then_some(v)
}

/// `bytes` with the header's `cwd` set to `cwd` and its (string) `parentSession` to `parent`: the
/// very same bytes when both already are (or there is no header), else the header line written
/// anew (with a `\n`) and the rest unchanged.
pub fn with_paths(bytes: &[u8], cwd: &str, parent: Option<&str>) -> Vec<u8> {
    let (line, rest) = first_line(bytes);
    let Some(mut v) = parse(line) else {
        return bytes.to_vec();
    };
    let is = |v: &Value, k: &str, want: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .is_some_and(|c| c.eq_str(want))
    };
    let same_parent = parent.is_none_or(|p| is(&v, "parentSession", p));
    if is(&v, "cwd", cwd) && same_parent {
        return bytes.to_vec();
    }
    if let Some(o) = v.as_object_mut() {
        o.insert(JsStr::from_str("cwd"), Value::from(cwd));
        if let Some(p) = parent {
            o.insert(JsStr::from_str("parentSession"), Value::from(p));
        }
    }
    let mut out = json::to_json(&v).into_bytes();
    out.push(b'\n');
    out.extend_from_slice(rest);
    out
}

/// A local file's bytes as the remote holds them: `cwd` and `parentSession` through the map.
pub fn to_remote(bytes: &[u8], map: &PathMap) -> Vec<u8> {
    let Some(Head {
        cwd: Some(cwd),
        parent,
        ..
    }) = read(bytes)
    else {
        return bytes.to_vec();
    };
    let rc = map.to_remote(&cwd);
    let parent = parent.map(|p| map.parent_to_remote(&p, &cwd, &rc));
    with_paths(bytes, &rc, parent.as_deref())
}

/// A remote file's bytes as this machine holds them, its project being `local_cwd` here.
pub fn to_local(bytes: &[u8], map: &PathMap, local_cwd: &str) -> Vec<u8> {
    let Some(h) = read(bytes) else {
        return bytes.to_vec();
    };
    let parent = match (&h.parent, &h.cwd) {
        (Some(p), Some(rc)) => Some(map.parent_to_local(p, rc, local_cwd)),
        _ => None,
    };
    with_paths(bytes, local_cwd, parent.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cwd_is_rewritten_in_the_header_only_and_a_same_cwd_keeps_the_bytes() {
        let f =
            b"{\"type\":\"session\",\"id\":\"s\",\"cwd\":\"/a\"}\n{\"id\":\"e\",\"cwd\":\"/a\"}\n";
        let head = read(f).unwrap();
        assert_eq!((head.id.as_str(), head.cwd.as_deref()), ("s", Some("/a")));
        assert_eq!(with_paths(f, "/a", None), f.to_vec());
        let moved = with_paths(f, "/b", None);
        assert_eq!(
            moved,
            b"{\"type\":\"session\",\"id\":\"s\",\"cwd\":\"/b\"}\n{\"id\":\"e\",\"cwd\":\"/a\"}\n"
                .to_vec()
        );
        assert_eq!(with_paths(&moved, "/a", None), f.to_vec());
    }

    #[test]
    fn a_forks_parent_session_travels_with_the_map_and_comes_back_as_it_was() {
        let map = PathMap::parse("/Users/ana = /home/ana\n").unwrap();
        let here = concat!(
            r#"{"type":"session","id":"s","cwd":"/home/ana/src/app","#,
            r#""parentSession":"/home/ana/.pi/agent/sessions/--home-ana-src-app--/p.jsonl"}"#,
            "\n{\"id\":\"e\"}\n"
        );
        let remote = to_remote(here.as_bytes(), &map);
        let h = read(&remote).unwrap();
        assert_eq!(h.cwd.as_deref(), Some("/Users/ana/src/app"));
        assert_eq!(
            h.parent.as_deref(),
            Some("/Users/ana/.pi/agent/sessions/--Users-ana-src-app--/p.jsonl")
        );
        assert_eq!(
            to_local(&remote, &map, "/home/ana/src/app"),
            here.as_bytes()
        );
    }
}
