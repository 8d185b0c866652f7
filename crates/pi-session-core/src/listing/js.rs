//! JavaScript string semantics the summary needs on escaped (canonical JSON) text:
//! `String.prototype.trim` and `Array.prototype.join`'s `String(item)`.

use crate::json::{self, Value};

/// JS `String.prototype.trim` whitespace.
fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// Trim a canonical (escaped) JS string like `String.prototype.trim`. Escaped control characters
/// (`\t`, `\n`, `\u000b`, ...) count as whitespace too.
pub(super) fn js_trim_escaped(s: &str) -> &str {
    const ESCAPED_WS: [&str; 5] = ["\\t", "\\n", "\\u000b", "\\f", "\\r"];
    let mut t = s;
    loop {
        let before = t.len();
        t = t.trim_start_matches(is_js_space);
        for e in ESCAPED_WS {
            if let Some(r) = t.strip_prefix(e) {
                t = r;
            }
        }
        if t.len() == before {
            break;
        }
    }
    loop {
        let before = t.len();
        t = t.trim_end_matches(is_js_space);
        for e in ESCAPED_WS {
            // A trailing `\\t` (escaped backslash + t) is not whitespace: count the backslashes.
            if let Some(r) = t.strip_suffix(e) {
                let bs = r.bytes().rev().take_while(|&b| b == b'\\').count();
                if bs % 2 == 0 {
                    t = r;
                }
            }
        }
        if t.len() == before {
            break;
        }
    }
    t
}

/// `String(value)` as `Array.prototype.join` applies it (null/undefined -> ""), escaped.
pub(super) fn js_join_item(v: &Value, out: &mut String, depth: usize) {
    match v {
        Value::Null => {}
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => json::write_number(*n, out),
        Value::String(s) => out.push_str(s.as_escaped()),
        Value::Array(items) => {
            if depth > 64 {
                return;
            }
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                js_join_item(it, out, depth + 1);
            }
        }
        Value::Object(_) => out.push_str("[object Object]"),
    }
}
