//! Routes the core's `tracing` events to JavaScript users.
//!
//! - By default nothing is written anywhere: a library has no business on its caller's stderr.
//!   What a user needs to know is in the results (`result.warnings`, `error`) and the events.
//! - The environment variable `CONTEXT_COMPACT_LOG` (`error`, `warn`, `info`, `debug`, `trace`,
//!   `off`: this library's events at that level; or any `tracing-subscriber` filter directive)
//!   writes events to stderr, for a process whose code cannot be changed.
//! - A call made with an `onLog` / `logger` / `logLevel` option instead sends the events it
//!   causes (`debug` and above, from this library only) to a JS function (lib/addon/callbacks.js
//!   `wrapLog`, which hands them to the caller's function or writes those at `logLevel` and
//!   above to stderr), and never to stderr from here. The function is registered for the
//!   duration of the call in a tokio task-local, so concurrent calls each receive their own
//!   events.

use std::future::Future;
use std::io::IsTerminal;
use std::sync::Arc;

use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::filter::{filter_fn, DynFilterFn, FilterExt};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, registry, EnvFilter};

/// The JS side of `onLog`: receives one log entry as JSON.
pub type JsLogFn = ThreadsafeFunction<String, (), String, Status, false>;

tokio::task_local! {
    static CALL_LOGGER: Arc<JsLogFn>;
}

/// Runs `work` with `logger` receiving the tracing events it emits.
pub async fn with_logger<F: Future>(logger: Option<JsLogFn>, work: F) -> F::Output {
    match logger {
        Some(logger) => CALL_LOGGER.scope(Arc::new(logger), work).await,
        None => work.await,
    }
}

fn in_logged_call() -> bool {
    CALL_LOGGER.try_with(|_| ()).is_ok()
}

/// Forwards events to the current call's `onLog`.
struct JsLogLayer;

impl<S: Subscriber> Layer<S> for JsLogLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let Ok(logger) = CALL_LOGGER.try_with(Arc::clone) else {
            return;
        };
        let entry = context_compact_core::base::log::event_entry(event);
        logger.call(entry.to_string(), ThreadsafeFunctionCallMode::NonBlocking);
    }
}

/// This library's events at `debug` and above.
fn ours(metadata: &Metadata<'_>) -> bool {
    metadata.target().starts_with("context_compact") && *metadata.level() <= Level::DEBUG
}

/// The filter of `CONTEXT_COMPACT_LOG` (`base::log::env_directive`); one that cannot be read
/// is `off`.
fn env_filter(value: Option<&str>) -> EnvFilter {
    let directive = context_compact_core::base::log::env_directive(value);
    EnvFilter::try_new(directive).unwrap_or_else(|_| EnvFilter::new("off"))
}

pub fn install() {
    let env_filter = env_filter(std::env::var("CONTEXT_COMPACT_LOG").ok().as_deref());
    // Events of a call that has its own logger do not also go to stderr.
    let not_routed = DynFilterFn::new(|_: &Metadata<'_>, _: &Context<'_, _>| !in_logged_call());
    let stderr = fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(true)
        .without_time()
        .with_filter(env_filter.and(not_routed));
    let js = JsLogLayer.with_filter(filter_fn(ours));
    // Another subscriber may already be installed (e.g. two copies of the addon); keep it.
    let _ = registry().with(stderr).with(js).try_init();
}
