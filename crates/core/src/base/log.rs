//! The library's `tracing` events as a caller in another language receives them: one entry per
//! event (`{"level", "message", "target", "fields"?}`), and what the `CONTEXT_COMPACT_LOG`
//! variable asks for. The binding routes the entries; what they hold is said here.

use serde_json::{json, Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Level};

/// The entry of `event`: its level (`error`, `warn`, `info`, or `debug` for the finer ones),
/// its message, its target and its other fields (left out when it has none).
pub fn event_entry(event: &Event<'_>) -> Value {
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
    entry
}

/// The `tracing-subscriber` filter directive `CONTEXT_COMPACT_LOG` asks for: quiet unless it
/// asks (no variable, or an empty one, is `off`). A plain level (`error` … `trace`, `off`) is
/// this library's events at that level — not those of the HTTP client and the other crates it
/// uses, which a directive such as `hyper=debug` asks for; anything else is taken as a
/// directive (the caller falls back to `off` when it is not one).
pub fn env_directive(value: Option<&str>) -> String {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return "off".to_string();
    };
    let level = value.to_ascii_lowercase();
    if ["off", "error", "warn", "info", "debug", "trace"].contains(&level.as_str()) {
        return format!("off,context_compact={level},context_compact_core={level}");
    }
    value.to_string()
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

#[cfg(test)]
mod tests {
    use super::env_directive;

    #[test]
    fn a_plain_level_is_this_librarys_events_only() {
        assert_eq!(env_directive(None), "off");
        assert_eq!(env_directive(Some("  ")), "off");
        assert_eq!(
            env_directive(Some(" DEBUG ")),
            "off,context_compact=debug,context_compact_core=debug"
        );
        assert_eq!(env_directive(Some("hyper=debug")), "hyper=debug");
    }
}
