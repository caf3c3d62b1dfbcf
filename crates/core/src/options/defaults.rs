//! The defaults of the options that are plain values: the PRD's four (re-exported at the crate
//! root, where callers have always found them) and the library's own. `CompactOptions::default()`
//! and the option table ([`super::table`]) read them from here, so a default is written once.

/// The PRD's default context window (tokens).
pub const CONTEXT_TOKEN_LIMIT: usize = 200_000;
/// The PRD's default trigger ratio.
pub const COMPACT_THRESHOLD_RATIO: f64 = 0.92;
/// The PRD's default tail budget ratio.
pub const TAIL_RETENTION_RATIO: f64 = 0.10;
/// The PRD's default retry count.
pub const COMPACT_MAX_RETRIES: u32 = 2;

/// The first retry's backoff in milliseconds (each later one doubles).
pub const RETRY_BASE_DELAY_MS: u64 = 500;
/// The summary's output budget in tokens.
pub const SUMMARY_MAX_TOKENS: u32 = 4096;
/// How many recent messages `keep-recent` and `keep-system-and-recent` keep.
pub const KEEP_RECENT_MESSAGES: usize = 20;
/// The budget of the task list after a summary: a long list of short items.
pub const PLAN_MAX_TOKENS: usize = 2_000;
/// The budget of the latest failure after a summary: the call and a few lines.
pub const LATEST_FAILURE_MAX_TOKENS: usize = 300;
/// How long one summary request may take, in milliseconds.
pub const TIMEOUT_MS: u64 = 60_000;
