//! Where archives are kept: an [`ArchiveStore`] over a storage backend. The local disk is one
//! ([`fs::FsBackend`], `outputDir` a directory); object storage is another (issue 14): `outputDir` may be an object-store URL —
//! `s3://bucket/prefix` (AWS S3 and S3-compatible servers: MinIO, R2, Ceph), `gs://bucket/prefix`,
//! `az://container/prefix`, `file:///path` — or the caller may pass its own store (the napi
//! binding's `archiveStore`, any [`StoreBackend`]).
//!
//! Layout under the URL's prefix, per session (see [`session`]):
//!
//! ```text
//! <prefix>/<sessionId>/compact-<YYYYMMDDTHHMMSSZ>-<n>.json        the archive (written first)
//! <prefix>/<sessionId>/compact-<YYYYMMDDTHHMMSSZ>-<n>.meta.json   its metadata (written after)
//! <prefix>/<sessionId>/events/<YYYYMMDDTHHMMSS.mmmZ>-<random>.json  one audit event per object
//! <prefix>/<sessionId>/summaries/<YYYYMMDDTHHMMSS.mmmZ>-<archive>.md one summary per object
//! <prefix>/<sessionId>/extracted/<kind>/<YYYYMMDDTHHMMSS.mmmZ>-<random>.md  extracted memory
//! <prefix>/<sessionId>/sequences/<n>                               the claim of number n
//! <prefix>/<sessionId>/last-sequence                               the highest number pruned
//! ```
//!
//! Objects cannot be appended to, so what is an append-only file on disk (`events.jsonl`,
//! `summaries.md`, the `extracted/*.md` files) is a directory of objects whose names list in
//! the order they were written. Sequence numbers are claimed with a conditional create of
//! `sequences/<n>` (`PutMode::Create`: S3's `If-None-Match: *`, GCS's
//! `x-goog-if-generation-match: 0`, Azure's `If-None-Match: *`, a no-clobber link on local
//! files) before the archive is written: two writers on different machines that pick the same
//! number cannot both succeed, whatever second their archive names carry, and the loser takes
//! the next number.
//!
//! The archive functions of the crate are synchronous (they run on the blocking pool or inside
//! the pipeline's steps); the store's network calls run on a small runtime of their own
//! (`io_runtime`) and the caller waits for them, as it waits for the disk.

use std::borrow::Cow;
use std::future::Future;
use std::path::Path;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use crate::base::retry::RetryPolicy;

pub mod backend;
pub mod fs;
pub mod object;
mod url;

pub use backend::{StoreBackend, StoreError, StoreFuture, StoredObject};
pub use fs::FsBackend;
pub use object::ObjectStoreBackend;
pub use url::{is_store_url, SUPPORTED_SCHEMES};

/// How long one store operation may take before it counts as failed (and is retried).
pub const DEFAULT_OPERATION_TIMEOUT: Duration = Duration::from_secs(30);

/// Where a session's archives go: a backend, the key prefix under it, and how failures are
/// retried. Cheap to share (`Arc`) and to clone.
#[derive(Clone)]
pub struct ArchiveStore {
    backend: Arc<dyn StoreBackend>,
    /// The same backend when it is the local disk: what a disk has beside the four operations
    /// (a lock, appendable files) is used through it.
    local: Option<Arc<FsBackend>>,
    /// The key prefix (no leading or trailing `/`; empty for none).
    root: String,
    /// What paths in results start with: the URL as given (without a trailing `/`).
    display: String,
    retry: RetryPolicy,
    timeout: Duration,
    /// Values that must never appear in a message (credentials from the environment and the
    /// store options); replaced by `[redacted]`.
    secrets: Vec<String>,
    /// Whether the backend retries transient failures itself (the `object_store` clients do).
    backend_retries: bool,
}

impl std::fmt::Debug for ArchiveStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the options: they may hold credentials.
        f.debug_struct("ArchiveStore")
            .field("location", &self.display)
            .finish_non_exhaustive()
    }
}

