//! What the library learnt about models, kept in the session store so that a new conversation
//! on the same model starts with it (issue 35): the window a model's API stated when it refused
//! a request as too long, and the factor between what it bills and what the library counts,
//! learnt from usage. Each with the time it was learnt.
//!
//! One small JSON record per store, beside the sessions (not in one), because sessions share
//! models:
//!
//! ```text
//! <outputDir>/learnt-models.json          on disk
//! <prefix>/learnt-models.json             on an object store, or a caller's archiveStore
//! {"version": 1, "models": {"<model>": {"window": 16384, "windowLearntAt": "…",
//!                                       "factor": 1.55, "factorLearntAt": "…"}}}
//! ```
//!
//! Model names are keys as the caller names them, lowercased. The session listings never see
//! the record: on disk they take directories only, on a store the objects inside a session.
//!
//! Writes read the record, merge the update in and write it whole. On disk under an advisory
//! lock (`.learnt-models.lock` in the output directory) with a rename, so concurrent sessions
//! and processes never lose each other's models and a reader never sees a partial file. On a
//! store, objects are replaced whole (there is no lock): the write is read back, and merged and
//! written again if another writer's record replaced it in between, up to three times. Per
//! field, the last writer wins. A record that is not JSON, of another version, too large, or a
//! symlink is ignored with a warning (and replaced by the next write); an entry with a value out
//! of range is dropped with a warning. Reading never fails a compaction.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::rfc3339;
use super::store::{ArchiveStore, StoreError};

/// The record's name in the output directory (or under the store's prefix).
pub const LEARNT_FILE: &str = "learnt-models.json";
/// The lock that serializes writers on disk.
pub const LEARNT_LOCK_FILE: &str = ".learnt-models.lock";
/// The record's format.
pub const LEARNT_VERSION: u32 = 1;
/// A record larger than this is not read (an entry is ~150 bytes).
pub const MAX_LEARNT_BYTES: u64 = 1024 * 1024;
/// At most this many models are kept; the ones learnt longest ago go first.
pub const MAX_LEARNT_MODELS: usize = 1000;
/// Model names longer than this are not kept.
const MAX_MODEL_NAME: usize = 256;
/// The range a window must be in (the options' `contextTokenLimit` range).
const MAX_WINDOW: u64 = 1_000_000_000;

/// What was learnt about one model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LearntModel {
    /// The most tokens a prompt may have, as the model's API stated it in a refusal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    /// When (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_learnt_at: Option<String>,
    /// Billed tokens per counted token, learnt from usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<f64>,
    /// When (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor_learnt_at: Option<String>,
}

impl LearntModel {
    fn latest(&self) -> &str {
        let window = self.window_learnt_at.as_deref().unwrap_or("");
        let factor = self.factor_learnt_at.as_deref().unwrap_or("");
        window.max(factor)
    }
}

/// The record: every model's entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LearntModels {
    pub version: u32,
    pub models: BTreeMap<String, LearntModel>,
}

/// One thing to keep: what was learnt about `model` (a field left `None` is not changed).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Learnt {
    pub model: String,
    #[serde(default)]
    pub window: Option<u64>,
    #[serde(default)]
    pub factor: Option<f64>,
}

/// The key of a model name.
pub fn model_key(model: &str) -> String {
    model.trim().to_lowercase()
}

fn valid_window(window: u64) -> bool {
    (1..=MAX_WINDOW).contains(&window)
}

fn valid_factor(factor: f64) -> bool {
    factor.is_finite()
        && (crate::model::trigger::MIN_FACTOR..=crate::model::trigger::MAX_FACTOR).contains(&factor)
}

impl LearntModels {
    /// What was learnt about `model`.
    pub fn get(&self, model: &str) -> Option<&LearntModel> {
        self.models.get(&model_key(model))
    }

    /// Merges `updates` in, learnt at `now`. Returns whether anything changed.
    pub fn merge(&mut self, updates: &[Learnt], now: &str) -> bool {
        let mut changed = false;
        for update in updates {
            let key = model_key(&update.model);
            if key.is_empty() || key.len() > MAX_MODEL_NAME {
                continue;
            }
            let window = update.window.filter(|w| valid_window(*w));
            let factor = update.factor.filter(|f| valid_factor(*f));
            if window.is_none() && factor.is_none() {
                continue;
            }
            let entry = self.models.entry(key).or_default();
            if let Some(window) = window {
                entry.window = Some(window);
                entry.window_learnt_at = Some(now.to_string());
                changed = true;
            }
            if let Some(factor) = factor {
                entry.factor = Some((factor * 10_000.0).round() / 10_000.0);
                entry.factor_learnt_at = Some(now.to_string());
                changed = true;
            }
        }
        // Bounded: the models learnt longest ago go first.
        while self.models.len() > MAX_LEARNT_MODELS {
            let oldest = self
                .models
                .iter()
                .min_by(|a, b| a.1.latest().cmp(b.1.latest()))
                .map(|(k, _)| k.clone());
            match oldest {
                Some(key) => self.models.remove(&key),
                None => break,
            };
        }
        changed
    }

