//! Building the `--json` documents with the core's JSON values (so strings, numbers and key order
//! are exactly what `JSON.stringify` would write).

use std::io::Write;

use pi_session_core::json::{self, JsStr, Object, Value};

/// An object from `(key, value)` pairs, in that order.
pub fn obj(pairs: Vec<(&str, Value)>) -> Value {
    let mut o = Object::new();
    for (k, v) in pairs {
        o.insert(JsStr::from_str(k), v);
    }
    Value::Object(o)
}

pub fn s(x: &str) -> Value {
    Value::from(x)
}

/// A string or `null`.
pub fn opt(x: Option<&str>) -> Value {
    x.map(Value::from).unwrap_or(Value::Null)
}

pub fn num(n: f64) -> Value {
    Value::Number(n)
}

pub fn arr(items: Vec<Value>) -> Value {
    Value::Array(items)
}

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
