//! Object-store URLs: which ones are accepted, and the `object_store` client each opens.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::{BackoffConfig, ClientConfigKey, ObjectStore, RetryConfig};

use super::backend::{StoreBackend, StoreError, StoreFuture, StoredObject};
use super::object::ObjectStoreBackend;
use super::{redact, ArchiveStore, DEFAULT_OPERATION_TIMEOUT};
use crate::base::error::ValidationError;
use crate::base::retry::RetryPolicy;

/// The URL forms `outputDir` accepts, for messages.
pub const SUPPORTED_SCHEMES: &str =
    "s3://bucket/prefix, gs://bucket/prefix, az://container/prefix or file:///path";

/// Whether `location` is a URL (`<scheme>://…`) rather than a directory. A Windows path
/// (`C:\dir`, `C:/dir`) is not: its "scheme" would be one letter followed by `:\` or `:/`
/// without the double slash.
pub fn is_store_url(location: &str) -> bool {
    let Some((scheme, _)) = location.split_once("://") else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme.len() > 1
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
}

// `ArchiveStore::open` is written here, beside the schemes it reads, so that the store's module
// (which defines the type and imports nothing of this one) is not imported back.
impl ArchiveStore {
    /// Opens an object-store URL (`s3://`, `gs://`, `az://`, `file://`). Configuration and
    /// credentials come from the cloud's standard environment variables (`AWS_*`, `GOOGLE_*`,
    /// `AZURE_*`), which `store_options` (object_store configuration keys, e.g.
    /// `aws_endpoint`, `region`, `allow_http`) override. Errors name `option` (the option
    /// that held the URL) and never echo a credential. Nothing is contacted yet.
    pub fn open(
        location: &str,
        store_options: &BTreeMap<String, String>,
        retry: RetryPolicy,
        option: &str,
    ) -> Result<ArchiveStore, ValidationError> {
        open(location, store_options, retry, option)
    }
}

fn open(
    location: &str,
    store_options: &BTreeMap<String, String>,
    retry: RetryPolicy,
    option: &str,
) -> Result<ArchiveStore, ValidationError> {
    let secrets = secrets(store_options);
    let invalid = |message: String| ValidationError::argument(option, redact(&message, &secrets));
    let Some((scheme, rest)) = location.split_once("://") else {
        return Err(invalid(format!(
            "is not a URL (expected {SUPPORTED_SCHEMES})"
        )));
    };
    let scheme = scheme.to_ascii_lowercase();
    let display = location.trim_end_matches('/').to_string();
    let (backend, root): (Arc<dyn StoreBackend>, String) = match scheme.as_str() {
        "file" => {
            if !store_options.is_empty() {
                return Err(ValidationError::argument(
                    "storeOptions",
                    "does not apply to a file:// URL (local files need no configuration)",
                ));
            }
            (open_file(location, &invalid)?, String::new())
        }
        "s3" | "gs" | "az" => {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.contains('@') {
                // Never echo it: the part before `@` would be a credential.
                return Err(ValidationError::argument(
                    option,
                    "must not hold credentials (user:password@): they come from the environment \
                     or storeOptions",
                ));
            }
            if bucket.is_empty() {
                return Err(invalid(format!(
                    "{display:?} names no bucket or container (expected {SUPPORTED_SCHEMES})"
                )));
            }
            let root = prefix.trim_matches('/').to_string();
            if !root.is_empty() {
                // Keys are used as written (not percent-decoded): `%`, `+`, spaces and any
                // Unicode are ordinary characters of an object key. Empty segments (`a//b`),
                // `.`/`..` and control characters are not.
                ObjectPath::parse(&root)
                    .map_err(|e| invalid(format!("{display:?} has an invalid key prefix: {e}")))?;
                if root
                    .split('/')
                    .any(|s| s.is_empty() || s == "." || s == "..")
                {
                    return Err(invalid(format!(
                        "{display:?} has an invalid key prefix (empty, `.` or `..` segment)"
                    )));
                }
            }
            let make = match scheme.as_str() {
                "s3" => open_s3(bucket, store_options, retry)?,
                "gs" => open_gcs(bucket, store_options, retry)?,
                _ => open_azure(bucket, store_options, retry)?,
            };
            (Arc::new(Deferred::new(make)) as _, root)
        }
        other => {
            return Err(invalid(format!(
                "unsupported URL scheme {other:?} (expected {SUPPORTED_SCHEMES})"
            )))
        }
    };
    Ok(ArchiveStore {
        backend,
        root,
        display,
        retry,
        timeout: DEFAULT_OPERATION_TIMEOUT,
        secrets: secrets.into_iter().chain(env_secrets()).collect(),
        backend_retries: scheme != "file",
        local: None,
    })
}