    /// Whether the record holds every field of `updates` as given (another writer did not
    /// replace them).
    fn holds(&self, updates: &[Learnt]) -> bool {
        updates.iter().all(|u| {
            let Some(entry) = self.get(&u.model) else {
                return u.window.filter(|w| valid_window(*w)).is_none()
                    && u.factor.filter(|f| valid_factor(*f)).is_none();
            };
            u.window
                .filter(|w| valid_window(*w))
                .is_none_or(|w| entry.window == Some(w))
                && u.factor
                    .filter(|f| valid_factor(*f))
                    .is_none_or(|f| entry.factor.is_some_and(|g| (g - f).abs() < 1e-3))
        })
    }
}

/// A record read: what it holds, and why parts of it (or all) were ignored.
#[derive(Debug, Default)]
pub struct LearntRead {
    pub record: LearntModels,
    pub warnings: Vec<String>,
}

impl LearntRead {
    /// What the record holds for `model`, as the JS layer reads it: `{"window",
    /// "windowLearntAt", "factor", "factorLearntAt", "warnings", "models"}`. `models` is every
    /// model's window and factor, keyed as the record keys them: the summary model is chosen in
    /// the core (a provider's default), which looks itself up there.
    pub fn for_model(&self, model: &str) -> Value {
        let mut out = match self.record.get(model) {
            Some(entry) => serde_json::to_value(entry).unwrap_or_else(|_| json!({})),
            None => json!({}),
        };
        if let Value::Object(map) = &mut out {
            map.insert("warnings".into(), json!(self.warnings));
            let models: serde_json::Map<String, Value> = self
                .record
                .models
                .iter()
                .map(|(key, entry)| {
                    let facts = json!({ "window": entry.window, "factor": entry.factor });
                    (key.clone(), facts)
                })
                .collect();
            map.insert("models".into(), Value::Object(models));
        }
        out
    }
}

/// Reads the record of the store (`store`, else the directory `output_dir`). A missing record
/// is an empty one; an unreadable or invalid one is empty with a warning saying why.
pub fn read(output_dir: &Path, store: Option<&ArchiveStore>) -> LearntRead {
    read_from(&ArchiveStore::at(output_dir, store))
}

fn read_from(store: &ArchiveStore) -> LearntRead {
    let location = display(store);
    let bytes = match store.get_at_most(&store.key(&[LEARNT_FILE]), MAX_LEARNT_BYTES) {
        Ok(Some(bytes)) if bytes.len() as u64 > MAX_LEARNT_BYTES => Err(format!(
            "it is more than the record can be ({MAX_LEARNT_BYTES} bytes)"
        )),
        Ok(found) => Ok(found),
        Err(StoreError::AlreadyExists) => Ok(None),
        Err(StoreError::Refused(why)) => Err(why),
        Err(e) => Err(format!("it cannot be read: {e}")),
    };
    match bytes {
        Ok(None) => LearntRead::default(),
        Ok(Some(bytes)) => match parse(&bytes) {
            Ok((record, dropped)) => LearntRead {
                record,
                warnings: dropped
                    .into_iter()
                    .map(|why| format!("{location}: {why}; that entry is ignored"))
                    .collect(),
            },
            Err(why) => LearntRead {
                record: LearntModels::default(),
                warnings: vec![format!(
                    "{location}: {why}; what it holds is ignored, and the next model learnt replaces it"
                )],
            },
        },
        Err(why) => LearntRead {
            record: LearntModels::default(),
            warnings: vec![format!("{location}: {why}; what it holds is ignored")],
        },
    }
}

fn display(store: &ArchiveStore) -> String {
    let location = store.location();
    let separator = if location.is_empty() || location.ends_with([':', '/']) {
        ""
    } else {
        "/"
    };
    format!("{location}{separator}{LEARNT_FILE}")
}

