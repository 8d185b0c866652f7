//! JSON documents built from the core's values, members in the order given, so that they
//! serialize ([`super::to_json`]) exactly as `JSON.stringify` writes the same object: the reports
//! of the commands and the library functions are made with these.

use super::{JsStr, Object, Value};

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
