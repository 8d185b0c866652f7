//! Work run on the libuv thread pool, its result the value of a promise.

use napi::bindgen_prelude::*;

/// A computation run on the libuv thread pool whose result becomes the promise's value.
pub struct OffThread<T> {
    work: Option<Box<dyn FnOnce() -> Result<T> + Send>>,
}

impl<T> OffThread<T> {
    pub fn task(work: impl FnOnce() -> Result<T> + Send + 'static) -> AsyncTask<OffThread<T>>
    where
        OffThread<T>: Task,
    {
        AsyncTask::new(OffThread {
            work: Some(Box::new(work)),
        })
    }
}

impl<T: ToNapiValue + TypeName + Send + 'static> Task for OffThread<T> {
    type Output = T;
    type JsValue = T;

    fn compute(&mut self) -> Result<T> {
        // This runs on libuv's pool, where napi-rs catches no panic: one unwinding through the
        // pool's C frames would end the process. A panic rejects the promise instead.
        match self.work.take() {
            Some(work) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                .unwrap_or_else(|_| {
                    Err(napi::Error::new(
                        Status::GenericFailure,
                        "a background task of pi-session-native panicked (a bug: please report it)",
                    ))
                }),
            None => Err(napi::Error::new(Status::GenericFailure, "task ran twice")),
        }
    }

    fn resolve(&mut self, _env: Env, output: T) -> Result<T> {
        Ok(output)
    }
}
