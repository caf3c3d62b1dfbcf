//! The JS `archiveStore` (`{ put, get, list, delete }`, async functions) as a core
//! [`StoreBackend`], and where a call's archives go (a directory, an object-store URL, or that
//! store).
//!
//! The JS layer (`index.js`) normalizes the user's store into four functions, registers them
//! for one call (`registerArchiveStore` → an id passed in the options JSON as
//! `archiveStoreId`), and releases them when the call ends. The core calls them from its store
//! runtime through threadsafe functions, as the binding calls JS summarizers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use context_compact_core::archive::store::{
    ArchiveStore, StoreBackend, StoreError, StoreFuture, StoredObject,
};
use context_compact_core::base::retry::RetryPolicy;
use context_compact_core::pipeline::CompactOptions;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use serde_json::Value;

/// What `put` receives: the key, the bytes, and whether the write is create-only.
#[napi(object)]
pub struct StorePutCall {
    pub key: String,
    pub bytes: Buffer,
    pub if_not_exists: bool,
}

/// `put` → `true` when written, `false` when `ifNotExists` found the key taken.
type PutFn = ThreadsafeFunction<StorePutCall, Promise<bool>, StorePutCall, Status, false>;
/// `get` → the bytes, or `null` when there is no such key.
type GetFn = ThreadsafeFunction<String, Promise<Option<Buffer>>, String, Status, false>;
/// `list(prefix)` → JSON `[{ "key", "size", "lastModified" (ms since the epoch or null) }]`.
type ListFn = ThreadsafeFunction<String, Promise<String>, String, Status, false>;
/// `delete(key)` → nothing.
type DeleteFn = ThreadsafeFunction<String, Promise<()>, String, Status, false>;

struct JsStoreBackend {
    put: PutFn,
    get: GetFn,
    list: ListFn,
    delete: DeleteFn,
}

/// A failure of the JS store: it may be momentary (a database busy), so it is retried with
/// the summary calls' policy.
fn failed(what: &str, e: Error) -> StoreError {
    StoreError::Transient(format!("archiveStore.{what} failed: {}", e.reason))
}

/// The registered functions, shared by the operations in flight.
struct JsStore(Arc<JsStoreBackend>);

impl StoreBackend for JsStore {
    fn put(&self, key: String, bytes: Vec<u8>, create_only: bool) -> StoreFuture<()> {
        let this = self.0.clone();
        Box::pin(async move {
            let call = StorePutCall {
                key,
                bytes: bytes.into(),
                if_not_exists: create_only,
            };
            let promise = this
                .put
                .call_async(call)
                .await
                .map_err(|e| failed("put", e))?;
            match promise.await.map_err(|e| failed("put", e))? {
                true => Ok(()),
                false => Err(StoreError::AlreadyExists),
            }
        })
    }

    fn get(&self, key: String) -> StoreFuture<Option<Vec<u8>>> {
        let this = self.0.clone();
        Box::pin(async move {
            let promise = this
                .get
                .call_async(key)
                .await
                .map_err(|e| failed("get", e))?;
            let found = promise.await.map_err(|e| failed("get", e))?;
            Ok(found.map(|buffer| buffer.to_vec()))
        })
    }

    fn list(&self, dir: String, _shallow: bool) -> StoreFuture<Vec<StoredObject>> {
        // The JS store lists every key under the prefix; the core keeps the direct children
        // when it asked for those.
        let this = self.0.clone();
        Box::pin(async move {
            let prefix = if dir.is_empty() {
                dir
            } else {
                format!("{dir}/")
            };
            let promise = this
                .list
                .call_async(prefix)
                .await
                .map_err(|e| failed("list", e))?;
            let text = promise.await.map_err(|e| failed("list", e))?;
            StoredObject::from_listing(&text, "archiveStore.list")
        })
    }

    fn delete(&self, key: String) -> StoreFuture<()> {
        let this = self.0.clone();
        Box::pin(async move {
            let promise = this
                .delete
                .call_async(key)
                .await
                .map_err(|e| failed("delete", e))?;
            promise.await.map_err(|e| failed("delete", e))
        })
    }
}

fn registry() -> &'static Mutex<HashMap<u32, Arc<JsStoreBackend>>> {
    static STORES: OnceLock<Mutex<HashMap<u32, Arc<JsStoreBackend>>>> = OnceLock::new();
    STORES.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Registers a JS store's four (normalized) functions for one call; returns its id.
#[napi]
pub fn register_archive_store(put: PutFn, get: GetFn, list: ListFn, remove: DeleteFn) -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    registry().lock().unwrap_or_else(|p| p.into_inner()).insert(
        id,
        Arc::new(JsStoreBackend {
            put,
            get,
            list,
            delete: remove,
        }),
    );
    id
}

/// Forgets a registered store (its functions are released once no call uses them).
#[napi]
pub fn release_archive_store(id: u32) {
    registry()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&id);
}

/// How paths on a JS store are shown: `archiveStore:<sessionId>/<name>`.
pub const JS_STORE_LOCATION: &str = "archiveStore:";

fn registered(id: u64, retry: RetryPolicy) -> Result<Arc<ArchiveStore>> {
    let backend = registry()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&(id as u32))
        .cloned()
        .ok_or_else(|| {
            Error::new(
                Status::InvalidArg,
                "archiveStore: the store was released before the call used it".to_string(),
            )
        })?;
    Ok(Arc::new(ArchiveStore::from_backend(
        Arc::new(JsStore(backend)),
        JS_STORE_LOCATION,
        retry,
    )))
}

/// Puts the registered JS store named by `archiveStoreId` in the options, if any.
pub fn attach(options: &mut CompactOptions, raw: &Value) -> Result<()> {
    if let Some(id) = raw.get("archiveStoreId").and_then(Value::as_u64) {
        let retry = RetryPolicy {
            max_retries: options.max_retries,
            base_delay: options.retry_base_delay,
        };
        options.archive_store = Some(registered(id, retry)?);
    }
    Ok(())
}

/// Where the archives of a history call (`persistMessages`, `listArchives`, `restoreMessages`,
/// `pruneArchives`) are: `None` for the directory `output_dir`, else the store — the JS store
/// of `store_json.archiveStoreId`, or the object-store URL `output_dir` configured with
/// `store_json.storeOptions`.
pub fn location(output_dir: &str, store_json: Option<&str>) -> Result<Option<Arc<ArchiveStore>>> {
    let raw: Value = match store_json {
        Some(text) => serde_json::from_str(text)
            .map_err(|e| Error::new(Status::InvalidArg, format!("options: {e}")))?,
        None => Value::Null,
    };
    let map = raw.as_object().cloned().unwrap_or_default();
    if let Some(id) = map.get("archiveStoreId").and_then(Value::as_u64) {
        return registered(id, RetryPolicy::default()).map(Some);
    }
    let store = context_compact_core::options::store_location(output_dir, &map);
    Ok(store.map_err(crate::errors::invalid)?.map(Arc::new))
}
