//! Work run on the libuv thread pool, its result the value of a promise.

use napi::bindgen_prelude::*;
use pi_session_core::Error as CoreError;

use crate::error::js_error;

type Work<T> = Box<dyn FnOnce() -> pi_session_core::Result<T> + Send>;

/// A computation run on the libuv thread pool whose result becomes the promise's value. A core
/// error rejects the promise with the JS error [`js_error`] makes of it (back on the JS thread,
/// where JS values can be made).
pub struct OffThread<T> {
    work: Option<Work<T>>,
    failed: Option<CoreError>,
}

impl<T> OffThread<T> {
    pub fn task(
        work: impl FnOnce() -> pi_session_core::Result<T> + Send + 'static,
    ) -> AsyncTask<OffThread<T>>
    where
        OffThread<T>: Task,
    {
        AsyncTask::new(OffThread {
            work: Some(Box::new(work)),
            failed: None,
        })
    }

    fn fail(&mut self, e: CoreError) -> Result<T> {
        let placeholder = napi::Error::new(Status::GenericFailure, e.message.clone());
        self.failed = Some(e);
        Err(placeholder)
    }
}

impl<T: ToNapiValue + TypeName + Send + 'static> Task for OffThread<T> {
    type Output = T;
    type JsValue = T;

    fn compute(&mut self) -> Result<T> {
        // This runs on libuv's pool, where napi-rs catches no panic: one unwinding through the
        // pool's C frames would end the process. A panic rejects the promise instead.
        let outcome = match self.work.take() {
            Some(work) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                .unwrap_or_else(|_| {
                    Err(CoreError::internal(
                        "a background task of pi-session-native panicked (a bug: please report it)",
                    ))
                }),
            None => Err(CoreError::internal("task ran twice")),
        };
        outcome.or_else(|e| self.fail(e))
    }

    fn resolve(&mut self, _env: Env, output: T) -> Result<T> {
        Ok(output)
    }

    fn reject(&mut self, env: Env, err: napi::Error) -> Result<T> {
        Err(match self.failed.take() {
            Some(e) => js_error(&env, e),
            None => err,
        })
    }
}
