//! [`StoreBackend`] over the `object_store` crate: S3 and S3-compatible servers, Google Cloud
//! Storage, Azure Blob Storage, and `file://` URLs (its own local files, with the object layout).

use std::sync::Arc;
use std::time::SystemTime;

use futures::TryStreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, PutMode, PutOptions, PutPayload};

use super::backend::{StoreBackend, StoreError, StoreFuture, StoredObject};

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
