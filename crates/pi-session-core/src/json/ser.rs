//! `JSON.stringify` output (no indentation), without recursion.

use super::object::Object;
use super::string::JsStr;
use super::Value;

/// JSON.stringify semantics for a Value: no spaces; NaN/Infinity -> null; -0 -> 0; numbers as
/// JS `Number.prototype.toString`; strings in canonical `JsStr` form; objects in `Object`
/// iteration order.
pub fn to_json(value: &Value) -> String {
    let mut out = String::new();
    write_json(value, &mut out);
    out
}

/// Appends `JSON.stringify(value)` to `out`.
pub fn write_json(value: &Value, out: &mut String) {
    write_value(value, out, false);
}

/// Appends a number as `JSON.stringify` writes it: JS shortest round-trip formatting, with
/// non-finite values as `null` (and -0 as `0`, which ryu-js already does).
pub fn write_number(n: f64, out: &mut String) {
    out.push_str(format_number(n, &mut ryu_js::Buffer::new()));
}

/// Appends a string with its quotes.
pub fn write_js_string(s: &JsStr, out: &mut String) {
    out.push('"');
    out.push_str(s.as_escaped());
    out.push('"');
}

/// `JSON.stringify(s)` for a Rust string.
pub fn string_to_json(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_js_string(&JsStr::from_str(s), &mut out);
    out
}

pub(crate) fn format_number(n: f64, buf: &mut ryu_js::Buffer) -> &str {
    if n.is_finite() {
        buf.format_finite(n)
    } else {
        "null"
    }
}

/// `Debug` text: JSON, but non-finite numbers and -0 stay visible.
pub(crate) fn write_debug(value: &Value, out: &mut String) {
    write_value(value, out, true);
}

// An object's `Debug` text is written here with the values' own (`Value`'s is in mod.rs), so the
// object's module needs nothing of the writer.
impl std::fmt::Debug for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = String::new();
        write_object_debug(self, &mut s);
        f.write_str(&s)
    }
}

fn write_object_debug(object: &Object, out: &mut String) {
    // Wrapping in a temporary value would move the object; write the braces here instead and
    // let the generic writer handle each member.
    out.push('{');
    for (i, (k, v)) in object.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_js_string(k, out);
        out.push(':');
        write_value(v, out, true);
    }
    out.push('}');
}

fn write_scalar_debug(n: f64, out: &mut String) {
    if n.is_nan() {
        out.push_str("NaN");
    } else if n.is_infinite() {
        out.push_str(if n > 0.0 { "Infinity" } else { "-Infinity" });
    } else if n == 0.0 && n.is_sign_negative() {
        out.push_str("-0");
    } else {
        write_number(n, out);
    }
}

fn write_value(value: &Value, out: &mut String, debug: bool) {
    enum Frame<'a> {
        Array(std::slice::Iter<'a, Value>),
        Object(std::slice::Iter<'a, (JsStr, Value)>),
    }
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut next = value;
    loop {
        match next {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) if debug => write_scalar_debug(*n, out),
            Value::Number(n) => write_number(*n, out),
            Value::String(s) => write_js_string(s, out),
            Value::Array(a) => {
                out.push('[');
                stack.push(Frame::Array(a.iter()));
            }
            Value::Object(o) => {
                out.push('{');
                stack.push(Frame::Object(o.entries().iter()));
            }
        }
        // Find the next value to write, closing finished containers. Whether a separator is
        // needed follows from the last byte written: an opening bracket means "first member".
        loop {
            let Some(top) = stack.last_mut() else {
                return;
            };
            let child = match top {
                Frame::Array(it) => it.next().map(|v| (None, v)),
                Frame::Object(it) => it.next().map(|(k, v)| (Some(k), v)),
            };
            match child {
                Some((key, v)) => {
                    if !out.ends_with(['[', '{']) {
                        out.push(',');
                    }
                    if let Some(k) = key {
                        write_js_string(k, out);
                        out.push(':');
                    }
                    next = v;
                    break;
                }
                None => {
                    out.push(match stack.pop() {
                        Some(Frame::Array(_)) => ']',
                        _ => '}',
                    });
                }
            }
        }
    }
}
