//! Layer 0, **base**: what every layer above shares and that knows nothing of messages: the
//! error types ([`error`]), the log entries a caller receives ([`log`]), the retry policy every call to a service follows ([`retry`]), and
//! the text helpers that clip and flatten what the library writes ([`text`]). Nothing here
//! imports another module of the crate.

pub mod error;
pub mod log;
pub mod retry;
pub mod text;

/// The key of the object the JS layer puts in place of a number JSON cannot hold (`NaN`,
/// `Infinity`, `-Infinity`: `JSON.stringify` would write `null`, read as "not given"), so that
/// a check can say what was given: `{"__contextCompactNonFinite": "NaN"}`.
pub const NON_FINITE_KEY: &str = "__contextCompactNonFinite";

/// The `NaN` / `Infinity` / `-Infinity` a JSON value stands for, when it is the JS layer's
/// stand-in ([`NON_FINITE_KEY`]).
pub fn non_finite(value: &serde_json::Value) -> Option<&str> {
    let object = value.as_object()?;
    if object.len() != 1 {
        return None;
    }
    object.get(NON_FINITE_KEY)?.as_str()
}