/// `file:///path`: the directory is created (0700) on first use when it does not exist, not
/// when options are read. A directory that cannot be created is not an invalid option but a
/// store that fails every operation, so a compaction degrades to `archivePath: null` with a
/// warning (PRD F-006), as on disk.
fn open_file(
    location: &str,
    invalid: &dyn Fn(String) -> ValidationError,
) -> Result<Arc<dyn StoreBackend>, ValidationError> {
    let parsed = ::url::Url::parse(location)
        .map_err(|e| invalid(format!("{location:?} is not a valid file URL: {e}")))?;
    let path = parsed.to_file_path().map_err(|_| {
        invalid(format!(
            "{location:?} is not a local file URL (expected file:///absolute/path)"
        ))
    })?;
    Ok(Arc::new(Deferred::new(Box::new(move || {
        crate::archive::create_private_dir(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        LocalFileSystem::new_with_prefix(&path)
            .map(|store| Arc::new(store) as Arc<dyn ObjectStore>)
            .map_err(|e| e.to_string())
    }))))
}

fn retry_config(retry: RetryPolicy) -> RetryConfig {
    // The summary calls' policy (SPEC §5): `maxRetries` more attempts, 0.5 s doubling to 8 s.
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: retry.base_delay,
            max_backoff: retry.base_delay * 16,
            base: 2.0,
        },
        max_retries: retry.max_retries as usize,
        retry_timeout: Duration::from_secs(180),
    }
}

fn config_key<K: FromStr>(name: &str, scheme: &str) -> Result<K, ValidationError> {
    name.to_ascii_lowercase().parse().map_err(|_| {
        ValidationError::argument(
            &format!("storeOptions.{name}"),
            format!("is not a configuration key of {scheme}:// stores (object_store's keys, e.g. aws_endpoint, aws_region, allow_http)"),
        )
    })
}

fn build_failed(scheme: &str, e: object_store::Error, secrets: &[String]) -> String {
    redact(
        &format!("cannot configure the {scheme}:// store: {e}"),
        secrets,
    )
}

/// Builds a cloud client: deferred to the first operation, because a client loads the
/// system's root certificates, which a `Compactor` parsing its options on every
/// `shouldCompact` must not pay for.
type MakeStore = Box<dyn FnOnce() -> Result<Arc<dyn ObjectStore>, String> + Send>;

/// A [`MakeStore`] of a cloud client: `build` runs on first use, and its refusal is reported
/// with the secrets of the configuration redacted.
fn built_on_first_use<S: ObjectStore>(
    scheme: &'static str,
    secrets: Vec<String>,
    build: impl FnOnce() -> object_store::Result<S> + Send + 'static,
) -> MakeStore {
    Box::new(move || {
        build()
            .map(|store| Arc::new(store) as _)
            .map_err(|e| build_failed(scheme, e, &secrets))
    })
}

/// A cloud store built on first use (see [`MakeStore`]); a configuration the client refuses
/// (an invalid endpoint, a missing region) fails every operation with the reason.
struct Deferred {
    make: std::sync::Mutex<Option<MakeStore>>,
    made: std::sync::OnceLock<Result<Arc<dyn ObjectStore>, String>>,
}

impl Deferred {
    fn new(make: MakeStore) -> Self {
        Deferred {
            make: std::sync::Mutex::new(Some(make)),
            made: std::sync::OnceLock::new(),
        }
    }

