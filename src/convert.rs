//! Conversions at the boundary: the JSON texts and names the JS layer passes read into core
//! values (errors to JS errors: [`crate::errors`]).

use crate::js_json::{JsMessageList, JsMessages};
use crate::js_store;
use context_compact_core::base::error::ValidationError;
use context_compact_core::formats::{self, Format, Input};
use context_compact_core::model::{message, tokens};
use context_compact_core::pipeline::CompactOptions;
use context_compact_core::providers::ProviderOptions;
use napi::bindgen_prelude::*;
use serde_json::Value;

pub(crate) use crate::errors::{guarded, internal, invalid};

pub(crate) fn parse_json(text: &str, what: &str) -> Result<Value> {
    message::parse_json_lenient(text)
        .map_err(|e| Error::new(Status::InvalidArg, format!("{what}: {e}")))
}

/// Messages cross from JS as the objects themselves, read with `JSON.stringify`'s rules (see
/// `js_json`): no JSON text is built on either side. Each message is read (on the JS thread,
/// as N-API requires), validated, counted and dropped before the next one is read, on the
/// same thread: its strings are counted while they are still in the core's cache, and the
/// whole conversation never exists at once in Rust. Reading everything first and counting on
/// the thread pool was measured slower (README, "Performance"): the pool's workers count from
/// cold caches, and on two cores they compete with V8's own background threads.
/// The first invalid message by index is reported, as `message::validate` does.
pub(crate) fn count_list(
    encoding: tokens::Encoding,
    messages: JsMessageList,
    format: Option<Format>,
) -> Result<Vec<usize>> {
    let mut counter = formats::ItemCounter::new(format);
    messages.for_each(|index, message| counter.push(encoding, index, message).map_err(invalid))?;
    Ok(counter.finish())
}

/// The `format` option (`None`: detect it from the list).
pub(crate) fn parse_format(format: Option<String>) -> Result<Option<Format>> {
    match format {
        None => Ok(None),
        Some(name) => Format::parse(&name).ok_or_else(|| {
            invalid(ValidationError::argument(
                "options.format",
                format!("expected {}, got {name:?}", formats::FORMAT_NAMES),
            ))
        }),
    }
}

/// The list read in its format (detected unless `format` names one), validated.
pub(crate) fn parse_input(messages: JsMessages, format: Option<Format>) -> Result<Input> {
    Input::read(messages.0, format).map_err(invalid)
}

pub(crate) fn parse_options(options_json: Option<String>) -> Result<CompactOptions> {
    parse_options_and_value(options_json).map(|(options, _)| options)
}

/// The options, and the JSON object they came from (for the provider options). Invalid
/// provider options (`provider`, `apiKey`, `baseUrl`, `timeoutMs`) are rejected here too, so
/// that a `Compactor` reports them when it is created.
pub(crate) fn parse_options_and_value(
    options_json: Option<String>,
) -> Result<(CompactOptions, Value)> {
    let value = match options_json {
        Some(text) => parse_json(&text, "options")?,
        None => Value::Null,
    };
    let mut options = CompactOptions::from_json(&value).map_err(invalid)?;
    js_store::attach(&mut options, &value)?;
    ProviderOptions::from_json(&value).map_err(invalid)?;
    Ok((options, value))
}

pub(crate) fn parse_encoding(encoding: Option<String>) -> Result<tokens::Encoding> {
    match encoding {
        None => Ok(tokens::Encoding::default()),
        Some(name) => tokens::Encoding::parse(&name).ok_or_else(|| {
            invalid(ValidationError::argument(
                "options.encoding",
                format!("unknown encoding {name:?} (expected \"o200k_base\" or \"cl100k_base\")"),
            ))
        }),
    }
}