/// The record in `bytes`, and the entries dropped (each with why). `Err`: it is not a record
/// of this version.
fn parse(bytes: &[u8]) -> Result<(LearntModels, Vec<String>), String> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("it is not valid JSON ({e})"))?;
    match value.get("version").and_then(Value::as_u64) {
        Some(v) if v == u64::from(LEARNT_VERSION) => {}
        Some(v) => return Err(format!("it is of version {v}, not {LEARNT_VERSION}")),
        None => return Err("it has no version".into()),
    }
    let Some(models) = value.get("models").and_then(Value::as_object) else {
        return Err("it has no models object".into());
    };
    let mut record = LearntModels {
        version: LEARNT_VERSION,
        models: BTreeMap::new(),
    };
    let mut dropped = Vec::new();
    for (name, entry) in models {
        let key = model_key(name);
        if key.is_empty() || key.len() > MAX_MODEL_NAME {
            dropped.push("a model name is empty or too long".to_string());
            continue;
        }
        let parsed: Result<LearntModel, _> = serde_json::from_value(entry.clone());
        let Ok(mut model) = parsed else {
            dropped.push(format!("the entry of {key:?} is not a learnt model"));
            continue;
        };
        if model.window.is_some_and(|w| !valid_window(w)) {
            dropped.push(format!("the window of {key:?} is out of range"));
            model.window = None;
            model.window_learnt_at = None;
        }
        if model.factor.is_some_and(|f| !valid_factor(f)) {
            dropped.push(format!("the factor of {key:?} is out of range"));
            model.factor = None;
            model.factor_learnt_at = None;
        }
        for at in [&mut model.window_learnt_at, &mut model.factor_learnt_at] {
            if at.as_ref().is_some_and(|t| t.len() > 64) {
                *at = None;
            }
        }
        if model.window.is_some() || model.factor.is_some() {
            record.models.insert(key, model);
        }
    }
    Ok((record, dropped))
}

/// Keeps `updates` in the store's record (`store`, else the directory `output_dir`), learnt
/// now. Returns the warnings of reading the record before (an invalid one is replaced).
pub fn record(
    output_dir: &Path,
    store: Option<&ArchiveStore>,
    updates: &[Learnt],
) -> io::Result<Vec<String>> {
    let now = rfc3339(time::OffsetDateTime::now_utc(), false);
    let store = ArchiveStore::at(output_dir, store);
    match store.disk() {
        // On disk, writers are serialized by a lock beside the record.
        Some(disk) => disk.with_lock("", LEARNT_LOCK_FILE, |_| merge_into(&store, updates, &now)),
        None => merge_into(&store, updates, &now),
    }
}

fn to_bytes(record: &LearntModels) -> io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(&LearntModels {
        version: LEARNT_VERSION,
        models: record.models.clone(),
    })
    .map_err(io::Error::other)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Reads the record, merges `updates` in and writes it whole (replacing it: a rename on disk).
