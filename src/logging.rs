//! Routes the core's `tracing` events to stderr, so JS users see warnings (unknown block
//! types, retries, archive failures) without configuring anything.
//!
//! The level comes from `CONTEXT_COMPACT_LOG` (`error`, `warn` — the default —, `info`,
//! `debug`, `trace`, `off`, or any `tracing-subscriber` filter directive).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

pub fn install() {
    let filter =
        EnvFilter::try_from_env("CONTEXT_COMPACT_LOG").unwrap_or_else(|_| EnvFilter::new("warn"));
    // Another subscriber may already be installed (e.g. two copies of the addon); keep it.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(true)
        .without_time()
        .try_init();
}
