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

/// Where an external string's characters live, kept until V8 collects the string.
pub enum Storage {
    /// Code units of its own (decoded, or copied out of a line).
    Text(JsText),
    /// Latin-1 bytes inside a shared buffer: a string cut from a line read from the file, whose
    /// buffer is then the string's storage (no copy).
    Shared(Arc<Vec<u8>>, Range<usize>),
}

impl From<JsText> for Storage {
    fn from(t: JsText) -> Storage {
        Storage::Text(t)
    }
}

/// A string's code units, borrowed from its [`Storage`].
enum Units<'a> {
    Latin1(&'a [u8]),
    Utf16(&'a [u16]),
}

impl Storage {
    fn units(&self) -> Units<'_> {
        match self {
            Storage::Text(JsText::Latin1(b)) => Units::Latin1(b),
            Storage::Text(JsText::Utf16(u)) => Units::Utf16(u),
            Storage::Shared(buffer, range) => Units::Latin1(&buffer[range.clone()]),
        }
    }
}

/// A JS string of `storage`'s code units that, when long, keeps pointing at them instead of
/// copying them onto the V8 heap (an external string; the finalizer lets go of the storage when
/// the string is collected). A warm listing hands over ~40 MB of session text: copied, that was
/// most of the JS thread's work (allocation, page faults, then the young-generation GC copying it
/// again). Short texts, and every text on a Node without external strings, are copied.
///
/// # Safety
/// `env` is the environment of the running call, on its thread.
pub unsafe fn external_string(
    env: sys::napi_env,
    storage: impl Into<Storage>,
) -> Result<sys::napi_value> {
    let storage = storage.into();
    let len = match storage.units() {
        Units::Latin1(b) => b.len(),
        Units::Utf16(u) => u.len(),
    };
    // SAFETY: `env` is live, this function's contract.
    if len < EXTERNAL_TEXT_MIN || !unsafe { has_external_strings(env) } {
        // SAFETY: as above.
        return unsafe { copied_string(env, storage.units()) };
    }
    let hint = Box::into_raw(Box::new(storage));
    // SAFETY: `hint` comes from `Box::into_raw` just above and is freed only by the finalizer
    // or below, after the last use of `units`.
    let units = unsafe { &*hint }.units();
    let mut v = std::ptr::null_mut();
    let mut copied = false;
    // SAFETY: `env` is live (this function's contract). The units belong to `*hint`, which stays
    // allocated until V8 passes `hint` to `drop_storage` (at once if it copied the text instead),
    // so they outlive the string that points at them.
    let status = unsafe {
        match units {
            Units::Latin1(b) => sys::node_api_create_external_string_latin1(
                env,
                b.as_ptr().cast_mut().cast(),
                b.len() as isize,
                Some(drop_storage),
                hint.cast(),
                &mut v,
                &mut copied,
            ),
            Units::Utf16(u) => sys::node_api_create_external_string_utf16(
                env,
                u.as_ptr(),
                u.len() as isize,
                Some(drop_storage),
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

/// The finalizer of [`external_string`]'s strings: lets go of the storage they pointed at.
///
/// # Safety
/// `hint` is the `Box<Storage>` pointer given with the string; V8 finalizes a string once.
unsafe extern "C" fn drop_storage(
    _env: sys::node_api_basic_env,
    _data: *mut std::ffi::c_void,
    hint: *mut std::ffi::c_void,
) {
    // SAFETY: this function's contract: `hint` came from `Box::into_raw` and is passed once.
    drop(unsafe { Box::from_raw(hint.cast::<Storage>()) });
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

/// A JS string of `units` (a plain copy on the JS side, unlike UTF-8).
///
/// # Safety
/// `env` is the environment of the running call, on its thread.
unsafe fn copied_string(env: sys::napi_env, units: Units<'_>) -> Result<sys::napi_value> {
    match units {
        // SAFETY: `env` is live, this function's contract.
        Units::Latin1(b) => unsafe { latin1(env, b) },
        Units::Utf16(u) => {
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
