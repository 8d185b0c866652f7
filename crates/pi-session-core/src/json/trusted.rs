//! A non-validating member scanner for JSON text we know is valid (it came from
//! `JSON.stringify`, or already validated): finds keys and value ranges with SIMD skips, several
//! times faster than the validating driver. Never use it on bytes read from disk.

use std::ops::Range;

/// Visit `(raw key bytes between quotes, value range)` of a compact (no whitespace) JSON object.
/// Returns false when the text is not an object. Keys are given raw: callers compare them with
/// plain ASCII names, which have no escaped spelling in `JSON.stringify` output.
pub fn visit_members_trusted(b: &[u8], mut visit: impl FnMut(&[u8], Range<usize>)) -> bool {
    if b.first() != Some(&b'{') {
        return false;
    }
    let mut i = 1;
    while i < b.len() && b[i] == b'"' {
        let key_end = skip_valid_string(b, i + 1).max(i + 2);
        let key = b.get(i + 1..key_end - 1).unwrap_or_default();
        let start = key_end + 1; // past ':'
        let end = skip_valid_value(b, start).max(start);
        visit(key, start..end);
        i = end + 1; // past ',' or '}'
    }
    true
}

/// Skip a string of valid JSON (after its opening quote); returns the index after the closing
/// quote. Uses the parser's SIMD scan, which is fast at the short gaps between escapes too.
pub(crate) fn skip_valid_string(b: &[u8], mut i: usize) -> usize {
    loop {
        i = super::parse::find_string_special(b, i);
        match b.get(i) {
            Some(b'\\') => i += 2,
            Some(b'"') => return i + 1,
            Some(_) => i += 1,
            None => return b.len(),
        }
    }
}

pub(crate) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Skip one value of valid JSON starting at `i` (no leading whitespace); index after it.
pub(crate) fn skip_valid_value(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => skip_valid_string(b, i + 1),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = skip_valid_string(b, j + 1);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
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
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            j
        }
    }
}

/// Visit `(raw key bytes between the quotes, value range)` of an object in text that has already
/// been validated as JSON (any whitespace). Returns false when it is not an object. A raw key
/// without a backslash equals its canonical form for ASCII names; callers canonicalize the rest.
/// Malformed input cannot make it read out of bounds, only give meaningless ranges.
pub fn visit_members_valid(b: &[u8], mut visit: impl FnMut(&[u8], Range<usize>)) -> bool {
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return false;
    }
    i = skip_ws(b, i + 1);
    while b.get(i) == Some(&b'"') {
        let key_end = skip_valid_string(b, i + 1).max(i + 2);
        let key = b.get(i + 1..key_end - 1).unwrap_or_default();
        let start = skip_ws(b, skip_ws(b, key_end) + 1);
        let end = skip_valid_value(b, start).max(start);
        visit(key, start..end.min(b.len()));
        i = skip_ws(b, skip_ws(b, end) + 1);
    }
    true
}

/// Visit the value range of each item of an array in validated JSON text. False when it is not
/// an array.
pub fn visit_items_valid(b: &[u8], mut visit: impl FnMut(Range<usize>)) -> bool {
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'[') {
        return false;
    }
    i = skip_ws(b, i + 1);
    while i < b.len() && b[i] != b']' {
        let end = skip_valid_value(b, i).max(i + 1).min(b.len());
        visit(i..end);
        i = skip_ws(b, skip_ws(b, end) + 1);
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

    #[test]
    fn valid_walkers_handle_whitespace_and_escapes() {
        let doc = b" { \"a\" : [ 1 , \"x\\\"]\" ] ,\"r\\u006fle\":\"user\", \"c\": {\"k\":null} } ";
        let mut seen = Vec::new();
        assert!(visit_members_valid(doc, |k, r| seen.push((
            String::from_utf8_lossy(k).into_owned(),
            String::from_utf8_lossy(&doc[r]).into_owned()
        ))));
        assert_eq!(
            seen,
            [
                ("a".to_owned(), "[ 1 , \"x\\\"]\" ]".to_owned()),
                ("r\\u006fle".to_owned(), "\"user\"".to_owned()),
                ("c".to_owned(), "{\"k\":null}".to_owned()),
            ]
        );
        let arr = b"[ {\"t\":1} ,null,\"s\" , [2,[3]],-1.5e3 ]";
        let mut items = Vec::new();
        assert!(visit_items_valid(arr, |r| items
            .push(String::from_utf8_lossy(&arr[r]).into_owned())));
        assert_eq!(items, ["{\"t\":1}", "null", "\"s\"", "[2,[3]]", "-1.5e3"]);
        assert!(visit_items_valid(b"[ ]", |_| panic!("no items")));
        assert!(!visit_items_valid(b"{}", |_| {}));
        assert!(!visit_members_valid(b"[]", |_, _| {}));
        // Garbage never panics.
        for junk in [&b"{\""[..], b"{\"a", b"{\"a\":", b"[\"", b"[{", b"{\"\\"] {
            visit_members_valid(junk, |_, _| {});
            visit_items_valid(junk, |_| {});
        }
    }
}
