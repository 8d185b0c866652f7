//! A non-validating member scanner for JSON text we know is valid (it came from
//! `JSON.stringify`): finds top-level keys and value ranges with memchr-driven skips, several
//! times faster than the validating driver. Never use it on bytes read from disk.

use std::ops::Range;

/// Skip a string starting after its opening quote; returns the index after the closing quote.
fn skip_string(b: &[u8], mut i: usize) -> usize {
    loop {
        match memchr::memchr2(b'"', b'\\', &b[i..]) {
            Some(k) if b[i + k] == b'\\' => i += k + 2,
            Some(k) => return i + k + 1,
            None => return b.len(),
        }
    }
}

/// Skip one value starting at `i`; returns the index after it.
fn skip_value(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => skip_string(b, i + 1),
        Some(b'{') | Some(b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = skip_string(b, j + 1);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            b.len()
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']') {
                j += 1;
            }
            j
        }
    }
}

/// Visit `(raw key bytes between quotes, value range)` of a compact (no whitespace) JSON object.
/// Returns false when the text is not an object. Keys are given raw: callers compare them with
/// plain ASCII names, which have no escaped spelling in `JSON.stringify` output.
pub fn visit_members_trusted(b: &[u8], mut visit: impl FnMut(&[u8], Range<usize>)) -> bool {
    if b.first() != Some(&b'{') {
        return false;
    }
    let mut i = 1;
    while i < b.len() && b[i] == b'"' {
        let key_end = skip_string(b, i + 1);
        let key = &b[i + 1..key_end - 1];
        let start = key_end + 1; // past ':'
        let end = skip_value(b, start);
        visit(key, start..end);
        i = end + 1; // past ',' or '}'
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_members_of_stringify_output() {
        let line = br#"{"type":"message","id":"a\"b","n":-1.5e+21,"o":{"x":[1,{"y":"}"}]},"t":true,"e":{}}"#;
        let mut seen = Vec::new();
        assert!(visit_members_trusted(line, |k, r| seen.push((
            String::from_utf8_lossy(k).into_owned(),
            String::from_utf8_lossy(&line[r]).into_owned()
        ))));
        let expect = [
            ("type", "\"message\""),
            ("id", "\"a\\\"b\""),
            ("n", "-1.5e+21"),
            ("o", "{\"x\":[1,{\"y\":\"}\"}]}"),
            ("t", "true"),
            ("e", "{}"),
        ];
        assert_eq!(seen.len(), expect.len());
        for ((k, v), (ek, ev)) in seen.iter().zip(expect) {
            assert_eq!((k.as_str(), v.as_str()), (ek, ev));
        }
        assert!(!visit_members_trusted(b"[1]", |_, _| {}));
        assert!(visit_members_trusted(b"{}", |_, _| panic!("no members")));
    }
}
