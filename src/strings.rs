//! JS strings made straight from code units (Latin-1 or UTF-16, a plain copy on the JS side,
//! unlike UTF-8), and for long texts external strings that V8 does not copy at all.

use napi::bindgen_prelude::*;
use pi_session_core::json::JsText;

/// Texts at least this long become external strings.
const EXTERNAL_TEXT_MIN: usize = 1024;

pub unsafe fn latin1(env: sys::napi_env, bytes: &[u8]) -> Result<sys::napi_value> {
    let mut v = std::ptr::null_mut();
    check_status!(sys::napi_create_string_latin1(
        env,
        bytes.as_ptr().cast(),
        bytes.len() as isize,
        &mut v
    ))?;
    Ok(v)
}

/// A JS string of `t`'s code units that, when long, keeps pointing at `t`'s buffer instead of
/// copying it onto the V8 heap (an external string; the finalizer frees the buffer when the string
/// is collected). A warm listing hands over ~40 MB of session text: copied, that was most of the
/// JS thread's work (allocation, page faults, then the young-generation GC copying it again).
pub unsafe fn external_js_text(env: sys::napi_env, t: JsText) -> Result<sys::napi_value> {
    let units = match &t {
        JsText::Latin1(b) => b.len(),
        JsText::Utf16(u) => u.len(),
    };
    if units < EXTERNAL_TEXT_MIN || !has_external_strings(env) {
        return js_text(env, &t);
    }
    let hint = Box::into_raw(Box::new(t));
    let mut v = std::ptr::null_mut();
    let mut copied = false;
    // SAFETY: `hint` owns the buffer until the finalizer runs (at once if V8 copied instead).
    let status = match &*hint {
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
    };
    if status != sys::Status::napi_ok {
        // No finalizer runs for a string that was not made.
        drop(Box::from_raw(hint));
    }
    check_status!(status)?;
    Ok(v)
}

/// `node_api_create_external_string_*` exist from Node 20.4 on (and must not be called before:
/// on Linux and macOS a missing symbol would end the process).
unsafe fn has_external_strings(env: sys::napi_env) -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        let mut v: *const sys::napi_node_version = std::ptr::null();
        sys::napi_get_node_version(env, &mut v) == sys::Status::napi_ok
            && !v.is_null()
            && ((*v).major, (*v).minor) >= (20, 4)
    })
}

unsafe extern "C" fn drop_external_text(
    _env: sys::node_api_basic_env,
    _data: *mut std::ffi::c_void,
    hint: *mut std::ffi::c_void,
) {
    drop(Box::from_raw(hint.cast::<JsText>()));
}

/// A JS string of `text`'s code units (a plain copy on the JS side, unlike UTF-8).
unsafe fn js_text(env: sys::napi_env, t: &JsText) -> Result<sys::napi_value> {
    match t {
        JsText::Latin1(b) => latin1(env, b),
        JsText::Utf16(u) => {
            let mut v = std::ptr::null_mut();
            check_status!(sys::napi_create_string_utf16(
                env,
                u.as_ptr(),
                u.len() as isize,
                &mut v
            ))?;
            Ok(v)
        }
    }
}
