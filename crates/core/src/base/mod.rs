//! Layer 0, **base**: what every layer above shares and that knows nothing of messages: the
//! error types. Nothing here imports another module of the crate.

pub mod error;
