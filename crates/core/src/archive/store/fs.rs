//! The local disk as one more storage backend ([`FsBackend`]), shaped like the `object_store`
//! crate's `LocalFileSystem` (a root directory, `/`-separated keys below it), with the rules an
//! archive directory keeps that a generic local store does not:
//!
//! - private: the directories it creates are 0700, the files 0600;
//! - no symlink is ever followed: a file is opened with `O_NOFOLLOW` and must be a regular file,
//!   a directory it creates must not be a symlink, and listings never descend into one;
//! - atomic: a file is written to a temporary file (`.tmp-*`) in the same directory, fsynced,
//!   and put in place by a no-clobber link (create-only) or a rename (replace), then the
//!   directory is fsynced; a reader sees the old file or the new one, never a part.
//!
//! Beside the four operations of [`StoreBackend`], a disk has what an object store has not, and
//! the session code uses it where it is there: an advisory lock per directory
//! ([`FsBackend::with_lock`], which also remembers the last sequence number handed out) and
//! files that can be appended to ([`FsBackend::append`]).

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use super::backend::{StoreBackend, StoreError, StoreFuture, StoredObject};

/// The name of the per-session lock file.
pub const LOCK_FILE: &str = ".lock";

/// [`StoreBackend`] over a local directory: the key `a/b` is the file `<root>/a/b`.
#[derive(Debug, Clone)]
pub struct FsBackend {
    root: PathBuf,
}

