//! Core errors as JS errors: invalid input becomes a `TypeError` (the JS layer rethrows
//! `InvalidArg`), and a panic in core code becomes an error instead of killing the process. Apart
//! from the conversions so that the modules below `convert` (the JS archive store) can use them.

use context_compact_core::base::error::ValidationError;
use napi::bindgen_prelude::*;
use std::panic::AssertUnwindSafe;

/// Invalid input: the JS layer rethrows these as `TypeError`.
pub(crate) fn invalid(error: ValidationError) -> Error {
    Error::new(Status::InvalidArg, error.to_string())
}

pub(crate) fn internal(what: &str) -> Error {
    Error::new(
        Status::GenericFailure,
        format!("context-compact internal error in {what}; please report it"),
    )
}

/// Runs core code so that a panic becomes a JS error instead of killing the process.
pub(crate) fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| Err(internal(what)))
}
