//! JS strings made straight from code units (Latin-1 or UTF-16, a plain copy on the JS side,
//! unlike UTF-8), and for long texts external strings that V8 does not copy at all.
//!
//! Every function here takes the raw `napi_env` of the running call (its contract: a live
//! environment, used on its own thread, during the call), since their values go into arrays
//! built with raw `napi_value`s (see `crate::cut` and `crate::listing`).

use std::ops::Range;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use pi_session_core::json::JsText;

/// Texts at least this long become external strings.
const EXTERNAL_TEXT_MIN: usize = 1024;

/// A JS string of the Latin-1 `bytes` (copied).
///
/// # Safety
/// `env` is the environment of the running call, on its thread.
pub unsafe fn latin1(env: sys::napi_env, bytes: &[u8]) -> Result<sys::napi_value> {
    let mut v = std::ptr::null_mut();
    // SAFETY: `env` is live (this function's contract); pointer and length describe `bytes`,
    // which V8 copies before the call returns.
    check_status!(unsafe {
        sys::napi_create_string_latin1(env, bytes.as_ptr().cast(), bytes.len() as isize, &mut v)
    })?;
    Ok(v)
}

/// A JS string of `t`'s code units that, when long, keeps pointing at `t`'s buffer instead of
/// copying it onto the V8 heap (an external string; the finalizer frees the buffer when the string
/// is collected). A warm listing hands over ~40 MB of session text: copied, that was most of the
/// JS thread's work (allocation, page faults, then the young-generation GC copying it again).
///
/// # Safety
/// `env` is the environment of the running call, on its thread.
pub unsafe fn external_js_text(env: sys::napi_env, t: JsText) -> Result<sys::napi_value> {
    let units = match &t {
        JsText::Latin1(b) => b.len(),
        JsText::Utf16(u) => u.len(),
    };
    // SAFETY: `env` is live, this function's contract.
    let external = units >= EXTERNAL_TEXT_MIN && unsafe { has_external_strings(env) };
    if !external {
        // SAFETY: as above.
        return unsafe { js_text(env, &t) };
    }
    let hint = Box::into_raw(Box::new(t));
    // SAFETY: `hint` comes from `Box::into_raw` just above and is freed only by the finalizer
    // or below, after the last use of `text`.
    let text = unsafe { &*hint };
    let mut v = std::ptr::null_mut();
    let mut copied = false;
    // SAFETY: `env` is live (this function's contract). The buffer belongs to `*hint`, which
    // stays allocated until V8 passes `hint` to `drop_external_text` (at once if it copied the
    // text instead), so it outlives the string that points into it.
    let status = unsafe {
        match text {
            JsText::Latin1(b) => sys::node_api_create_external_string_latin1(
                env,
                b.as_ptr().cast_mut().cast(),
                b.len() as isize,
                Some(drop_external_text),
                hint.cast(),
                &mut v,
                &mut copied,
            ),
            JsText::Utf16(u) => sys::node_api_create_external_string_utf16(
                env,
                u.as_ptr(),
                u.len() as isize,
                Some(drop_external_text),
                hint.cast(),
                &mut v,
                &mut copied,
            ),
        }
    };
    if status != sys::Status::napi_ok {
        // SAFETY: no string was made, so no finalizer runs for `hint`: it is still ours alone.
        drop(unsafe { Box::from_raw(hint) });
    }
    check_status!(status)?;
    Ok(v)
}

