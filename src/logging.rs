//! Routes the core's `tracing` events to JavaScript users.
//!
//! - By default nothing is written anywhere: a library has no business on its caller's stderr.
//!   What a user needs to know is in the results (`result.warnings`, `error`) and the events.
//! - The environment variable `CONTEXT_COMPACT_LOG` (`error`, `warn`, `info`, `debug`, `trace`,
//!   `off`: this library's events at that level; or any `tracing-subscriber` filter directive)
//!   writes events to stderr, for a process whose code cannot be changed.
//! - A call made with an `onLog` / `logger` / `logLevel` option instead sends the events it
//!   causes (`debug` and above, from this library only) to a JS function (lib/callbacks.js
//!   `wrapLog`, which hands them to the caller's function or writes those at `logLevel` and
//!   above to stderr), and never to stderr from here. The function is registered for the
//!   duration of the call in a tokio task-local, so concurrent calls each receive their own
//!   events.

use std::future::Future;
use std::io::IsTerminal;
use std::sync::Arc;

use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use serde_json::{json, Map, Value};
use tracing::field::{Field, Visit};
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

/// Collects an event's message and fields.
#[derive(Default)]
struct JsonFields {
    message: String,
    fields: Map<String, Value>,
}

impl JsonFields {
    fn put(&mut self, field: &Field, value: Value) {
        if field.name() == "message" {
            self.message = match value {
                Value::String(s) => s,
                other => other.to_string(),
            };
        } else {
            self.fields.insert(field.name().to_string(), value);
        }
    }
}

impl Visit for JsonFields {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, json!(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, json!(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, json!(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, json!(value));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, json!(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.put(field, json!(format!("{value:?}")));
    }
}

/// Forwards events to the current call's `onLog`.
struct JsLogLayer;

impl<S: Subscriber> Layer<S> for JsLogLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let Ok(logger) = CALL_LOGGER.try_with(Arc::clone) else {
            return;
        };
        let mut visitor = JsonFields::default();
        event.record(&mut visitor);
        let level = match *event.metadata().level() {
            Level::ERROR => "error",
            Level::WARN => "warn",
            Level::INFO => "info",
            _ => "debug",
        };
        let mut entry = json!({
            "level": level,
            "message": visitor.message,
            "target": event.metadata().target(),
        });
        if !visitor.fields.is_empty() {
            entry["fields"] = Value::Object(visitor.fields);
        }
        logger.call(entry.to_string(), ThreadsafeFunctionCallMode::NonBlocking);
    }
}

/// This library's events at `debug` and above.
fn ours(metadata: &Metadata<'_>) -> bool {
    metadata.target().starts_with("context_compact") && *metadata.level() <= Level::DEBUG
}

/// The filter of `CONTEXT_COMPACT_LOG`: quiet unless it asks (no variable, or one that cannot be
/// read, is `off`). A plain level is this library's events at that level — not those of the
/// HTTP client and the other crates it uses, which a directive such as `hyper=debug` asks for.
fn env_filter(value: Option<&str>) -> EnvFilter {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return EnvFilter::new("off");
    };
    let level = value.to_ascii_lowercase();
    if ["off", "error", "warn", "info", "debug", "trace"].contains(&level.as_str()) {
        return EnvFilter::new(format!(
            "off,context_compact={level},context_compact_core={level}"
        ));
    }
    EnvFilter::try_new(value).unwrap_or_else(|_| EnvFilter::new("off"))
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
