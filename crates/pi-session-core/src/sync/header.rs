//! The header line of a session file: its id and cwd, and the file with another cwd.

use crate::json::{self, JsStr, Value};

/// The id and cwd of a session file's header; `None` when the first line is no session header.
pub fn read(bytes: &[u8]) -> Option<(String, Option<String>)> {
    let v = parse(first_line(bytes).0)?;
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(JsStr::to_string_lossy);
    Some((s("id")?, s("cwd")))
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

/// `bytes` with the header's `cwd` set to `cwd`: the very same bytes when it is already that (or
/// there is no header), else the header line written anew (with a `\n`) and the rest unchanged.
pub fn with_cwd(bytes: &[u8], cwd: &str) -> Vec<u8> {
    let (line, rest) = first_line(bytes);
    let Some(mut v) = parse(line) else {
        return bytes.to_vec();
    };
    let same = v
        .get("cwd")
        .and_then(Value::as_str)
        .is_some_and(|c| c.eq_str(cwd));
    if same {
        return bytes.to_vec();
    }
    if let Some(o) = v.as_object_mut() {
        o.insert(JsStr::from_str("cwd"), Value::from(cwd));
    }
    let mut out = json::to_json(&v).into_bytes();
    out.push(b'\n');
    out.extend_from_slice(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cwd_is_rewritten_in_the_header_only_and_a_same_cwd_keeps_the_bytes() {
        let f =
            b"{\"type\":\"session\",\"id\":\"s\",\"cwd\":\"/a\"}\n{\"id\":\"e\",\"cwd\":\"/a\"}\n";
        assert_eq!(read(f), Some(("s".into(), Some("/a".into()))));
        assert_eq!(with_cwd(f, "/a"), f.to_vec());
        let moved = with_cwd(f, "/b");
        assert_eq!(
            moved,
            b"{\"type\":\"session\",\"id\":\"s\",\"cwd\":\"/b\"}\n{\"id\":\"e\",\"cwd\":\"/a\"}\n"
                .to_vec()
        );
        assert_eq!(with_cwd(&moved, "/a"), f.to_vec());
    }
}