/// A JS string of the Latin-1 bytes `buffer[range]` that points into `buffer` (kept alive, shared,
/// until V8 collects the string) instead of copying them: a string cut from a line read from
/// the file, whose buffer is then the string's storage.
///
/// # Safety
/// `env` is the environment of the running call, on its thread.
pub unsafe fn external_latin1_in(
    env: sys::napi_env,
    buffer: &Arc<Vec<u8>>,
    range: Range<usize>,
) -> Result<sys::napi_value> {
    let bytes = &buffer[range];
    // SAFETY: `env` is live, this function's contract.
    if bytes.len() < EXTERNAL_TEXT_MIN || !unsafe { has_external_strings(env) } {
        // SAFETY: as above.
        return unsafe { latin1(env, bytes) };
    }
    let hint = Box::into_raw(Box::new(Arc::clone(buffer)));
    let mut v = std::ptr::null_mut();
    let mut copied = false;
    // SAFETY: `env` is live (this function's contract). `bytes` lies in the buffer `*hint` holds
    // a reference to, which stays allocated until V8 passes `hint` to `drop_shared_buffer` (at
    // once if it copied the text instead), so it outlives the string that points into it.
    let status = unsafe {
        sys::node_api_create_external_string_latin1(
            env,
            bytes.as_ptr().cast_mut().cast(),
            bytes.len() as isize,
            Some(drop_shared_buffer),
            hint.cast(),
            &mut v,
            &mut copied,
        )
    };
    if status != sys::Status::napi_ok {
        // SAFETY: no string was made, so no finalizer runs for `hint`: it is still ours alone.
        drop(unsafe { Box::from_raw(hint) });
    }
    check_status!(status)?;
    Ok(v)
}

/// The finalizer of [`external_latin1_in`]'s strings: lets go of the buffer they pointed into.
///
/// # Safety
/// `hint` is the `Box<Arc<Vec<u8>>>` pointer given with the string; V8 finalizes a string once.
unsafe extern "C" fn drop_shared_buffer(
    _env: sys::node_api_basic_env,
    _data: *mut std::ffi::c_void,
    hint: *mut std::ffi::c_void,
) {
    // SAFETY: this function's contract: `hint` came from `Box::into_raw` and is passed once.
    drop(unsafe { Box::from_raw(hint.cast::<Arc<Vec<u8>>>()) });
}

/// `node_api_create_external_string_*` exist from Node 20.4 on (and must not be called before:
/// on Linux and macOS a missing symbol would end the process).
///
/// # Safety
/// `env` is the environment of the running call, on its thread.
unsafe fn has_external_strings(env: sys::napi_env) -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        let mut v: *const sys::napi_node_version = std::ptr::null();
        // SAFETY: `env` is live (this function's contract); `v` receives a pointer.
        let known = unsafe { sys::napi_get_node_version(env, &mut v) } == sys::Status::napi_ok;
        // SAFETY: after a successful call a non-null `v` points at Node's own version struct,
        // which lives as long as the process.
        known && !v.is_null() && unsafe { ((*v).major, (*v).minor) } >= (20, 4)
    })
}

/// The finalizer of an external string: frees the text it pointed at.
///
/// # Safety
/// `hint` is the `Box<JsText>` pointer given with the string; V8 finalizes a string once.
unsafe extern "C" fn drop_external_text(
    _env: sys::node_api_basic_env,
    _data: *mut std::ffi::c_void,
    hint: *mut std::ffi::c_void,
) {
    // SAFETY: this function's contract: `hint` came from `Box::into_raw` and is passed once.
    drop(unsafe { Box::from_raw(hint.cast::<JsText>()) });
}

/// A JS string of `text`'s code units (a plain copy on the JS side, unlike UTF-8).
///
/// # Safety
/// `env` is the environment of the running call, on its thread.
unsafe fn js_text(env: sys::napi_env, t: &JsText) -> Result<sys::napi_value> {
    match t {
        // SAFETY: `env` is live, this function's contract.
        JsText::Latin1(b) => unsafe { latin1(env, b) },
        JsText::Utf16(u) => {
            let mut v = std::ptr::null_mut();
            // SAFETY: `env` is live (this function's contract); pointer and length describe
            // `u`, which V8 copies before the call returns.
            check_status!(unsafe {
                sys::napi_create_string_utf16(env, u.as_ptr(), u.len() as isize, &mut v)
            })?;
            Ok(v)
        }
    }
}
