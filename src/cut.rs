//! Record lines on their way to `JSON.parse` with their long strings cut out: the text, and each
//! cut string as a JS value of its own with the path where it goes back in.

use napi::bindgen_prelude::*;
use pi_session_core::json::{self, JsText, Step};
use pi_session_core::materialize;

use pi_session_core::Error as CoreError;

use crate::error::js_error;
use crate::strings::{external_js_text, latin1};

/// Record lines for `JSON.parse`: the text alone when nothing was cut, else the array
/// `[text, item, depth, ...steps, string, item, depth, ...]`, where each cut string goes at the
/// path of `depth` steps (names as strings, indexes as numbers) in item `item` of the parsed text.
/// The values were made during this call (they live in its handle scope).
pub struct JsLines {
    text: String,
    cuts: Vec<sys::napi_value>,
}

impl TypeName for JsLines {
    fn type_name() -> &'static str {
        "string | Array<string | number>"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl ToNapiValue for JsLines {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        let text = String::to_napi_value(env, val.text)?;
        if val.cuts.is_empty() {
            return Ok(text);
        }
        let mut arr = std::ptr::null_mut();
        check_status!(sys::napi_create_array_with_length(
            env,
            val.cuts.len() + 1,
            &mut arr
        ))?;
        check_status!(sys::napi_set_element(env, arr, 0, text))?;
        for (i, &v) in val.cuts.iter().enumerate() {
            check_status!(sys::napi_set_element(env, arr, i as u32 + 1, v))?;
        }
        Ok(arr)
    }
}

/// Makes the JS values of each cut string while its line is in memory: image data (ASCII, no
/// escapes) becomes a string straight from the line's bytes, anything else is decoded first.
pub struct JsCuts {
    env: sys::napi_env,
    values: Vec<sys::napi_value>,
    failed: Option<napi::Error>,
}

impl JsCuts {
    pub fn new(env: &Env) -> Self {
        JsCuts {
            env: env.raw(),
            values: Vec::new(),
            failed: None,
        }
    }

    /// The lines, or the error met while making a cut string's value (a JS error of `env`, the
    /// environment this sink was made in).
    pub fn finish(self, env: &Env, text: String) -> Result<JsLines> {
        match self.failed {
            Some(e) => Err(js_error(env, CoreError::internal(e.reason))),
            None => Ok(JsLines {
                text,
                cuts: self.values,
            }),
        }
    }

    unsafe fn push_cut(
        &mut self,
        item: u32,
        path: &[Step<'_>],
        escaped: &[u8],
        plain: bool,
    ) -> Result<()> {
        let env = self.env;
        self.values.push(u32::to_napi_value(env, item)?);
        self.values
            .push(u32::to_napi_value(env, path.len() as u32)?);
        for step in path {
            self.values.push(match *step {
                Step::Key(name) => latin1(env, name)?,
                Step::Index(i) => u32::to_napi_value(env, i)?,
            });
        }
        // Cut strings are long (see MIN_CUT_BYTES): as external strings V8 keeps pointing at
        // their decoded buffer instead of copying it onto its heap, where a tool output of tens
        // of kilobytes would also be copied again by every young-generation collection.
        let text = if plain {
            JsText::Latin1(escaped.to_vec())
        } else {
            json::decode_escaped_bytes(escaped)
        };
        self.values.push(external_js_text(env, text)?);
        Ok(())
    }
}

impl materialize::CutSink for JsCuts {
    fn cut(&mut self, item: u32, path: &[Step<'_>], escaped: &[u8], plain: bool) {
        if self.failed.is_none() {
            // SAFETY: `env` is the environment of the call this sink was made in, still running.
            if let Err(e) = unsafe { self.push_cut(item, path, escaped, plain) } {
                self.failed = Some(e);
            }
        }
    }
}