impl ArchiveStore {
    /// A store over `backend` (a caller's own, e.g. the JS `archiveStore`): keys start at its
    /// root, paths in results are `<display>/<sessionId>/<name>`, and transient failures are
    /// retried with `retry`.
    pub fn from_backend(
        backend: Arc<dyn StoreBackend>,
        display: impl Into<String>,
        retry: RetryPolicy,
    ) -> ArchiveStore {
        ArchiveStore {
            backend,
            root: String::new(),
            display: display.into().trim_end_matches('/').to_string(),
            retry,
            timeout: DEFAULT_OPERATION_TIMEOUT,
            secrets: Vec::new(),
            backend_retries: false,
            local: None,
        }
    }

    /// The directory `output_dir` as a store: keys are paths below it, paths in results start
    /// with it as given, and nothing is retried (a disk error is final).
    pub fn local(output_dir: &Path) -> ArchiveStore {
        let fs = Arc::new(FsBackend::new(output_dir));
        ArchiveStore {
            backend: fs.clone(),
            local: Some(fs),
            root: String::new(),
            display: output_dir.display().to_string(),
            retry: RetryPolicy::default(),
            timeout: DEFAULT_OPERATION_TIMEOUT,
            secrets: Vec::new(),
            backend_retries: true,
        }
    }

