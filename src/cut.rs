//! Record lines on their way to `JSON.parse` with their long strings cut out: the text, and each
//! cut string as a JS value of its own with the path where it goes back in.

use napi::bindgen_prelude::*;
use pi_session_core::json::{self, JsText, Step};
use pi_session_core::materialize::{self, CutValue, OwnedStep, PreparedBatch};

use pi_session_core::Error as CoreError;

use crate::error::js_error;
use std::ops::Range;
use std::sync::Arc;

use crate::strings::{external_js_text, external_latin1_in, latin1};

/// Record lines for `JSON.parse`: the text alone when nothing was cut, else the array
/// `[text, item, depth, ...steps, string, item, depth, ...]`, where each cut string goes at the
/// path of `depth` steps (names as strings, indexes as numbers) in item `item` of the parsed text.
/// The values were made during this call (they live in its handle scope).
pub struct JsLines {
    /// The text's code units (see [`json::json_text_units`]): a batch of lines is up to a
    /// megabyte, handed over as an external string rather than decoded from UTF-8 into a copy.
    text: JsText,
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
        // SAFETY: napi-rs converts a return value with the environment of the running call, on
        // its thread; the cut values were made during this same call and are alive in its handle
        // scope (see the type's doc), the array is made here. The same holds for each block below.
        let text = unsafe { external_js_text(env, val.text) }?;
        if val.cuts.is_empty() {
            return Ok(text);
        }
        let mut arr = std::ptr::null_mut();
        // SAFETY: as above.
        check_status!(unsafe {
            sys::napi_create_array_with_length(env, val.cuts.len() + 1, &mut arr)
        })?;
        // SAFETY: as above.
        check_status!(unsafe { sys::napi_set_element(env, arr, 0, text) })?;
        for (i, &v) in val.cuts.iter().enumerate() {
            // SAFETY: as above.
            check_status!(unsafe { sys::napi_set_element(env, arr, i as u32 + 1, v) })?;
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
    /// A sink for one call, made with that call's `env` and dropped (by `finish`) before it returns.
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
                text: json::json_text_units(text),
                cuts: self.values,
            }),
        }
    }

    /// Make the values of one cut string: item, depth, steps, and the string itself.
    ///
    /// # Safety
    /// `self.env` is still the environment of the running call (the sink lives only in the call
    /// that made it, see `new`).
    unsafe fn push_cut(
        &mut self,
        item: u32,
        path: &[Step<'_>],
        escaped: &[u8],
        plain: bool,
    ) -> Result<()> {
        // SAFETY: this function's contract.
        unsafe { self.push_path(item, path) }?;
        // Cut strings are long (see MIN_CUT_BYTES): as external strings V8 keeps pointing at
        // their decoded buffer instead of copying it onto its heap, where a tool output of tens
        // of kilobytes would also be copied again by every young-generation collection.
        let text = if plain {
            JsText::Latin1(escaped.to_vec())
        } else {
            json::decode_escaped_bytes(escaped)
        };
        // SAFETY: this function's contract.
        self.values
            .push(unsafe { external_js_text(self.env, text) }?);
        Ok(())
    }

    /// [`JsCuts::push_cut`] for a string in a line read into a buffer of its own: image data
    /// becomes an external string pointing into that buffer (no copy), anything else is decoded.
    ///
    /// # Safety
    /// As for [`JsCuts::push_cut`].
    unsafe fn push_shared_cut(
        &mut self,
        item: u32,
        path: &[Step<'_>],
        line: &Arc<Vec<u8>>,
        range: Range<usize>,
        plain: bool,
    ) -> Result<()> {
        if !plain {
            // SAFETY: this function's contract.
            return unsafe { self.push_cut(item, path, &line[range], plain) };
        }
        // SAFETY: this function's contract.
        unsafe { self.push_path(item, path) }?;
        // SAFETY: as above.
        self.values
            .push(unsafe { external_latin1_in(self.env, line, range) }?);
        Ok(())
    }

    /// The item, depth and steps of one cut string's path.
    ///
    /// # Safety
    /// As for [`JsCuts::push_cut`].
    unsafe fn push_path(&mut self, item: u32, path: &[Step<'_>]) -> Result<()> {
        let env = self.env;
        // SAFETY: `env` is live and this is its thread, the function's contract (the same holds
        // for each block below).
        self.values.push(unsafe { u32::to_napi_value(env, item) }?);
        // SAFETY: as above.
        let depth = unsafe { u32::to_napi_value(env, path.len() as u32) }?;
        self.values.push(depth);
        for step in path {
            // SAFETY: as above.
            self.values.push(unsafe {
                match *step {
                    Step::Key(name) => latin1(env, name)?,
                    Step::Index(i) => u32::to_napi_value(env, i)?,
                }
            });
        }
        Ok(())
    }
}

impl materialize::CutSink for JsCuts {
    fn cut(&mut self, item: u32, path: &[Step<'_>], escaped: &[u8], plain: bool) {
        if self.failed.is_none() {
            // SAFETY: `env` is the environment of the call this sink was made in, still running
            // (the core calls the sink only inside `line_for_js` of that call).
            if let Err(e) = unsafe { self.push_cut(item, path, escaped, plain) } {
                self.failed = Some(e);
            }
        }
    }

    fn cut_shared(
        &mut self,
        item: u32,
        path: &[Step<'_>],
        line: &Arc<Vec<u8>>,
        range: Range<usize>,
        plain: bool,
    ) {
        if self.failed.is_none() {
            // SAFETY: as in `cut`.
            if let Err(e) = unsafe { self.push_shared_cut(item, path, line, range, plain) } {
                self.failed = Some(e);
            }
        }
    }
}

/// One prepared batch as JS values: the text, or `[text, item, depth, ...steps, string, ...]`.
///
/// # Safety
/// `env` is the environment of the running call, on its thread.
pub(crate) unsafe fn batch_value(
    env: sys::napi_env,
    batch: PreparedBatch,
) -> Result<sys::napi_value> {
    // SAFETY: this function's contract (the same holds for each block below).
    let text = unsafe { external_js_text(env, batch.text) }?;
    if batch.cuts.is_empty() {
        return Ok(text);
    }
    let mut values = vec![text];
    for cut in batch.cuts {
        // SAFETY: as above.
        values.push(unsafe { u32::to_napi_value(env, cut.item) }?);
        // SAFETY: as above.
        values.push(unsafe { u32::to_napi_value(env, cut.path.len() as u32) }?);
        for step in &cut.path {
            // SAFETY: as above.
            values.push(unsafe {
                match step {
                    OwnedStep::Key(name) => latin1(env, name)?,
                    OwnedStep::Index(i) => u32::to_napi_value(env, *i)?,
                }
            });
        }
        // SAFETY: as above.
        values.push(unsafe {
            match cut.value {
                CutValue::Text(t) => external_js_text(env, t)?,
                CutValue::Shared(buffer, range) => external_latin1_in(env, &buffer, range)?,
            }
        });
    }
    let mut arr = std::ptr::null_mut();
    // SAFETY: as above.
    check_status!(unsafe { sys::napi_create_array_with_length(env, values.len(), &mut arr) })?;
    for (i, v) in values.into_iter().enumerate() {
        // SAFETY: as above.
        check_status!(unsafe { sys::napi_set_element(env, arr, i as u32, v) })?;
    }
    Ok(arr)
}
