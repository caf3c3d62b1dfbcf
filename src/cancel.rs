//! Cancellation: the JS layer creates a token per call and cancels it when its AbortSignal
//! fires.

use napi_derive::napi;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use tokio_util::sync::CancellationToken;

// ---------------------------------------------------------------------------------------------
// Cancellation: the JS layer creates a token per call and cancels it when its AbortSignal fires.

pub(crate) fn cancel_tokens() -> &'static Mutex<HashMap<u32, CancellationToken>> {
    static TOKENS: OnceLock<Mutex<HashMap<u32, CancellationToken>>> = OnceLock::new();
    TOKENS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Creates a cancellation token and returns its id.
#[napi]
pub fn create_cancel_token() -> u32 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    cancel_tokens()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id, CancellationToken::new());
    id
}

/// Cancels the work using a token.
#[napi]
pub fn cancel_token(id: u32) {
    if let Some(token) = cancel_tokens()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&id)
    {
        token.cancel();
    }
}

/// Forgets a token.
#[napi]
pub fn release_cancel_token(id: u32) {
    cancel_tokens()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&id);
}

pub(crate) fn token_for(id: Option<u32>) -> CancellationToken {
    id.and_then(|id| {
        cancel_tokens()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .cloned()
    })
    .unwrap_or_default()
}
