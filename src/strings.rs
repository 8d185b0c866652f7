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
    /// What V8 is told the string's storage costs (see `external_string`): its own code units'
    /// bytes. Not a shared line buffer's: those hold the image data of a big session's entries,
    /// which live as long as the entries do, and counting them made V8 collect, for memory it
    /// could not free, all through materializing a 1 GiB session (~800 ms became ~920 ms).
    fn bytes(&self) -> i64 {
        match self {
            Storage::Text(JsText::Latin1(b)) => b.len() as i64,
            Storage::Text(JsText::Utf16(u)) => 2 * u.len() as i64,
            Storage::Shared(..) => 0,
        }
    }

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
    // V8 is told what the string's storage costs, and told again (less) when it finalizes the
    // string: otherwise a loop that reads session after session (open, buildSessionContext)
    // grew to 487 MB instead of ~270, by batch texts and cut strings nobody held, which a heap of
    // a few megabytes gave V8 no reason to collect. (Told first: a string V8 copies instead is
    // finalized during the call.)
    let bytes = storage.bytes();
    // SAFETY: `env` is live, this function's contract.
    unsafe { adjust_external_memory(env, bytes) };
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
        // SAFETY: as above.
        unsafe { adjust_external_memory(env, -bytes) };
    }
    check_status!(status)?;
    Ok(v)
}

/// The finalizer of [`external_string`]'s strings: lets go of the storage they pointed at.
///
/// # Safety
/// `hint` is the `Box<Storage>` pointer given with the string; V8 finalizes a string once.
unsafe extern "C" fn drop_storage(
    env: sys::node_api_basic_env,
    _data: *mut std::ffi::c_void,
    hint: *mut std::ffi::c_void,
) {
    // SAFETY: this function's contract: `hint` came from `Box::into_raw` and is passed once.
    let storage = unsafe { Box::from_raw(hint.cast::<Storage>()) };
    let bytes = storage.bytes();
    drop(storage);
    // SAFETY: a finalizer's environment may adjust external memory (a basic call, allowed while
    // V8 finalizes; napi-rs does the same for its buffers).
    unsafe { adjust_external_memory(env.cast(), -bytes) };
}

/// Tell V8 that memory outside its heap, held by its strings, grew (or shrank) by `bytes`
/// (nothing to tell when 0: a shared buffer's string).
///
/// # Safety
/// `env` is a live environment (a finalizer's included).
unsafe fn adjust_external_memory(env: sys::napi_env, bytes: i64) {
    if bytes == 0 {
        return;
    }
    let mut total = 0;
    // SAFETY: this function's contract. A failure only leaves V8's estimate as it was.
    let _ = unsafe { sys::napi_adjust_external_memory(env, bytes, &mut total) };
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
