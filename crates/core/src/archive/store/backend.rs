//! The four operations archives need from a storage backend. The object stores implement them
//! ([`super::object::ObjectStoreBackend`]), the local disk too ([`super::fs::FsBackend`]), and so
//! does the napi binding over a JS object (`archiveStore`), so a team can keep archives in its
//! own database.

use std::future::Future;
use std::pin::Pin;
use std::time::SystemTime;

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
    /// What is at the key is never read, and the message says why (on disk: a symlink, or not
    /// a regular file).
    Refused(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::AlreadyExists => f.write_str("the object already exists"),
            StoreError::Transient(m) | StoreError::Permanent(m) | StoreError::Refused(m) => {
                f.write_str(m)
            }
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