    /// `store` when there is one, else the directory `output_dir` ([`ArchiveStore::local`]).
    pub fn at<'a>(output_dir: &Path, store: Option<&'a ArchiveStore>) -> Cow<'a, ArchiveStore> {
        match store {
            Some(store) => Cow::Borrowed(store),
            None => Cow::Owned(ArchiveStore::local(output_dir)),
        }
    }

    /// The local disk under this store, when it is one.
    pub(crate) fn disk(&self) -> Option<&FsBackend> {
        self.local.as_deref()
    }

    /// Sets how long one operation may take (default [`DEFAULT_OPERATION_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The location as given (URL without a trailing `/`).
    pub fn location(&self) -> &str {
        &self.display
    }

    /// The key of the session's directory.
    pub fn session_key(&self, session_id: &str) -> String {
        self.key(&[session_id])
    }

    /// The key of `parts` joined under the root.
    pub fn key(&self, parts: &[&str]) -> String {
        let mut key = self.root.clone();
        for part in parts {
            if !key.is_empty() {
                key.push('/');
            }
            key.push_str(part);
        }
        key
    }

    /// What results call the object `<session>/<name>`: `<location>/<session>/<name>`.
    pub fn display_path(&self, session_id: &str, name: &str) -> String {
        // A location that is only a scheme (`archiveStore:`) takes the key right after it.
        // (A local directory given as `/`, `out/` or empty takes it as it is.)
        let separator = if self.display.is_empty() || self.display.ends_with([':', '/']) {
            ""
        } else {
            "/"
        };
        format!("{}{separator}{session_id}/{name}", self.display)
    }

    /// Replaces every known secret in `text`.
    pub(crate) fn redact(&self, text: &str) -> String {
        redact(text, &self.secrets)
    }

    fn error(&self, e: StoreError) -> StoreError {
        match e {
            StoreError::AlreadyExists => StoreError::AlreadyExists,
            StoreError::Transient(m) => StoreError::Transient(self.redact(&m)),
            StoreError::Permanent(m) => StoreError::Permanent(self.redact(&m)),
            StoreError::Refused(m) => StoreError::Refused(self.redact(&m)),
        }
    }

    /// Runs one operation with the timeout and the retry policy: transient failures are tried
    /// again after the summary calls' backoff, unless the backend retries by itself. Returns
    /// the result and whether an earlier attempt may have reached the store.
    fn run<T: Send + 'static>(
        &self,
        op: impl Fn(&dyn StoreBackend) -> StoreFuture<T> + Send + 'static,
    ) -> (Result<T, StoreError>, bool) {
        if self.local.is_some() {
            // The disk's futures are complete when made: no runtime, no timeout, no retry.
            return (
                futures::executor::block_on(op(self.backend.as_ref())),
                false,
            );
        }
        let attempts = self.attempts();
        let (result, retried) =
            block_on(async move { attempts.run(op).await }).unwrap_or_else(|e| (Err(e), false));
        (result.map_err(|e| self.error(e)), retried)
    }

    fn attempts(&self) -> Attempts {
        Attempts {
            backend: self.backend.clone(),
            retry: self.retry,
            timeout: self.timeout,
            retries: if self.backend_retries {
                0
            } else {
                self.retry.max_retries
            },
        }
    }

    /// The objects at `keys` (`None` for a missing one), read concurrently (at most
    /// [`CONCURRENT_READS`] at a time): listing a session reads every archive and its
    /// metadata, and one round trip after another would make that slow on a remote store.
    pub fn get_many(&self, keys: Vec<String>) -> Vec<Result<Option<Vec<u8>>, StoreError>> {
        use futures::StreamExt;
        if self.local.is_some() {
            return keys.iter().map(|key| self.get(key)).collect();
        }
        let attempts = self.attempts();
        let count = keys.len();
        let results = block_on(async move {
            futures::stream::iter(keys)
                .map(|key| {
                    let attempts = attempts.clone();
                    async move { attempts.run(move |b| b.get(key.clone())).await.0 }
                })
                .buffered(CONCURRENT_READS)
                .collect::<Vec<_>>()
                .await
        });
        match results {
            Ok(results) => results
                .into_iter()
                .map(|r| r.map_err(|e| self.error(e)))
                .collect(),
            Err(e) => vec![Err(e); count],
        }
    }

    /// Writes a new object at `key`, failing with [`StoreError::AlreadyExists`] when another
    /// writer has it. When a retried write finds the key taken, the object is read back: if
    /// it holds exactly these bytes, it is this write's own first attempt, which reached the
    /// store although its answer was lost.
    pub fn put_new(&self, key: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        let shared = Arc::new(bytes);
        let payload = shared.clone();
        let owned_key = key.to_string();
        let (result, maybe_retried) =
            self.run(move |backend| backend.put(owned_key.clone(), payload.as_ref().clone(), true));
        match result {
            Err(StoreError::AlreadyExists) if maybe_retried || self.backend_retries => {
                match self.get(key) {
                    Ok(Some(found)) if found == *shared => Ok(()),
                    _ => Err(StoreError::AlreadyExists),
                }
            }
            other => other,
        }
    }

    /// Writes `bytes` at `key`, replacing what is there.
    pub fn put(&self, key: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        let key = key.to_string();
        self.run(move |backend| backend.put(key.clone(), bytes.clone(), false))
            .0
    }

    /// The object at `key`, `None` when there is none.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let key = key.to_string();
        self.run(move |backend| backend.get(key.clone())).0
    }

    /// The object at `key` when it is at most `max` bytes; `Err` says why not. On disk a larger
    /// file is not read whole.
    pub(crate) fn get_at_most(&self, key: &str, max: u64) -> Result<Option<Vec<u8>>, StoreError> {
        match &self.local {
            Some(fs) => fs.read_at_most(key, max),
            None => self.get(key),
        }
    }

    /// The objects below the directory `dir` (only its direct children with `shallow`).
    pub fn list(&self, dir: &str, shallow: bool) -> Result<Vec<StoredObject>, StoreError> {
        let dir = dir.to_string();
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let (result, _) = self.run(move |backend| backend.list(dir.clone(), shallow));
        // A backend (a JS store) may return more than asked: keep exactly what was asked for,
        // in key order (local files and some stores list in no particular order).
        result.map(|objects| {
            let mut objects: Vec<StoredObject> = objects
                .into_iter()
                .filter(|o| {
                    o.key
                        .strip_prefix(&prefix)
                        .is_some_and(|rest| !rest.is_empty() && (!shallow || !rest.contains('/')))
                })
                .collect();
            objects.sort_by(|a, b| a.key.cmp(&b.key));
            objects
        })
    }

    /// Removes the object at `key` (a missing one is not an error).
    pub fn delete(&self, key: &str) -> Result<(), StoreError> {
        let key = key.to_string();
        self.run(move |backend| backend.delete(key.clone())).0
    }
}

/// How many reads [`ArchiveStore::get_many`] keeps in flight.
pub const CONCURRENT_READS: usize = 8;

