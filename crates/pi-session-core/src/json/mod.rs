//! JSON reading and writing with exactly the observable behaviour of V8's `JSON.parse` followed
//! by `JSON.stringify`, so that files we rewrite are byte-identical to what the JS agent writes.
//!
//! Everything that walks nesting (parse, serialize, clone, compare, drop) uses an explicit stack:
//! session lines are untrusted and may nest arbitrarily deep.

pub mod build;
mod decode;
mod object;
mod parse;
mod ser;
mod string;
mod trusted;

pub use decode::{
    decode_escaped, decode_escaped_bytes, decode_utf16_into, has_wide_chars, is_plain_ascii,
    json_text_units, JsText, ESCAPE_WIDE_AT_MOST,
};
pub use object::Object;
pub use parse::{
    check, is_canonical, normalize, parse, top_level_members, validate, visit_canonical_object,
    visit_message_members, visit_top_level_members, visit_two_levels, Members, ParseError,
};
pub use ser::{string_to_json, to_json, write_js_string, write_json, write_number};
pub use string::JsStr;
pub(crate) use trusted::{skip_valid_string, skip_valid_value, skip_ws};
pub use trusted::{visit_items_valid, visit_members_trusted, visit_members_valid};

/// A JSON value as JavaScript sees it.
///
/// `Value` implements `Drop` (to free deep nesting without recursion), so its payloads cannot be
/// moved out by pattern matching; use [`Value::take`] or the `into_*` helpers instead.
#[derive(Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(f64),
    String(JsStr),
    Array(Vec<Value>),
    Object(Object),
}

impl Value {
    /// Property lookup; `None` unless this is an object that has the key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(o) => o.get(key),
            _ => None,
        }
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        match self {
            Value::Object(o) => o.get_mut(key),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&JsStr> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    pub fn as_object_mut(&mut self) -> Option<&mut Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// JS truthiness: null, false, 0, -0, NaN and "" are falsy.
    pub fn is_truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Number(n) => *n != 0.0 && !n.is_nan(),
            Value::String(s) => !s.is_empty(),
            Value::Array(_) | Value::Object(_) => true,
        }
    }

    /// Moves the value out, leaving `Null`.
    pub fn take(&mut self) -> Value {
        std::mem::take(self)
    }

    pub fn into_string(mut self) -> Option<JsStr> {
        match &mut self {
            Value::String(s) => Some(std::mem::take(s)),
            _ => None,
        }
    }

    pub fn into_array(mut self) -> Option<Vec<Value>> {
        match &mut self {
            Value::Array(a) => Some(std::mem::take(a)),
            _ => None,
        }
    }

    pub fn into_object(mut self) -> Option<Object> {
        match &mut self {
            Value::Object(o) => Some(std::mem::take(o)),
            _ => None,
        }
    }

    /// A container that owns further containers; only those need the explicit-stack treatment.
    fn has_nested_containers(&self) -> bool {
        match self {
            Value::Array(a) => a.iter().any(Value::is_nonempty_container),
            Value::Object(o) => o.values().any(Value::is_nonempty_container),
            _ => false,
        }
    }

    fn is_nonempty_container(&self) -> bool {
        match self {
            Value::Array(a) => !a.is_empty(),
            Value::Object(o) => !o.is_empty(),
            _ => false,
        }
    }
}

impl Drop for Value {
    fn drop(&mut self) {
        // The default drop glue recurses once per nesting level; move descendants onto a heap
        // stack instead so that each value dropped here has no nested children left.
        if !self.has_nested_containers() {
            return;
        }
        let mut stack: Vec<Value> = Vec::new();
        let detach = |v: &mut Value, stack: &mut Vec<Value>| match v {
            Value::Array(a) => stack.extend(a.drain(..).filter(Value::is_nonempty_container)),
            Value::Object(o) => stack.extend(
                o.take_entries()
                    .into_iter()
                    .map(|(_, v)| v)
                    .filter(Value::is_nonempty_container),
            ),
            _ => {}
        };
        detach(self, &mut stack);
        while let Some(mut v) = stack.pop() {
            detach(&mut v, &mut stack);
        }
    }
}

impl Clone for Value {
    fn clone(&self) -> Self {
        // Iterative deep copy: each frame pairs a source container with the copy being built.
        enum Frame<'a> {
            Array(std::slice::Iter<'a, Value>, Vec<Value>),
            // The next entry to copy is `out.len()`.
            Object(&'a Object, Vec<(JsStr, Value)>),
        }
        let mut stack: Vec<Frame<'_>> = Vec::new();
        let mut next = self;
        loop {
            let mut done = match next {
                Value::Null => Some(Value::Null),
                Value::Bool(b) => Some(Value::Bool(*b)),
                Value::Number(n) => Some(Value::Number(*n)),
                Value::String(s) => Some(Value::String(s.clone())),
                Value::Array(a) => {
                    stack.push(Frame::Array(a.iter(), Vec::with_capacity(a.len())));
                    None
                }
                Value::Object(o) => {
                    stack.push(Frame::Object(o, Vec::with_capacity(o.len())));
                    None
                }
            };
            // Hand finished copies to their parents until some container has another child.
            loop {
                if let Some(v) = done.take() {
                    match stack.last_mut() {
                        None => return v,
                        Some(Frame::Array(_, out)) => out.push(v),
                        Some(Frame::Object(o, out)) => {
                            let key = o.entries()[out.len()].0.clone();
                            out.push((key, v));
                        }
                    }
                }
                let child = match stack.last_mut() {
                    Some(Frame::Array(it, _)) => it.next(),
                    Some(Frame::Object(o, out)) => o.entries().get(out.len()).map(|(_, v)| v),
                    None => unreachable!("the stack is non-empty while a copy is unfinished"),
                };
                if let Some(child) = child {
                    next = child;
                    break;
                }
                done = match stack.pop() {
                    Some(Frame::Array(_, out)) => Some(Value::Array(out)),
                    Some(Frame::Object(o, out)) => Some(Value::Object(o.with_entries_like(out))),
                    None => None,
                };
            }
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        // Iterative structural comparison with derive-like semantics (NaN != NaN, 0 == -0).
        let mut stack: Vec<(&Value, &Value)> = vec![(self, other)];
        while let Some((a, b)) = stack.pop() {
            match (a, b) {
                (Value::Null, Value::Null) => {}
                (Value::Bool(x), Value::Bool(y)) if x == y => {}
                (Value::Number(x), Value::Number(y)) if x == y => {}
                (Value::String(x), Value::String(y)) if x == y => {}
                (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                    stack.extend(x.iter().zip(y.iter()));
                }
                (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
                    for ((kx, vx), (ky, vy)) in x.entries().iter().zip(y.entries()) {
                        if kx != ky {
                            return false;
                        }
                        stack.push((vx, vy));
                    }
                }
                _ => return false,
            }
        }
        true
    }
}

impl std::fmt::Debug for Value {
    /// JSON text, except that non-finite numbers and -0 are spelled out.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = String::new();
        ser::write_debug(self, &mut s);
        f.write_str(&s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<f64> for Value {
    fn from(n: f64) -> Self {
        Value::Number(n)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(JsStr::from_str(s))
    }
}

impl From<JsStr> for Value {
    fn from(s: JsStr) -> Self {
        Value::String(s)
    }
}

impl From<Vec<Value>> for Value {
    fn from(a: Vec<Value>) -> Self {
        Value::Array(a)
    }
}

impl From<Object> for Value {
    fn from(o: Object) -> Self {
        Value::Object(o)
    }
}
