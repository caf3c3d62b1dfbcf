//! The four operations archives need from a store, and their implementation over the
//! `object_store` crate (S3 and S3-compatible servers, Google Cloud Storage, Azure Blob
//! Storage, local files). The napi binding implements the same trait over a JS object
//! (`archiveStore`), so a team can keep archives in its own database.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::SystemTime;

use futures::TryStreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, PutMode, PutOptions, PutPayload};

/// A store operation's future: owned, so it can run on the store's own runtime.
pub type StoreFuture<T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'static>>;

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// A create-only put found the key taken; nothing was written.
    AlreadyExists,
    /// Worth another attempt (connection refused or reset, timeout, throttling, 5xx).
    Transient(String),
    /// Another attempt will not help (credentials, permissions, missing bucket, bad key), or
    /// the backend already retried.
    Permanent(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::AlreadyExists => f.write_str("the object already exists"),
            StoreError::Transient(m) | StoreError::Permanent(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for StoreError {}

impl From<StoreError> for std::io::Error {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::AlreadyExists => std::io::Error::new(std::io::ErrorKind::AlreadyExists, e),
            other => std::io::Error::other(other),
        }
    }
}

/// An object as a listing reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredObject {
    /// The full key (`/`-separated).
    pub key: String,
    pub size: u64,
    pub last_modified: Option<SystemTime>,
}

impl StoredObject {
    /// A listing given as JSON text by a store written elsewhere (a JavaScript `archiveStore`):
    /// `[{ "key", "size", "lastModified" (ms since the epoch, or null) }]`. An entry without a
    /// key is skipped; text that is no list is a permanent error of `what`.
    pub fn from_listing(text: &str, what: &str) -> Result<Vec<StoredObject>, StoreError> {
        let entries: Vec<serde_json::Value> = serde_json::from_str(text)
            .map_err(|e| StoreError::Permanent(format!("{what} returned no valid list: {e}")))?;
        let millis = |ms: f64| std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms as u64);
        Ok(entries
            .into_iter()
            .filter_map(|entry| {
                Some(StoredObject {
                    key: entry.get("key")?.as_str()?.to_string(),
                    size: entry.get("size").and_then(|v| v.as_u64()).unwrap_or(0),
                    last_modified: entry
                        .get("lastModified")
                        .and_then(|v| v.as_f64())
                        .filter(|ms| ms.is_finite() && *ms >= 0.0)
                        .map(millis),
                })
            })
            .collect())
    }
}

/// The operations archives need. Keys are `/`-separated; a "directory" is a key prefix.
pub trait StoreBackend: Send + Sync + 'static {
    /// Writes `bytes` at `key`. With `create_only` the write is conditional (S3's
    /// `If-None-Match: *`): it fails with [`StoreError::AlreadyExists`] when the key exists,
    /// atomically with respect to every other writer.
    fn put(&self, key: String, bytes: Vec<u8>, create_only: bool) -> StoreFuture<()>;
    /// The object's bytes, `None` when there is no object at `key`.
    fn get(&self, key: String) -> StoreFuture<Option<Vec<u8>>>;
    /// The objects below the directory `dir` (keys starting with `dir/`); with `shallow`
    /// only its direct children (no further `/` in the rest of the key).
    fn list(&self, dir: String, shallow: bool) -> StoreFuture<Vec<StoredObject>>;
    /// Removes the object; removing a missing key is not an error.
    fn delete(&self, key: String) -> StoreFuture<()>;
}

/// [`StoreBackend`] over any `object_store` implementation. Its client retries transient
/// failures itself (configured with the compaction's retry policy, see `store::url`), so
/// every error it returns is final.
pub struct ObjectStoreBackend {
    inner: Arc<dyn ObjectStore>,
}

impl ObjectStoreBackend {
    pub fn new(inner: Arc<dyn ObjectStore>) -> Self {
        ObjectStoreBackend { inner }
    }
}

fn object_path(key: &str) -> Result<ObjectPath, StoreError> {
    ObjectPath::parse(key)
        .map_err(|e| StoreError::Permanent(format!("invalid object key {key:?}: {e}")))
}

/// An `object_store` error as a message: its `Display`, which names the path and the
/// server's answer but never a credential (requests are signed, secrets are not sent).
fn failed(e: object_store::Error) -> StoreError {
    StoreError::Permanent(e.to_string())
}

impl StoreBackend for ObjectStoreBackend {
    fn put(&self, key: String, bytes: Vec<u8>, create_only: bool) -> StoreFuture<()> {
        let inner = self.inner.clone();
        Box::pin(async move {
            let path = object_path(&key)?;
            let options = PutOptions {
                mode: if create_only {
                    PutMode::Create
                } else {
                    PutMode::Overwrite
                },
                ..PutOptions::default()
            };
            match inner
                .put_opts(&path, PutPayload::from(bytes), options)
                .await
            {
                Ok(_) => Ok(()),
                // S3 answers a failed `If-None-Match: *` with 412 (object_store maps it to
                // AlreadyExists); some S3-compatible servers with 304 or a bare 412.
                Err(
                    object_store::Error::AlreadyExists { .. }
                    | object_store::Error::Precondition { .. },
                ) => Err(StoreError::AlreadyExists),
                Err(object_store::Error::NotImplemented) => Err(StoreError::Permanent(
                    "this store does not support conditional writes (If-None-Match), which \
                     unique archive sequence numbers need"
                        .to_string(),
                )),
                Err(e) => Err(failed(e)),
            }
        })
    }

    fn get(&self, key: String) -> StoreFuture<Option<Vec<u8>>> {
        let inner = self.inner.clone();
        Box::pin(async move {
            let path = object_path(&key)?;
            match inner.get(&path).await {
                Ok(result) => match result.bytes().await {
                    Ok(bytes) => Ok(Some(bytes.to_vec())),
                    Err(object_store::Error::NotFound { .. }) => Ok(None),
                    Err(e) => Err(failed(e)),
                },
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(failed(e)),
            }
        })
    }

    fn list(&self, dir: String, shallow: bool) -> StoreFuture<Vec<StoredObject>> {
        let inner = self.inner.clone();
        Box::pin(async move {
            let prefix = if dir.is_empty() {
                None
            } else {
                Some(object_path(&dir)?)
            };
            let metas = if shallow {
                match inner.list_with_delimiter(prefix.as_ref()).await {
                    Ok(listing) => listing.objects,
                    Err(object_store::Error::NotFound { .. }) => Vec::new(),
                    Err(e) => return Err(failed(e)),
                }
            } else {
                match inner.list(prefix.as_ref()).try_collect::<Vec<_>>().await {
                    Ok(metas) => metas,
                    Err(object_store::Error::NotFound { .. }) => Vec::new(),
                    Err(e) => return Err(failed(e)),
                }
            };
            Ok(metas
                .into_iter()
                .map(|meta| StoredObject {
                    key: meta.location.to_string(),
                    size: meta.size,
                    last_modified: Some(SystemTime::from(meta.last_modified)),
                })
                .collect())
        })
    }

    fn delete(&self, key: String) -> StoreFuture<()> {
        let inner = self.inner.clone();
        Box::pin(async move {
            let path = object_path(&key)?;
            match inner.delete(&path).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(failed(e)),
            }
        })
    }
}
