//! The one way a core error reaches JS: [`js_error`] makes a JS `Error` (a `TypeError` for a
//! code the core says is about an argument's type or form) with the core's message and its
//! stable `code`, and for an I/O error the fields Node's own `fs` errors have, in Node's
//! order: `errno` (negative, as Node has it), `code` (the errno name, `ENOENT`), `syscall` and
//! `path` (where the call was on a path). Every fallible method returns `napi::Result` through
//! [`ForJs::for_js`]; promises reject through the same function (see `crate::task`).

use napi::bindgen_prelude::*;
use napi::JsValue;
use pi_session_core::Error as CoreError;

/// The JS error for `e`, as a napi error that throws (or rejects with) exactly that object.
pub fn js_error(env: &Env, e: CoreError) -> napi::Error {
    match make(env, &e) {
        Ok(error) => napi::Error::from_unknown_without_coercion(error.to_unknown()),
        // The environment cannot make objects now (it is shutting down): a plain error that
        // names the failure.
        Err(_) => napi::Error::new(Status::GenericFailure, e.message),
    }
}

fn make<'env>(env: &'env Env, e: &CoreError) -> napi::Result<Object<'env>> {
    let message = env.create_string(&e.message)?;
    let mut raw = std::ptr::null_mut();
    let create = if e.code.is_type_error() {
        sys::napi_create_type_error
    } else {
        sys::napi_create_error
    };
    // SAFETY: `env` is the environment of the running call, `message` a string made in it; a
    // null code makes an error without one (set below, after `errno`, in Node's order).
    check_status!(unsafe { create(env.raw(), std::ptr::null_mut(), message.raw(), &mut raw) })?;
    let mut error = Object::from_raw(env.raw(), raw);
    if let Some(errno) = e.errno {
        error.set_named_property("errno", errno)?;
    }
    error.set_named_property("code", e.js_code())?;
    if let Some(syscall) = e.syscall {
        error.set_named_property("syscall", syscall)?;
    }
    if let Some(path) = &e.path {
        error.set_named_property("path", path.as_str())?;
    }
    Ok(error)
}

/// `core_result.for_js(&env)?`: a core result with its error made a JS one (see [`js_error`]).
pub trait ForJs<T> {
    fn for_js(self, env: &Env) -> napi::Result<T>;
}

impl<T> ForJs<T> for pi_session_core::Result<T> {
    fn for_js(self, env: &Env) -> napi::Result<T> {
        self.map_err(|e| js_error(env, e))
    }
}