    fn backend(&self) -> Result<ObjectStoreBackend, StoreError> {
        let made = self.made.get_or_init(|| {
            let make = self.make.lock().unwrap_or_else(|p| p.into_inner()).take();
            match make {
                Some(make) => make(),
                None => Err("the store could not be configured".to_string()),
            }
        });
        match made {
            Ok(store) => Ok(ObjectStoreBackend::new(store.clone())),
            Err(message) => Err(StoreError::Permanent(message.clone())),
        }
    }
}

impl StoreBackend for Deferred {
    fn put(&self, key: String, bytes: Vec<u8>, create_only: bool) -> StoreFuture<()> {
        match self.backend() {
            Ok(backend) => backend.put(key, bytes, create_only),
            Err(e) => Box::pin(async move { Err(e) }),
        }
    }
    fn get(&self, key: String) -> StoreFuture<Option<Vec<u8>>> {
        match self.backend() {
            Ok(backend) => backend.get(key),
            Err(e) => Box::pin(async move { Err(e) }),
        }
    }
    fn list(&self, dir: String, shallow: bool) -> StoreFuture<Vec<StoredObject>> {
        match self.backend() {
            Ok(backend) => backend.list(dir, shallow),
            Err(e) => Box::pin(async move { Err(e) }),
        }
    }
    fn delete(&self, key: String) -> StoreFuture<()> {
        match self.backend() {
            Ok(backend) => backend.delete(key),
            Err(e) => Box::pin(async move { Err(e) }),
        }
    }
}

fn open_s3(
    bucket: &str,
    options: &BTreeMap<String, String>,
    retry: RetryPolicy,
) -> Result<MakeStore, ValidationError> {
    let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
    for (name, value) in options {
        builder = builder.with_config(config_key::<AmazonS3ConfigKey>(name, "s3")?, value);
    }
    // An endpoint given as http:// (MinIO, a local test server) is a deliberate choice of plain
    // HTTP; without this object_store would refuse it unless `allow_http` is set as well.
    let plain_http = builder
        .get_config_value(&AmazonS3ConfigKey::Endpoint)
        .is_some_and(|endpoint| endpoint.starts_with("http://"));
    let http_chosen = std::env::var_os("AWS_ALLOW_HTTP").is_some()
        || options.keys().any(|k| {
            k.eq_ignore_ascii_case("allow_http") || k.eq_ignore_ascii_case("aws_allow_http")
        });
    if plain_http && !http_chosen {
        builder = builder.with_config(
            AmazonS3ConfigKey::Client(ClientConfigKey::AllowHttp),
            "true",
        );
    }
    Ok(built_on_first_use("s3", secrets(options), move || {
        builder.with_retry(retry_config(retry)).build()
    }))
}

fn open_gcs(
    bucket: &str,
    options: &BTreeMap<String, String>,
    retry: RetryPolicy,
) -> Result<MakeStore, ValidationError> {
    let mut builder = GoogleCloudStorageBuilder::from_env().with_bucket_name(bucket);
    for (name, value) in options {
        builder = builder.with_config(config_key::<GoogleConfigKey>(name, "gs")?, value);
    }
    Ok(built_on_first_use("gs", secrets(options), move || {
        builder.with_retry(retry_config(retry)).build()
    }))
}

fn open_azure(
    container: &str,
    options: &BTreeMap<String, String>,
    retry: RetryPolicy,
) -> Result<MakeStore, ValidationError> {
    let mut builder = MicrosoftAzureBuilder::from_env().with_container_name(container);
    for (name, value) in options {
        builder = builder.with_config(config_key::<AzureConfigKey>(name, "az")?, value);
    }
    Ok(built_on_first_use("az", secrets(options), move || {
        builder.with_retry(retry_config(retry)).build()
    }))
}

/// Whether a configuration key (option or environment variable) holds a secret.
fn is_secret_key(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    // Access key ids are not secret to AWS, but they identify a credential: kept out of
    // messages too. Client ids (Azure, Google) are public configuration.
    if name.ends_with("client_id") {
        return false;
    }
    ["secret", "token", "password", "sas", "key", "credential"]
        .iter()
        .any(|word| name.contains(word))
        && !name.ends_with("_path")
        && name != "google_application_credentials"
}

