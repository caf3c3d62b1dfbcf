//! What was learnt about models, kept in the store (`archive::learnt`): read for one model, and
//! written after a compaction learnt something. Store IO runs on the blocking pool, except for
//! the synchronous read a `Compactor` makes once (a directory or an object-store URL; never a JS
//! `archiveStore`, whose functions need the JS thread).

use std::path::PathBuf;

use context_compact_core::archive::learnt;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::json;

use crate::convert::internal;
use crate::js_store;

/// What the store's record holds for `model` (`learnt::LearntRead::for_model`), as JSON.
fn read_for(
    output_dir: &str,
    store: Option<std::sync::Arc<context_compact_core::archive::store::ArchiveStore>>,
    model: &str,
) -> String {
    let read = learnt::read(&PathBuf::from(output_dir), store.as_deref());
    read.for_model(model).to_string()
}

/// Reads what the store's record holds for `model`, synchronously (a directory or an
/// object-store URL; a JS `archiveStore` is read with [`read_learnt_models_json`]).
#[napi]
pub fn read_learnt_models_sync_json(
    output_dir: String,
    store_json: Option<String>,
    model: String,
) -> Result<String> {
    crate::convert::guarded("readLearntModels", || {
        let store = js_store::location(&output_dir, store_json.as_deref())?;
        Ok(read_for(&output_dir, store, &model))
    })
}

/// Reads what the store's record holds for `model`, on the blocking pool.
#[napi]
pub async fn read_learnt_models_json(
    output_dir: String,
    store_json: Option<String>,
    model: String,
) -> Result<String> {
    let store = js_store::location(&output_dir, store_json.as_deref())?;
    tokio::task::spawn_blocking(move || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            read_for(&output_dir, store, &model)
        }))
    })
    .await
    .map_err(|_| internal("readLearntModels"))?
    .map_err(|_| internal("readLearntModels"))
}

/// Keeps what was learnt (`updates_json`: `[{ model, window?, factor? }]`) in the store's
/// record. Resolves with the warnings as a JSON array (a record that could not be read and was
/// replaced); rejects when it could not be written.
#[napi]
pub async fn record_learnt_models_json(
    output_dir: String,
    store_json: Option<String>,
    updates_json: String,
) -> Result<String> {
    let updates: Vec<learnt::Learnt> = serde_json::from_str(&updates_json)
        .map_err(|e| Error::new(Status::InvalidArg, format!("learnt models: {e}")))?;
    let store = js_store::location(&output_dir, store_json.as_deref())?;
    let written = tokio::task::spawn_blocking(move || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            learnt::record(&PathBuf::from(&output_dir), store.as_deref(), &updates)
        }))
    })
    .await
    .map_err(|_| internal("recordLearntModels"))?
    .map_err(|_| internal("recordLearntModels"))?;
    match written {
        Ok(warnings) => Ok(json!(warnings).to_string()),
        Err(e) => Err(Error::new(Status::GenericFailure, e.to_string())),
    }
}