impl FsBackend {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        FsBackend { root: root.into() }
    }

    /// The path of `key`. Keys are built from checked segments (session ids, archive names),
    /// never from a path a message names.
    pub fn path(&self, key: &str) -> PathBuf {
        if key.is_empty() {
            self.root.clone()
        } else {
            self.root.join(key)
        }
    }

    /// Runs `f` holding the exclusive lock of the directory `dir` (an advisory `flock` on its
    /// file `lock_name`: it serializes threads and processes alike), creating the directory.
    pub(crate) fn with_lock<T>(
        &self,
        dir: &str,
        lock_name: &str,
        f: impl FnOnce(&mut fs::File) -> io::Result<T>,
    ) -> io::Result<T> {
        let dir = self.path(dir);
        create_private_dir(&dir)?;
        let mut lock = open_lock_file(&dir, lock_name)?;
        lock.lock()?;
        let result = f(&mut lock);
        let _ = lock.unlock();
        result
    }

    /// Appends `text` to the file `key` with one `write` on an `O_APPEND` descriptor (created
    /// 0600, a planted symlink or FIFO refused). Callers hold the directory's lock, so lines from
    /// other threads and processes never interleave even where `O_APPEND` alone would not
    /// guarantee it.
    pub(crate) fn append(&self, key: &str, text: &[u8]) -> io::Result<()> {
        let path = self.path(key);
        if let Some(dir) = path.parent() {
            create_private_dir(dir)?;
        }
        let mut options = fs::OpenOptions::new();
        options.append(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
            // O_NONBLOCK: a FIFO planted at the name fails at once instead of blocking.
            options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        }
        let mut file = options.open(&path)?;
        if !file.metadata()?.is_file() {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            return Err(io::Error::other(format!("{name} is not a regular file")));
        }
        file.write_all(text)?;
        file.sync_data()
    }

    /// The bytes of the file `key`, at most `max + 1` of them (so a caller can tell a file larger
    /// than `max` without reading it whole).
    pub(crate) fn read_at_most(&self, key: &str, max: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let file = match open_no_follow(&self.path(key)) {
            Ok(file) => file,
            Err(e) => return absent_or_refused(e),
        };
        let mut bytes = Vec::new();
        file.take(max.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| StoreError::Permanent(e.to_string()))?;
        Ok(Some(bytes))
    }

    fn put_now(&self, key: &str, bytes: &[u8], create_only: bool) -> io::Result<()> {
        let path = self.path(key);
        let dir = path.parent().unwrap_or(Path::new("."));
        let name = path.file_name().unwrap_or_default();
        create_private_dir(dir)?;
        let temp = write_temp_file(dir, bytes)?;
        if create_only {
            temp.persist_noclobber(dir.join(name))
                .map_err(|e| e.error)?;
        } else {
            temp.persist(dir.join(name)).map_err(|e| e.error)?;
        }
        sync_dir(dir);
        Ok(())
    }

    fn list_now(&self, dir: &str, shallow: bool, out: &mut Vec<StoredObject>) -> io::Result<()> {
        let entries = match fs::read_dir(self.path(dir)) {
            Ok(entries) => entries,
            Err(e) if absent(&e) => return Ok(()),
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let key = if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            };
            // `DirEntry::file_type` and `metadata` do not follow symlinks: a link to a directory
            // is listed as the entry it is (reading it is refused), never walked into. An entry
            // gone since the directory was read (another writer's temporary file, linked into
            // place meanwhile) is not listed.
            let metadata = match entry.metadata() {
                Ok(metadata) => metadata,
                Err(e) if absent(&e) => continue,
                Err(e) => return Err(e),
            };
            if metadata.is_dir() {
                if !shallow {
                    self.list_now(&key, false, out)?;
                }
                continue;
            }
            out.push(StoredObject {
                key,
                size: metadata.len(),
                last_modified: metadata.modified().ok(),
            });
        }
        Ok(())
    }

    fn delete_now(&self, key: &str) -> io::Result<()> {
        let path = self.path(key);
        match fs::remove_file(&path) {
            Ok(()) => {
                sync_dir(path.parent().unwrap_or(Path::new(".")));
                Ok(())
            }
            Err(e) if absent(&e) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// A disk error as a store error: a name taken stays [`StoreError::AlreadyExists`]; the rest is
/// final (the disk is not retried).
fn store_error(e: io::Error) -> StoreError {
    if e.kind() == io::ErrorKind::AlreadyExists {
        StoreError::AlreadyExists
    } else {
        StoreError::Permanent(e.to_string())
    }
}

/// Nothing at the name (or a file where a directory of the path should be).
fn absent(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// A failed open: `None` when nothing is there, [`StoreError::Refused`] for what is never read
/// (a symlink, something not a regular file).
fn absent_or_refused<T>(e: io::Error) -> Result<Option<T>, StoreError> {
    if absent(&e) {
        return Ok(None);
    }
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::ELOOP) {
        return Err(StoreError::Refused(
            "it is a symbolic link, which is never followed".into(),
        ));
    }
    if e.kind() == io::ErrorKind::Other {
        return Err(StoreError::Refused(e.to_string()));
    }
    Err(StoreError::Permanent(e.to_string()))
}

// Each operation runs at once, on the caller's thread (`ArchiveStore` does not send a local
// store's operations to its network runtime): the future is already complete.
impl StoreBackend for FsBackend {
    fn put(&self, key: String, bytes: Vec<u8>, create_only: bool) -> StoreFuture<()> {
        let result = self.put_now(&key, &bytes, create_only).map_err(store_error);
        Box::pin(std::future::ready(result))
    }

    fn get(&self, key: String) -> StoreFuture<Option<Vec<u8>>> {
        let result = self.read_at_most(&key, u64::MAX - 1);
        Box::pin(std::future::ready(result))
    }

    fn list(&self, dir: String, shallow: bool) -> StoreFuture<Vec<StoredObject>> {
        let mut out = Vec::new();
        let result = self
            .list_now(&dir, shallow, &mut out)
            .map(|()| out)
            .map_err(store_error);
        Box::pin(std::future::ready(result))
    }

    fn delete(&self, key: String) -> StoreFuture<()> {
        let result = self.delete_now(&key).map_err(store_error);
        Box::pin(std::future::ready(result))
    }
}

/// Creates `dir` and its parents; the directories this creates are private (0700), and `dir`
/// itself must not be a symlink.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)?;
    if fs::symlink_metadata(dir)?.file_type().is_symlink() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is a symlink; refusing to write archives through it",
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// Writes `bytes` to `dir/<name>` atomically and privately (0600), never replacing an existing
/// entry. Returns `AlreadyExists` when the name is taken.
pub fn write_new_file(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<PathBuf> {
    let target = dir.join(name);
    write_temp_file(dir, bytes)?
        .persist_noclobber(&target)
        .map_err(|e| e.error)?;
    sync_dir(dir);
    Ok(target)
}

/// Writes a private (0600) temporary file in `dir` and makes it durable.
fn write_temp_file(dir: &Path, bytes: &[u8]) -> io::Result<tempfile::NamedTempFile> {
    let mut temp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        temp.as_file()
            .set_permissions(fs::Permissions::from_mode(0o600))?;
    }
    temp.as_file_mut().write_all(bytes)?;
    temp.as_file().sync_all()?;
    Ok(temp)
}

fn sync_dir(dir: &Path) {
    // Makes the new directory entry durable; not possible (nor needed) on every platform.
    #[cfg(unix)]
    if let Ok(handle) = fs::File::open(dir) {
        let _ = handle.sync_all();
    }
}

/// Opens a file for reading without following a symlink at its name; anything but a regular
/// file is refused (`ErrorKind::Other`).
pub(crate) fn open_no_follow(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK: a FIFO at the name is opened without blocking (then refused below).
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    #[cfg(not(unix))]
    if fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(io::Error::other(
            "it is a symbolic link, which is never followed",
        ));
    }
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("it is not a regular file"));
    }
    Ok(file)
}

fn open_lock_file(dir: &Path, name: &str) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
        // Never open a planted symlink in place of the lock file.
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options.open(dir.join(name))
}

/// The last sequence number recorded in a lock file (0 when none).
pub(crate) fn read_counter(lock: &mut fs::File) -> u64 {
    use std::io::{Seek, SeekFrom};
    let mut text = String::new();
    if lock.seek(SeekFrom::Start(0)).is_err() || lock.take(32).read_to_string(&mut text).is_err() {
        return 0;
    }
    text.trim().parse().unwrap_or(0)
}

/// Records the last sequence number handed out (best effort: the archives on disk remain the
/// primary source).
pub(crate) fn write_counter(lock: &mut fs::File, sequence: u64) {
    use std::io::{Seek, SeekFrom};
    let _ = lock
        .set_len(0)
        .and_then(|_| lock.seek(SeekFrom::Start(0)))
        .and_then(|_| lock.write_all(format!("{sequence}\n").as_bytes()));
}
