//! Record lines on their way to `JSON.parse` with their long strings cut out: a batch the core
//! prepared (`PreparedBatch`, see the core's `materialize` module) as JS values, the text and
//! each cut string as a value of its own with the path where it goes back in.

use napi::bindgen_prelude::*;
use pi_session_core::materialize::{CutValue, OwnedStep, PreparedBatch};

use crate::strings::{external_string, latin1, Storage};

/// A batch of record lines for `JSON.parse` (see [`batch_value`]), as a return value.
pub struct JsBatch(pub PreparedBatch);

impl TypeName for JsBatch {
    fn type_name() -> &'static str {
        "string | Array<string | number>"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl ToNapiValue for JsBatch {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        // SAFETY: napi-rs converts a return value with the environment of the running call, on
        // its thread.
        unsafe { batch_value(env, val.0) }
    }
}

/// One prepared batch as JS values: the text (the JSON array `[line, line, …]`) alone when nothing
/// was cut, else the array `[text, item, depth, ...steps, string, item, depth, ...]`, where each
/// cut string goes at the path of `depth` steps (names as strings, indexes as numbers) in item
/// `item` of the parsed text. Image data is an external string over the buffer it was read into,
/// other cut strings and the text external strings of their decoded code units.
///
/// # Safety
/// `env` is the environment of the running call, on its thread.
pub(crate) unsafe fn batch_value(
    env: sys::napi_env,
    batch: PreparedBatch,
) -> Result<sys::napi_value> {
    // SAFETY: this function's contract (the same holds for each block below).
    let text = unsafe { external_string(env, batch.text) }?;
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
                CutValue::Text(t) => external_string(env, t)?,
                CutValue::Shared(buffer, range) => {
                    external_string(env, Storage::Shared(buffer, range))?
                }
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