/// Where no lock serializes the writers (a store), the write is read back, and merged and
/// written again if another writer's record replaced it in between, up to three times.
fn merge_into(store: &ArchiveStore, updates: &[Learnt], now: &str) -> io::Result<Vec<String>> {
    let key = store.key(&[LEARNT_FILE]);
    let mut first_warnings = None;
    for _ in 0..3 {
        let LearntRead {
            mut record,
            warnings,
        } = read_from(store);
        let warnings = first_warnings.get_or_insert(warnings).clone();
        if !record.merge(updates, now) {
            return Ok(warnings);
        }
        store.put(&key, to_bytes(&record)?)?;
        if store.disk().is_some() {
            return Ok(warnings);
        }
        match store.get(&key) {
            Ok(Some(bytes)) => match parse(&bytes) {
                Ok((now_there, _)) if now_there.holds(updates) => return Ok(warnings),
                _ => continue,
            },
            _ => return Ok(warnings),
        }
    }
    Ok(first_warnings.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn learnt(model: &str, window: Option<u64>, factor: Option<f64>) -> Learnt {
        Learnt {
            model: model.into(),
            window,
            factor,
        }
    }

    #[test]
    fn a_record_is_kept_merged_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        assert!(read(&out, None).record.models.is_empty());
        record(&out, None, &[learnt("Local-Model", Some(16_384), None)]).unwrap();
        record(&out, None, &[learnt("claude-sonnet-5", None, Some(1.55))]).unwrap();
        record(&out, None, &[learnt("local-model", None, Some(1.1))]).unwrap();
        let read = read(&out, None);
        assert!(read.warnings.is_empty(), "{:?}", read.warnings);
        let local = read.record.get("local-model").unwrap();
        assert_eq!((local.window, local.factor), (Some(16_384), Some(1.1)));
        assert!(local.window_learnt_at.as_deref().unwrap().ends_with('Z'));
        assert!(local.factor_learnt_at.is_some());
        assert_eq!(
            read.record.get("CLAUDE-SONNET-5").unwrap().factor,
            Some(1.55)
        );
        // Out of range values are not kept.
        record(&out, None, &[learnt("x", Some(0), Some(f64::NAN))]).unwrap();
        assert!(super::read(&out, None).record.get("x").is_none());
        // No temporary file is left behind.
        let names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert!(names.iter().all(|n| !n.starts_with(".tmp")), "{names:?}");
    }

    #[test]
    fn a_corrupt_or_oversized_record_is_ignored_with_a_warning_and_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        std::fs::write(out.join(LEARNT_FILE), b"{not json").unwrap();
        let r = read(out, None);
        assert!(r.record.models.is_empty());
        assert!(r.warnings[0].contains("not valid JSON"), "{:?}", r.warnings);
        let warnings = record(out, None, &[learnt("m", Some(8_192), None)]).unwrap();
        assert_eq!(warnings.len(), 1);
        assert_eq!(read(out, None).record.get("m").unwrap().window, Some(8_192));

        std::fs::write(
            out.join(LEARNT_FILE),
            vec![b' '; MAX_LEARNT_BYTES as usize + 1],
        )
        .unwrap();
        let r = read(out, None);
        assert!(r.warnings[0].contains("more than the record can be"));

        std::fs::write(out.join(LEARNT_FILE), br#"{"version": 2, "models": {}}"#).unwrap();
        assert!(read(out, None).warnings[0].contains("version 2"));

        std::fs::write(
            out.join(LEARNT_FILE),
            br#"{"version": 1, "models": {"a": {"window": 5000000000}, "b": {"factor": 1.3}, "c": 7}}"#,
        )
        .unwrap();
        let r = read(out, None);
        assert_eq!(r.record.models.len(), 1);
        assert_eq!(r.record.get("b").unwrap().factor, Some(1.3));
        assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_record_is_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere.json");
        std::fs::write(&elsewhere, br#"{"version":1,"models":{"m":{"window":10}}}"#).unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::os::unix::fs::symlink(&elsewhere, out.join(LEARNT_FILE)).unwrap();
        let r = read(&out, None);
        assert!(r.record.models.is_empty());
        assert!(r.warnings[0].contains("symbolic link"));
    }

    #[test]
    fn concurrent_writers_on_disk_keep_every_model() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().to_path_buf();
        let threads: Vec<_> = (0..16)
            .map(|i| {
                let out = out.clone();
                std::thread::spawn(move || {
                    record(
                        &out,
                        None,
                        &[learnt(&format!("m{i}"), Some(1_000 + i), None)],
                    )
                    .unwrap();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let r = read(&out, None);
        assert_eq!(r.record.models.len(), 16);
        assert_eq!(r.record.get("m7").unwrap().window, Some(1_007));
    }

    #[test]
    fn on_a_store_the_record_sits_beside_the_sessions() {
        let memory: std::sync::Arc<dyn object_store::ObjectStore> =
            std::sync::Arc::new(object_store::memory::InMemory::new());
        let store = ArchiveStore::from_backend(
            std::sync::Arc::new(super::super::store::ObjectStoreBackend::new(memory)),
            "mem:",
            crate::base::retry::RetryPolicy::default(),
        );
        let nowhere = Path::new("/nonexistent");
        record(
            nowhere,
            Some(&store),
            &[learnt("m", Some(4_096), Some(1.2))],
        )
        .unwrap();
        record(nowhere, Some(&store), &[learnt("n", None, Some(1.5))]).unwrap();
        let r = read(nowhere, Some(&store));
        assert_eq!(r.record.get("m").unwrap().window, Some(4_096));
        assert_eq!(r.record.get("n").unwrap().factor, Some(1.5));
        assert!(store.get(LEARNT_FILE).unwrap().is_some());
        store.put(LEARNT_FILE, b"[]".to_vec()).unwrap();
        let r = read(nowhere, Some(&store));
        assert!(r.warnings[0].starts_with("mem:learnt-models.json: it has no version"));
    }

    #[test]
    fn the_number_of_models_is_bounded() {
        let mut record = LearntModels::default();
        for i in 0..MAX_LEARNT_MODELS + 5 {
            record.merge(
                &[learnt(&format!("m{i:05}"), Some(100), None)],
                &format!("2026-01-01T00:{:02}:{:02}Z", i / 60 % 60, i % 60),
            );
        }
        assert_eq!(record.models.len(), MAX_LEARNT_MODELS);
    }
}
