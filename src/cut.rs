//! Record lines on their way to `JSON.parse` with their long strings cut out: a batch the core
//! prepared (`PreparedBatch`, see the core's `materialize` module) as JS values, the text and
//! each cut string as a value of its own with the path where it goes back in.

use napi::bindgen_prelude::*;
use pi_session_core::json::JsText;
use pi_session_core::materialize::{CutValue, PreparedBatch};

use crate::strings::{external_string, latin1, Storage};

// The tags of a cut plan (see [`batch_value`]), from the core that writes them, for the one
// decoder in lib/wire.js: a step names a member (`BATCH_STEP_NAME`, then an index into `names`)
// or an array index; a value is the next of the batch's values (`BATCH_FROM_VALUES`) or a slice
// of `wide`.
#[napi_derive::napi]
pub const BATCH_STEP_NAME: u32 = pi_session_core::materialize::STEP_NAME;
#[napi_derive::napi]
pub const BATCH_STEP_INDEX: u32 = pi_session_core::materialize::STEP_INDEX;
#[napi_derive::napi]
pub const BATCH_FROM_VALUES: u32 = pi_session_core::materialize::FROM_VALUES;
#[napi_derive::napi]
pub const BATCH_FROM_WIDE: u32 = pi_session_core::materialize::FROM_WIDE;

// Where a batch with cuts holds its parts (see [`batch_value`]), for the same decoder.
#[napi_derive::napi]
pub const BATCH_TEXT: u32 = 0;
#[napi_derive::napi]
pub const BATCH_PLAN: u32 = 1;
#[napi_derive::napi]
pub const BATCH_NAMES: u32 = 2;
#[napi_derive::napi]
pub const BATCH_WIDE: u32 = 3;
/// The first of the cut strings that are values of their own.
#[napi_derive::napi]
pub const BATCH_VALUES: u32 = 4;
// `batch_value` pushes the parts in this order.
const _: () = assert!(
    BATCH_TEXT == 0 && BATCH_PLAN == 1 && BATCH_NAMES == 2 && BATCH_WIDE == 3 && BATCH_VALUES == 4
);

/// A batch of record lines for `JSON.parse` (see [`batch_value`]), as a return value.
pub struct JsBatch(pub PreparedBatch);

impl TypeName for JsBatch {
    fn type_name() -> &'static str {
        "string | [string, Uint32Array, string[], string, ...string[]]"
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
/// was cut, else the array `[text, plan, names, wide, ...values]`, the batch's fields of the same
/// names (see `PreparedBatch` in the core): `plan` a Uint32Array, `names` an array of strings,
/// `wide` one string of the short cut strings, which JS slices (one value instead of thousands),
/// then the other cut strings. Image data is an external string over the buffer it was read
/// into; other cut strings, the text and `wide` are external strings of their decoded code
/// units.
///
/// # Safety
/// `env` is the environment of the running call, on its thread.
pub(crate) unsafe fn batch_value(
    env: sys::napi_env,
    batch: PreparedBatch,
) -> Result<sys::napi_value> {
    // SAFETY: this function's contract (the same holds for each block below).
    let text = unsafe { external_string(env, batch.text) }?;
    if batch.plan.is_empty() {
        return Ok(text);
    }
    let mut all = Vec::with_capacity(BATCH_VALUES as usize + batch.values.len());
    all.push(text);
    // SAFETY: as above.
    all.push(unsafe { copied_u32_array(env, &batch.plan) }?);
    // SAFETY: as above.
    all.push(unsafe { latin1_array(env, &batch.names) }?);
    // SAFETY: as above.
    all.push(unsafe { external_string(env, JsText::Utf16(batch.wide)) }?);
    for value in batch.values {
        let storage = match value {
            CutValue::Text(t) => Storage::Text(t),
            CutValue::Shared(buffer, range) => Storage::Shared(buffer, range),
        };
        // SAFETY: as above.
        all.push(unsafe { external_string(env, storage) }?);
    }
    // SAFETY: as above.
    unsafe { array_of(env, all) }
}

/// A Uint32Array for JS, as the binding hands over every one: copied into a buffer V8 allocates
/// ([`copied_u32_array`]), never lent as a Rust-owned (external) buffer, whose release is posted
/// back to the event loop (under Wine, Node 26 aborted at exit when one was posted while the
/// process was exiting: libuv's `!(handle->flags & UV_HANDLE_CLOSING)`). Most are garbage right
/// after the call that gets them, and copying a few thousand numbers costs less than a finalizer.
pub struct U32s(pub Vec<u32>);

impl TypeName for U32s {
    fn type_name() -> &'static str {
        "Uint32Array"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ToNapiValue for U32s {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        // SAFETY: the trait's contract: `env` is the running call's.
        unsafe { copied_u32_array(env, &val.0) }
    }
}

/// A Uint32Array of `values` in a buffer V8 allocates (no finalizer of ours to run).
///
/// # Safety
/// `env` is the environment of the running call, on its thread.
pub(crate) unsafe fn copied_u32_array(
    env: sys::napi_env,
    values: &[u32],
) -> Result<sys::napi_value> {
    let bytes = std::mem::size_of_val(values);
    let mut data = std::ptr::null_mut();
    let mut buffer = std::ptr::null_mut();
    // SAFETY: this function's contract; V8 gives `bytes` writable bytes at `data`.
    check_status!(unsafe { sys::napi_create_arraybuffer(env, bytes, &mut data, &mut buffer) })?;
    if bytes > 0 {
        // SAFETY: `data` holds `bytes` bytes, `values` as many; they do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(values.as_ptr().cast::<u8>(), data.cast::<u8>(), bytes)
        };
    }
    let mut array = std::ptr::null_mut();
    // SAFETY: as above; the buffer holds `values.len()` u32s from offset 0.
    check_status!(unsafe {
        sys::napi_create_typedarray(
            env,
            sys::TypedarrayType::uint32_array,
            values.len(),
            buffer,
            0,
            &mut array,
        )
    })?;
    Ok(array)
}

/// A JS array of Latin-1 strings.
///
/// # Safety
/// `env` is the environment of the running call, on its thread.
pub(crate) unsafe fn latin1_array(
    env: sys::napi_env,
    texts: &[Box<[u8]>],
) -> Result<sys::napi_value> {
    let mut values = Vec::with_capacity(texts.len());
    for t in texts {
        // SAFETY: this function's contract.
        values.push(unsafe { latin1(env, t) }?);
    }
    // SAFETY: as above.
    unsafe { array_of(env, values) }
}

/// A JS array of `values`, in order.
///
/// # Safety
/// `env` is the environment of the running call, on its thread, and `values` values of it.
unsafe fn array_of(env: sys::napi_env, values: Vec<sys::napi_value>) -> Result<sys::napi_value> {
    let mut arr = std::ptr::null_mut();
    // SAFETY: this function's contract.
    check_status!(unsafe { sys::napi_create_array_with_length(env, values.len(), &mut arr) })?;
    for (i, v) in values.into_iter().enumerate() {
        // SAFETY: as above.
        check_status!(unsafe { sys::napi_set_element(env, arr, i as u32, v) })?;
    }
    Ok(arr)
}
