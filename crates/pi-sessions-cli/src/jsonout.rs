//! The `--json` documents: built with the core's JSON values (`json::build`, so strings, numbers
//! and key order are exactly what `JSON.stringify` would write), printed one per line.

use std::io::Write;

use pi_session_core::json::{self, Value};

pub use pi_session_core::json::build::{arr, num, obj, opt, s};

/// One compact JSON document and a newline.
pub fn emit(out: &mut dyn Write, v: &Value) -> std::io::Result<()> {
    let mut text = json::to_json(v);
    text.push('\n');
    out.write_all(text.as_bytes())
}

/// A string value's text, if it is a string.
pub fn str_of(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) => Some(s.to_string_lossy()),
        _ => None,
    }
}

/// A number value, if it is a number.
pub fn num_of(v: Option<&Value>) -> Option<f64> {
    match v {
        Some(Value::Number(n)) => Some(*n),
        _ => None,
    }
}
