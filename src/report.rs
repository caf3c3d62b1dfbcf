//! What a session report (`renderReport`, `lib/report/report.js`) reads: what each message is made
//! of, and what a session recorded (its audit events, archives and metadata files).

use crate::convert::{guarded, internal, invalid, parse_encoding, parse_format};
use crate::history::{history_error, history_task};
use crate::js_json::JsMessages;
use crate::js_store;
use context_compact_core::archive::store::ArchiveStore;
use context_compact_core::archive::{self, records};
use context_compact_core::formats::parts;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::json;
use std::path::PathBuf;

/// Each message described (`formats::parts`): `{"format", "items": [{role, group, tokens,
/// parts: [{type, tokens, name?, error?}], summary?, ack?, preview}]}` as JSON.
#[napi]
pub fn report_items_json(
    #[napi(ts_arg_type = "object[]")] messages: JsMessages,
    encoding: Option<String>,
    format: Option<String>,
    preview_chars: u32,
) -> Result<String> {
    guarded("renderReport", || {
        let encoding = parse_encoding(encoding)?;
        let (format, items) = parts::item_parts(
            encoding,
            &messages.0,
            parse_format(format)?,
            preview_chars as usize,
        )
        .map_err(invalid)?;
        Ok(json!({ "format": format.name(), "items": items }).to_string())
    })
}

/// A session's audit events and the named archives and metadata files (`null` for one that is
/// missing or unreadable): `{"events": [...], "files": [...]}` as JSON.
#[napi]
pub async fn read_session_json(
    output_dir: String,
    session_id: String,
    names: Vec<String>,
    store_json: Option<String>,
) -> Result<String> {
    archive::validate_session_id(&session_id).map_err(invalid)?;
    let store = js_store::location(&output_dir, store_json.as_deref())?;
    let read = history_task("renderReport", move || {
        let store = ArchiveStore::at(&PathBuf::from(output_dir), store.as_deref());
        Ok((
            records::read_events(&store, &session_id)?,
            records::read_files(&store, &session_id, &names)?,
        ))
    })
    .await?;
    let (events, files) = read.map_err(history_error)?;
    serde_json::to_string(&json!({ "events": events, "files": files }))
        .map_err(|_| internal("renderReport"))
}
