//! The handlers that build: a `Value` tree (`parse`), and the canonical text of one object key
//! (the member visitors).

use std::ops::Range;

use super::grammar::number_value;
use super::{Handler, StrSink};
use crate::json::object::ObjectBuilder;
use crate::json::string::{Canon, JsStr, Source};
use crate::json::Value;

/// Builds the canonical form of one key for `top_level_members`.
pub(super) struct KeyReader<'a> {
    src: Source<'a>,
    pub(super) buf: String,
    canon: Canon,
}

impl<'a> KeyReader<'a> {
    pub(super) fn new(src: Source<'a>) -> Self {
        KeyReader {
            src,
            buf: String::new(),
            canon: Canon::default(),
        }
    }
}

impl StrSink for KeyReader<'_> {
    fn begin(&mut self) {
        self.buf.clear();
    }
    fn raw(&mut self, run: Range<usize>) {
        self.canon.raw(&self.src, run, &mut self.buf);
    }
    fn escape(&mut self, c: u8) {
        self.canon.simple_escape(c, &mut self.buf);
    }
    fn unicode(&mut self, unit: u16) {
        self.canon.unicode_escape(unit, &mut self.buf);
    }
    fn end(&mut self) {
        self.canon.end(&mut self.buf);
    }
}

/// Builds a `Value` tree.
pub(super) struct Builder<'a> {
    src: Source<'a>,
    stack: Vec<Frame>,
    pub(super) result: Option<Value>,
    /// Canonical text of the string being read (reused between strings).
    buf: String,
    canon: Canon,
    /// The string read so far is this one run of source text (not yet copied into `buf`):
    /// strings without escapes are then copied once, straight into their final allocation.
    run: Option<Range<usize>>,
}

enum Frame {
    Array(Vec<Value>),
    /// The key waiting for its value.
    Object(ObjectBuilder, JsStr),
}

impl<'a> Builder<'a> {
    pub(super) fn new(src: Source<'a>) -> Self {
        Builder {
            src,
            stack: Vec::new(),
            result: None,
            buf: String::new(),
            canon: Canon::default(),
            run: None,
        }
    }

    fn push(&mut self, v: Value) {
        match self.stack.last_mut() {
            Some(Frame::Array(a)) => a.push(v),
            Some(Frame::Object(o, key)) => o.insert(std::mem::take(key), v),
            None => self.result = Some(v),
        }
    }

    fn flush_run(&mut self) {
        if let Some(r) = self.run.take() {
            self.canon.raw(&self.src, r, &mut self.buf);
        }
    }
}

impl Handler for Builder<'_> {
    fn null(&mut self) {
        self.push(Value::Null);
    }
    fn boolean(&mut self, b: bool) {
        self.push(Value::Bool(b));
    }
    fn number(&mut self, raw: &[u8]) {
        self.push(Value::Number(number_value(raw)));
    }
    fn str_raw(&mut self, run: Range<usize>) {
        if self.buf.is_empty() && self.run.is_none() && self.canon.is_idle() {
            self.run = Some(run);
        } else {
            self.flush_run();
            self.canon.raw(&self.src, run, &mut self.buf);
        }
    }
    fn str_escape(&mut self, c: u8) {
        self.flush_run();
        self.canon.simple_escape(c, &mut self.buf);
    }
    fn str_unicode(&mut self, unit: u16) {
        self.flush_run();
        self.canon.unicode_escape(unit, &mut self.buf);
    }
    fn str_end(&mut self, key: bool) {
        let s = match self.run.take() {
            Some(r) => self.src.run(r).into_owned(),
            None => {
                self.canon.end(&mut self.buf);
                // Copy out at exact size and keep the buffer's capacity for the next string.
                let s = self.buf.as_str().to_owned();
                self.buf.clear();
                s
            }
        };
        let s = JsStr::from_escaped_unchecked(s);
        if key {
            if let Some(Frame::Object(_, k)) = self.stack.last_mut() {
                *k = s;
            }
        } else {
            self.push(Value::String(s));
        }
    }
    fn begin_array(&mut self) {
        self.stack.push(Frame::Array(Vec::new()));
    }
    fn end_array(&mut self) {
        if let Some(Frame::Array(a)) = self.stack.pop() {
            self.push(Value::Array(a));
        }
    }
    fn begin_object(&mut self) {
        self.stack
            .push(Frame::Object(ObjectBuilder::default(), JsStr::default()));
    }
    fn end_object(&mut self) {
        if let Some(Frame::Object(o, _)) = self.stack.pop() {
            self.push(Value::Object(o.finish()));
        }
    }
}