/// One operation's attempts: the timeout on each, and the retries of transient failures with
/// the summary calls' backoff (none when the backend retries by itself).
#[derive(Clone)]
struct Attempts {
    backend: Arc<dyn StoreBackend>,
    retry: RetryPolicy,
    timeout: Duration,
    retries: u32,
}

impl Attempts {
    /// The result, and whether an earlier attempt may have reached the store.
    async fn run<T>(
        &self,
        op: impl Fn(&dyn StoreBackend) -> StoreFuture<T>,
    ) -> (Result<T, StoreError>, bool) {
        let mut attempt = 0u32;
        loop {
            let result = match tokio::time::timeout(self.timeout, op(self.backend.as_ref())).await {
                Ok(result) => result,
                Err(_) => Err(StoreError::Transient(format!(
                    "the store did not answer within {} s",
                    self.timeout.as_secs_f64()
                ))),
            };
            match result {
                Err(StoreError::Transient(message)) if attempt < self.retries => {
                    let delay = self.retry.backoff(attempt);
                    tracing::debug!(
                        "store operation failed ({message}); retrying in {} ms",
                        delay.as_millis()
                    );
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                other => return (other, attempt > 0),
            }
        }
    }
}

/// Secrets shorter than this are not searched for: they would match ordinary words.
const MIN_SECRET_LEN: usize = 8;

/// `text` with every secret (of at least [`MIN_SECRET_LEN`] bytes) replaced by `[redacted]`.
pub(crate) fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for secret in secrets.iter().filter(|s| s.len() >= MIN_SECRET_LEN) {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), "[redacted]");
        }
    }
    out
}

/// The runtime the store's network calls run on: its own, so that synchronous archive code can
/// wait for them from any thread (a Node worker, the blocking pool, a test's runtime) without
/// starving or deadlocking the caller's runtime.
fn io_runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("context-compact-store")
            .enable_all()
            .build()
            .expect("the store runtime starts")
    });
    &RUNTIME
}

/// Runs `work` on [`io_runtime`] and waits for it. On a multi-threaded Tokio worker the wait is
/// announced (`block_in_place`), so the runtime moves its other tasks elsewhere meanwhile.
///
/// The wait is `unconstrained`: called from inside a Tokio task (the pipeline's archive and
/// record steps run synchronously within the compaction's task), polling the `JoinHandle`
/// would spend that task's cooperative budget, and once it is spent (after 128 store
/// operations in one poll of the task: a compaction racing 63 others for a sequence number)
/// Tokio defers the wake-up until the task yields — which a thread blocked here never does.
fn block_on<T: Send + 'static>(
    work: impl Future<Output = T> + Send + 'static,
) -> Result<T, StoreError> {
    let handle = io_runtime().spawn(work);
    let wait = move || futures::executor::block_on(tokio::task::unconstrained(handle));
    let joined = match tokio::runtime::Handle::try_current() {
        Ok(current) if current.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(wait)
        }
        _ => wait(),
    };
    joined.map_err(|_| StoreError::Permanent("the store operation panicked".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Many store operations in one poll of a Tokio task (the pipeline's synchronous archive
    /// step inside the compaction's task) all complete: waiting for them spends none of the
    /// task's cooperative budget, whose exhaustion would defer the wake-up forever.
    #[test]
    fn many_operations_inside_one_task_poll_never_stall() {
        let memory: Arc<dyn object_store::ObjectStore> =
            Arc::new(object_store::memory::InMemory::new());
        let store = ArchiveStore::from_backend(
            Arc::new(ObjectStoreBackend::new(memory)),
            "mem:",
            RetryPolicy::default(),
        );
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let written = runtime.block_on(async {
                // No await in between: one poll of this task, as in the pipeline.
                (0..400)
                    .filter(|i| store.put_new(&format!("k/{i}"), vec![1]).is_ok())
                    .count()
            });
            let _ = done.send(written);
        });
        let written = finished
            .recv_timeout(Duration::from_secs(60))
            .expect("the store operations stalled");
        assert_eq!(written, 400);
    }
}
