//! History: list, restore, prune (SanBot). File IO runs on the blocking pool.

use crate::convert::{internal, invalid, parse_format, parse_input};
use crate::js_json::JsMessages;
use crate::js_store;
use context_compact_core::archive::{self, session, store::ArchiveStore};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{json, Value};
use std::panic::AssertUnwindSafe;
use std::path::Path;

// ---------------------------------------------------------------------------------------------
// History: list, restore, prune (SanBot). File IO runs on the blocking pool.

/// Runs blocking history work and converts its error: invalid arguments become `InvalidArg`
/// (a TypeError in JS); the others are returned for the caller to convert.
pub(crate) async fn history_task<T: Send + 'static>(
    what: &'static str,
    work: impl FnOnce() -> std::result::Result<T, archive::HistoryError> + Send + 'static,
) -> Result<std::result::Result<T, archive::HistoryError>> {
    tokio::task::spawn_blocking(move || std::panic::catch_unwind(AssertUnwindSafe(work)))
        .await
        .map_err(|_| internal(what))?
        .map_err(|_| internal(what))
}

pub(crate) fn history_error(error: archive::HistoryError) -> Error {
    match error {
        archive::HistoryError::Invalid(e) => invalid(e),
        other => Error::new(Status::GenericFailure, other.to_string()),
    }
}

/// The archives of a session as a JSON array of `ArchiveInfo`.
#[napi]
pub async fn list_archives_json(
    output_dir: String,
    session_id: String,
    store_json: Option<String>,
) -> Result<String> {
    archive::validate_session_id(&session_id).map_err(invalid)?;
    let store = js_store::location(&output_dir, store_json.as_deref())?;
    let listed = history_task("listArchives", move || {
        let store = ArchiveStore::at(Path::new(&output_dir), store.as_deref());
        session::list_archives(&store, &session_id)
    })
    .await?;
    let infos = listed.map_err(history_error)?;
    serde_json::to_string(&infos).map_err(|_| internal("listArchives"))
}

/// Restores a compacted message list. Resolves with `{"pieces": [...]}` (an index into
/// the input, or a message read back from an archive) or, when an archive is missing or
/// unusable, `{"error": {"code", "message"}}` for the JS layer to throw.
#[napi]
pub async fn restore_messages_json(
    #[napi(ts_arg_type = "object[]")] messages: JsMessages,
    output_dir: Option<String>,
    session_id: Option<String>,
    format: Option<String>,
    store_json: Option<String>,
) -> Result<String> {
    let input = std::sync::Arc::new(parse_input(messages, parse_format(format)?)?);
    let for_restore = input.clone();
    if let Some(session_id) = &session_id {
        archive::validate_session_id(session_id).map_err(invalid)?;
    }
    let output_dir = output_dir.unwrap_or_else(|| archive::DEFAULT_OUTPUT_DIR.to_string());
    let store = js_store::location(&output_dir, store_json.as_deref())?;
    let restored = history_task("restoreMessages", move || {
        let store = ArchiveStore::at(Path::new(&output_dir), store.as_deref());
        session::restore_messages(
            &store,
            for_restore.messages(),
            session_id.as_deref().unwrap_or(archive::DEFAULT_SESSION_ID),
        )
    })
    .await?;
    let out = match restored {
        Ok(pieces) => {
            let pieces: Vec<Value> = input
                .restored(pieces)
                .into_iter()
                .map(|piece| match piece {
                    archive::Restored::Original(index) => json!(index),
                    archive::Restored::Archived(message) => message,
                })
                .collect();
            json!({ "pieces": pieces })
        }
        Err(archive::HistoryError::Invalid(e)) => return Err(invalid(e)),
        Err(e) => json!({ "error": { "code": e.code(), "message": e.to_string() } }),
    };
    Ok(out.to_string())
}

/// Prunes old archives; resolves with `{"removed": [...], "kept": n}` as JSON.
#[napi]
pub async fn prune_archives_json(
    output_dir: String,
    older_than_days: Option<f64>,
    session_id: Option<String>,
    store_json: Option<String>,
) -> Result<String> {
    let mut options = archive::PruneOptions::default();
    if let Some(days) = older_than_days {
        options.older_than_days = days;
    }
    options.session_id = session_id;
    let store = js_store::location(&output_dir, store_json.as_deref())?;
    let pruned = history_task("pruneArchives", move || {
        let store = ArchiveStore::at(Path::new(&output_dir), store.as_deref());
        session::prune_archives(&store, &options)
    })
    .await?;
    let report = pruned.map_err(history_error)?;
    serde_json::to_string(&report).map_err(|_| internal("pruneArchives"))
}

/// The recall tool's answer (`createRecallTool`): a range of an archive, or the passages of the
/// session's archives that match a query, as text within `max_tokens`. The agent's input never
/// makes this reject: what is wrong with it is said in the text.
#[napi]
pub async fn recall_json(
    output_dir: String,
    session_id: String,
    input_json: String,
    max_tokens: u32,
    store_json: Option<String>,
) -> Result<String> {
    archive::validate_session_id(&session_id).map_err(invalid)?;
    let store = js_store::location(&output_dir, store_json.as_deref())?;
    let input: Value = match serde_json::from_str(&input_json) {
        Ok(input) => input,
        Err(e) => return Ok(format!("The recall tool's input is not valid JSON: {e}")),
    };
    let answered = history_task("recall", move || {
        let store = ArchiveStore::at(Path::new(&output_dir), store.as_deref());
        Ok(archive::recall::recall(
            archive::recall::Location::Store(&store),
            &session_id,
            &input,
            max_tokens as usize,
            context_compact_core::model::tokens::Encoding::O200kBase,
        ))
    })
    .await?;
    answered.map_err(history_error)
}
