//! How a core error reaches JS.

/// The `code` a thrown JS error carries (napi-rs uses the error status as `code`).
#[derive(Debug, Clone, Copy)]
pub struct Code(pub &'static str);

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        self.0
    }
}

pub fn to_napi(e: pi_session_core::Error) -> napi::Error<Code> {
    napi::Error::new(Code(e.js_code()), e.message)
}
