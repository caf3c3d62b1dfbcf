//! Conversions at the boundary: the JSON texts and names the JS layer passes read into core
//! values (errors to JS errors: [`crate::errors`]).

use crate::js_json::{JsMessageList, JsMessages};
use crate::js_store;
use context_compact_core::formats::{self, Format, Input};
use context_compact_core::model::{message, tokens};
use context_compact_core::options::table;
use context_compact_core::pipeline::CompactOptions;
use context_compact_core::providers::ProviderOptions;
use napi::bindgen_prelude::*;
use serde_json::Value;
use std::sync::{Arc, Mutex};

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
    format.map_or(Ok(None), |name| table::format_named(&name).map_err(invalid))
}

/// The list read in its format (detected unless `format` names one), validated.
pub(crate) fn parse_input(messages: JsMessages, format: Option<Format>) -> Result<Input> {
    Input::read(messages.0, format).map_err(invalid)
}

pub(crate) fn parse_options(options_json: Option<String>) -> Result<CompactOptions> {
    parse_options_and_value(options_json).map(|(options, _)| options)
}

/// Options read from a text: the struct and the JSON (for the provider options).
type ReadOptions = (CompactOptions, Arc<Value>);

/// Options read once per text, for the stateless functions: a loop that calls them with the
/// same options at every step (`shouldCompact(messages, options)`) pays for reading them — the
/// JSON, every option's check, an object store opened — the first time only. Keyed by the exact
/// text; the few most recent kept. A `Compactor` holds its options instead
/// (`options::HeldOptions`) and hands over only what a call changes.
static READ_OPTIONS: Mutex<Vec<(String, Arc<ReadOptions>)>> = Mutex::new(Vec::new());
const READ_OPTIONS_KEPT: usize = 8;

fn read_options(text: &str) -> Result<Arc<ReadOptions>> {
    let held = |cache: &[(String, Arc<ReadOptions>)]| {
        cache
            .iter()
            .find(|(key, _)| key == text)
            .map(|(_, read)| read.clone())
    };
    if let Some(read) = READ_OPTIONS.lock().ok().and_then(|cache| held(&cache)) {
        return Ok(read);
    }
    let value = parse_json(text, "options")?;
    let options = CompactOptions::from_json(&value).map_err(invalid)?;
    ProviderOptions::from_json(&value).map_err(invalid)?;
    let read = Arc::new((options, Arc::new(value)));
    if let Ok(mut cache) = READ_OPTIONS.lock() {
        if cache.len() >= READ_OPTIONS_KEPT {
            cache.remove(0);
        }
        cache.push((text.to_string(), read.clone()));
    }
    Ok(read)
}

/// The options, and the JSON object they came from (for the provider options). Invalid
/// provider options (`provider`, `apiKey`, `baseUrl`, `timeoutMs`) are rejected here too, so
/// that a `Compactor` reports them when it is created.
pub(crate) fn parse_options_and_value(
    options_json: Option<String>,
) -> Result<(CompactOptions, Arc<Value>)> {
    let read = match options_json {
        Some(text) => read_options(&text)?,
        None => read_options("null")?,
    };
    let (mut options, value) = (read.0.clone(), read.1.clone());
    // The caller's own store is registered per call: attached to this call's copy.
    js_store::attach(&mut options, &value)?;
    Ok((options, value))
}

pub(crate) fn parse_encoding(encoding: Option<String>) -> Result<tokens::Encoding> {
    encoding.map_or(Ok(tokens::Encoding::default()), |name| {
        table::encoding_named(&name).map_err(invalid)
    })
}