fn secrets(options: &BTreeMap<String, String>) -> Vec<String> {
    options
        .iter()
        .filter(|(name, _)| is_secret_key(name))
        .flat_map(|(_, value)| secret_values(value))
        .collect()
}

/// A secret value, and when it is JSON (a service account key) its secret fields too (by their
/// name: `private_key`, …): an error may quote one field without the rest.
fn secret_values(value: &str) -> Vec<String> {
    let mut out = vec![value.to_string()];
    if let Ok(serde_json::Value::Object(fields)) = serde_json::from_str(value) {
        out.extend(
            fields
                .iter()
                .filter(|(name, _)| is_secret_key(name))
                .filter_map(|(_, v)| v.as_str())
                .map(str::to_string),
        );
    }
    out
}

/// Secret values among the clouds' environment variables.
fn env_secrets() -> Vec<String> {
    std::env::vars()
        .filter(|(name, _)| {
            ["AWS_", "GOOGLE_", "AZURE_"]
                .iter()
                .any(|p| name.starts_with(p))
                && is_secret_key(name)
        })
        .flat_map(|(_, value)| secret_values(&value))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_with(
        location: &str,
        options: &[(&str, &str)],
    ) -> Result<ArchiveStore, ValidationError> {
        let options = options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        open(location, &options, RetryPolicy::default(), "outputDir")
    }

    #[test]
    fn urls_are_told_from_paths() {
        for url in [
            "s3://b/p",
            "gs://b",
            "az://c/x",
            "file:///tmp/x",
            "http://x",
            "S3://b",
        ] {
            assert!(is_store_url(url), "{url}");
        }
        for path in [
            "./dir",
            "/tmp/x",
            "C:\\dir",
            "C:/dir",
            "dir://",
            "relative/s3:/x",
        ] {
            assert!(!is_store_url(path) || path == "dir://", "{path}");
        }
    }

    #[test]
    fn bad_urls_are_clear_errors_naming_the_option() {
        let message = |r: Result<ArchiveStore, ValidationError>| r.unwrap_err().to_string();
        let unknown = message(open_with("ftp://host/x", &[]));
        assert!(
            unknown.contains("outputDir") && unknown.contains("\"ftp\""),
            "{unknown}"
        );
        assert!(message(open_with("s3://", &[])).contains("names no bucket"));
        assert!(message(open_with("s3://b/a//c", &[])).contains("invalid key prefix"));
        assert!(message(open_with("s3://b/a/../c", &[])).contains("invalid key prefix"));
        let creds = message(open_with("s3://AKIA:hunter2secret@bucket/p", &[]));
        assert!(!creds.contains("hunter2secret"), "{creds}");
        let key = message(open_with("s3://b/p", &[("no_such_key", "hunter2secret")]));
        assert!(key.contains("storeOptions.no_such_key"), "{key}");
        assert!(!key.contains("hunter2secret"), "{key}");
        let file = message(open_with("file://remote-host/x", &[]));
        assert!(file.contains("not a local file URL"), "{file}");
    }

    #[test]
    fn prefixes_keep_odd_characters_as_written() {
        let store = open_with(
            "s3://bucket/odd prefix/ü+50%/",
            &[
                ("aws_access_key_id", "a"),
                ("aws_secret_access_key", "b"),
                ("aws_region", "us-east-1"),
            ],
        )
        .unwrap();
        assert_eq!(store.session_key("s"), "odd prefix/ü+50%/s");
        assert_eq!(
            store.display_path("s", "x.json"),
            "s3://bucket/odd prefix/ü+50%/s/x.json"
        );
    }

    #[test]
    fn secrets_are_recognised_by_their_key() {
        for key in [
            "aws_secret_access_key",
            "AWS_SESSION_TOKEN",
            "azure_storage_account_key",
            "google_service_account_key",
            "sas_token",
            "aws_access_key_id",
        ] {
            assert!(is_secret_key(key), "{key}");
        }
        for key in [
            "aws_region",
            "aws_endpoint",
            "google_application_credentials",
            "azure_client_id",
        ] {
            assert!(!is_secret_key(key), "{key}");
        }
    }
}
