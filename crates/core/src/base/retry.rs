//! How a failed attempt is repeated: the number of retries and the backoff between them, the
//! same for every seam that calls a service (a summary provider, an archive's object store, a
//! learnt-limits store). It lives in the base layer so that the archive and the summary share
//! one policy without one of them importing the other.

use std::time::Duration;

use rand::Rng;

/// How attempts are repeated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Attempts after the first (PRD `COMPACT_MAX_RETRIES`, default 2). 0 = one attempt.
    pub max_retries: u32,
    /// The first backoff; later ones double, up to 16× this (the SDKs' 0.5 s → 8 s).
    pub base_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            // The PRD's COMPACT_MAX_RETRIES (`options::defaults`, a layer above; its tests check
            // they agree).
            max_retries: 2,
            base_delay: Duration::from_millis(500),
        }
    }
}

/// The longest wait a server's `retry-after` may impose.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

impl RetryPolicy {
    /// The SDKs' backoff before retry number `retry` (0-based): `min(base·2^n, 16·base)`
    /// times a random factor in [0.75, 1].
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 2f64.powi(retry.min(4) as i32);
        let jitter = rand::rng().random_range(0.75..=1.0);
        self.base_delay.mul_f64(factor * jitter)
    }
}
