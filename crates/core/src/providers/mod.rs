//! Layer 6, **the summary providers** (PRD F-004, SPEC §5): the services that write a summary
//! over the network — the Anthropic Messages API, any OpenAI-compatible Chat Completions server,
//! Anthropic's native compaction — and the offline extractive summarizer, chosen from the
//! caller's options or, with zero configuration, from the environment. A provider implements
//! [`crate::summary::summarize::Summarizer`]; what a summary asks for and how it is retried is
//! [`crate::summary`]'s, how it goes over the wire is this layer's (one [`http::HttpSummarizer`]
//! per dialect). Imports [`crate::base`], [`crate::model`], [`crate::summary`].
//!
//! ```text
//! provider   'anthropic' | 'openai' | 'extractive'   (default: see below)
//!            | 'anthropic-compaction'
//! model      the summary model                      (claude-sonnet-4-6 / gpt-4o-mini)
//! apiKey     the API key                            (ANTHROPIC_API_KEY / OPENAI_API_KEY)
//! baseUrl    the API's base URL                     (ANTHROPIC_BASE_URL / OPENAI_BASE_URL,
//!                                                    then https://api.anthropic.com /
//!                                                    https://api.openai.com)
//! timeoutMs  per request, body included             (60000; connecting: 10 s)
//! ```
//!
//! Without `provider`: `anthropic` when `ANTHROPIC_API_KEY` is set, else `openai` when
//! `OPENAI_API_KEY` is set, else `extractive` with a warning. Two refinements keep explicit
//! hints honoured: an `apiKey` option without `provider` means `anthropic` for `sk-ant-…` keys
//! (or a `claude…` model) and `openai` otherwise; and when both environment keys are set, a
//! `model` of a known family (`claude…`, `gpt…`, `o1`/`o3`/`o4…`) picks its provider.
//!
//! An explicit `anthropic` or `openai` provider without a key anywhere does not fall back: the
//! compaction is skipped with `MISSING_API_KEY`.
//!
//! `anthropic-compaction` is never inferred: it asks for Anthropic's on-demand compaction
//! ([`anthropic_compaction`], beta `compact-2026-09-04`), with the key, base URL, timeouts and
//! environment variables of `anthropic`. Its model is the `model` option (the documentation's
//! loop compacts with the conversation's own model, so pass the agent's model when it is a
//! Claude model), else [`DEFAULT_COMPACTION_MODEL`] (`claude-sonnet-4-6`, the newest Sonnet on the
//! documented list of models that support it). [`compaction_from_options`] makes the client and
//! its fallback, the plain [`anthropic::AnthropicSummarizer`] with the same key, base URL and
//! model; `options::providers::from_options` / [`build`] give that fallback alone, so a pipeline that does not use
//! native compaction still writes summaries.
//!
//! The key is only ever placed in the request's auth header (marked sensitive); it is
//! redacted from every error message and never logged, stored in results or archived.

pub mod anthropic;
pub mod anthropic_compaction;
pub mod http;
pub mod openai;
pub mod shared;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::Url;
use serde_json::Value;

use crate::base::error::{ErrorCode, ValidationError};
use crate::base::text;
use crate::summary::extractive::ExtractiveSummarizer;
use crate::summary::summarize::{AttemptError, BoxFuture, Retry, Summarizer, SummaryRequest};

/// The default Anthropic summary model.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-6";
/// The default model of `anthropic-compaction` (on the documented list of models that support
/// on-demand compaction; see [`anthropic_compaction::supports_compaction`]).
pub const DEFAULT_COMPACTION_MODEL: &str = "claude-sonnet-4-6";
/// The default OpenAI summary model.
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";
/// The default Anthropic base URL.
pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The default OpenAI base URL.
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com";

pub use http::{ApiKey, HttpProvider, CONNECT_TIMEOUT, DEFAULT_TIMEOUT};

/// Which summarizer writes the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    Anthropic,
    OpenAi,
    Extractive,
    /// Anthropic's on-demand compaction (`anthropic-compaction`): only when named.
    AnthropicCompaction,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::OpenAi => "openai",
            ProviderKind::Extractive => "extractive",
            ProviderKind::AnthropicCompaction => "anthropic-compaction",
        }
    }

    pub fn parse(name: &str) -> Option<ProviderKind> {
        match name {
            "anthropic" => Some(ProviderKind::Anthropic),
            "openai" => Some(ProviderKind::OpenAi),
            "extractive" => Some(ProviderKind::Extractive),
            "anthropic-compaction" => Some(ProviderKind::AnthropicCompaction),
            _ => None,
        }
    }

    fn key_env(self) -> &'static str {
        match self {
            ProviderKind::Anthropic | ProviderKind::AnthropicCompaction => "ANTHROPIC_API_KEY",
            ProviderKind::OpenAi => "OPENAI_API_KEY",
            ProviderKind::Extractive => "",
        }
    }

    fn base_url_env(self) -> &'static str {
        match self {
            ProviderKind::Anthropic | ProviderKind::AnthropicCompaction => "ANTHROPIC_BASE_URL",
            ProviderKind::OpenAi => "OPENAI_BASE_URL",
            ProviderKind::Extractive => "",
        }
    }

    fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::Anthropic | ProviderKind::AnthropicCompaction => {
                DEFAULT_ANTHROPIC_BASE_URL
            }
            ProviderKind::OpenAi | ProviderKind::Extractive => DEFAULT_OPENAI_BASE_URL,
        }
    }

    fn default_model(self) -> Option<&'static str> {
        match self {
            ProviderKind::Anthropic => Some(DEFAULT_ANTHROPIC_MODEL),
            ProviderKind::AnthropicCompaction => Some(DEFAULT_COMPACTION_MODEL),
            ProviderKind::OpenAi => Some(DEFAULT_OPENAI_MODEL),
            ProviderKind::Extractive => None,
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The provider options as the caller gave them (not yet resolved against the environment).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderOptions {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub api_key: Option<ApiKey>,
    pub base_url: Option<String>,
    /// `timeoutMs`; default [`DEFAULT_TIMEOUT`].
    pub timeout: Option<Duration>,
    /// `summaryMaxTokens`, when given (clamped to the model's output limit when sent).
    pub summary_max_tokens: Option<u32>,
}

pub(crate) fn parse_base_url(text: &str, what: &str) -> Result<Url, ValidationError> {
    let url = Url::parse(text.trim()).map_err(|e| {
        ValidationError::argument(
            what,
            format!("not a valid URL ({e}): {:?}", text::clip(text, 80)),
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(ValidationError::argument(
            what,
            format!(
                "expected an http:// or https:// URL, got {:?}",
                text::clip(text, 80)
            ),
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(ValidationError::argument(
            what,
            "must not have a query string or fragment",
        ));
    }
    Ok(url)
}

/// Where a provider's key was found (for logs; never the key itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    Option,
    Environment,
    Missing,
}

/// A fully resolved provider configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// The summary model (`None` for `extractive`).
    pub model: Option<String>,
    pub api_key: Option<ApiKey>,
    pub key_source: KeySource,
    /// The base URL (`None` for `extractive`).
    pub base_url: Option<Url>,
    pub timeout: Duration,
    /// The model's output limit from the model table, when known: `max_tokens` is clamped to it.
    pub max_output_tokens: Option<u32>,
    /// True when no provider was named and no key was found: the extractive fallback.
    pub fell_back: bool,
}

/// The model family a name belongs to, when it is obvious.
fn model_family(model: &str) -> Option<ProviderKind> {
    let lower = model.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    if name.starts_with("claude") {
        return Some(ProviderKind::Anthropic);
    }
    let o_series = name.len() >= 2 && name.starts_with('o') && name.as_bytes()[1].is_ascii_digit();
    if name.starts_with("gpt-") || name.starts_with("chatgpt") || o_series {
        return Some(ProviderKind::OpenAi);
    }
    None
}

/// Resolves options against an environment lookup (`std::env::var` in production; tests
/// inject a map, since tests share one process environment).
pub fn resolve(
    options: &ProviderOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ProviderConfig, ValidationError> {
    let env_value = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let family = options.model.as_deref().and_then(model_family);
    let has_env_key = |kind: ProviderKind| env_value(kind.key_env()).is_some();

    let (kind, inferred) = match options.provider {
        Some(kind) => (kind, false),
        None => {
            let kind = if let Some(key) = &options.api_key {
                if key.expose().starts_with("sk-ant-") || family == Some(ProviderKind::Anthropic) {
                    ProviderKind::Anthropic
                } else {
                    ProviderKind::OpenAi
                }
            } else if let Some(f) = family.filter(|&f| has_env_key(f)) {
                f
            } else if has_env_key(ProviderKind::Anthropic) {
                ProviderKind::Anthropic
            } else if has_env_key(ProviderKind::OpenAi) {
                ProviderKind::OpenAi
            } else {
                ProviderKind::Extractive
            };
            (kind, true)
        }
    };

    let timeout = options.timeout.unwrap_or(DEFAULT_TIMEOUT);
    if kind == ProviderKind::Extractive {
        return Ok(ProviderConfig {
            kind,
            model: None,
            api_key: None,
            key_source: KeySource::Missing,
            base_url: None,
            timeout,
            max_output_tokens: None,
            fell_back: inferred,
        });
    }

    let (api_key, key_source) = match &options.api_key {
        Some(key) => (Some(key.clone()), KeySource::Option),
        None => match env_value(kind.key_env()) {
            Some(key) => (Some(ApiKey::new(key.trim())), KeySource::Environment),
            None => (None, KeySource::Missing),
        },
    };
    if let (Some(key), KeySource::Environment) = (&api_key, key_source) {
        if reqwest::header::HeaderValue::from_str(key.expose()).is_err() {
            return Err(ValidationError::argument(
                kind.key_env(),
                "contains characters that cannot be sent in an HTTP header",
            ));
        }
    }

    let base_url = match &options.base_url {
        Some(url) => parse_base_url(url, "options.baseUrl")?,
        None => match env_value(kind.base_url_env()) {
            Some(url) => parse_base_url(&url, kind.base_url_env())?,
            None => Url::parse(kind.default_base_url()).expect("default base URL"),
        },
    };

    // A model of the other provider's family is the agent's model (e.g. for the trigger),
    // not one this provider can serve, when the provider was inferred.
    let model = match (&options.model, family) {
        (Some(_), Some(f)) if inferred && f != kind => None,
        (model, _) => model.clone(),
    }
    .or_else(|| kind.default_model().map(str::to_string));
    let max_output_tokens = model
        .as_deref()
        .and_then(crate::model::models::max_output_tokens);

    Ok(ProviderConfig {
        kind,
        model,
        api_key,
        key_source,
        base_url: Some(base_url),
        timeout,
        max_output_tokens,
        fell_back: false,
    })
}

/// The environment of the process.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

static WARNED_FALLBACK: AtomicBool = AtomicBool::new(false);

/// What the zero-configuration fallback says, in the log and in each result it writes.
pub const FALLBACK_WARNING: &str = "neither ANTHROPIC_API_KEY nor OPENAI_API_KEY is set and no provider was given: summaries are written by the built-in extractive summarizer (set a key or options.provider for LLM summaries)";

/// The extractive summarizer chosen because nothing else was configured: the same summaries,
/// and a [`Summarizer::notice`] saying why, so that the result says it too.
struct FallbackExtractive(ExtractiveSummarizer);

impl Summarizer for FallbackExtractive {
    fn summarize<'a>(
        &'a self,
        request: &'a SummaryRequest<'a>,
    ) -> BoxFuture<'a, Result<String, AttemptError>> {
        self.0.summarize(request)
    }

    fn provider(&self) -> &str {
        self.0.provider()
    }

    fn wants_prompt(&self) -> bool {
        self.0.wants_prompt()
    }

    fn notice(&self) -> Option<&str> {
        Some(FALLBACK_WARNING)
    }
}

/// The summarizer for a resolved configuration.
pub fn build(config: ProviderConfig) -> Box<dyn Summarizer> {
    match config.kind {
        ProviderKind::Extractive => {
            if config.fell_back {
                if !WARNED_FALLBACK.swap(true, Ordering::Relaxed) {
                    tracing::warn!(provider = "extractive", "{FALLBACK_WARNING}");
                } else {
                    tracing::debug!(provider = "extractive", "using the extractive summarizer");
                }
                return Box::new(FallbackExtractive(ExtractiveSummarizer));
            }
            Box::new(ExtractiveSummarizer)
        }
        kind @ (ProviderKind::Anthropic
        | ProviderKind::OpenAi
        | ProviderKind::AnthropicCompaction) => {
            let model = config.model.clone().unwrap_or_default();
            let common = match http_provider(&config) {
                Ok(common) => common,
                Err(error) => {
                    return Box::new(Unavailable {
                        provider: summary_kind(kind).as_str(),
                        model: Some(model),
                        error,
                    })
                }
            };
            tracing::info!(
                provider = kind.as_str(),
                model = model.as_str(),
                base_url = common.base_url.as_str(),
                timeout_ms = config.timeout.as_millis() as u64,
                key_from = key_from(&config),
                "summaries by {} {model}",
                summary_kind(kind)
            );
            match kind {
                ProviderKind::OpenAi => Box::new(openai::OpenAiSummarizer::new(common)),
                _ => Box::new(anthropic::AnthropicSummarizer::new(common)),
            }
        }
    }
}

/// The provider that writes ordinary summaries for `kind`: `anthropic` for
/// `anthropic-compaction` (its fallback).
fn summary_kind(kind: ProviderKind) -> ProviderKind {
    match kind {
        ProviderKind::AnthropicCompaction => ProviderKind::Anthropic,
        other => other,
    }
}

/// Where the key came from, for the logs.
fn key_from(config: &ProviderConfig) -> &'static str {
    match config.key_source {
        KeySource::Option => "options.apiKey",
        _ => config.kind.key_env(),
    }
}

/// The shared part of an HTTP provider, or the error every attempt would fail with (no key:
/// `MISSING_API_KEY`; no HTTP client: `CONNECTION_FAILED`), not retried.
fn http_provider(config: &ProviderConfig) -> Result<HttpProvider, AttemptError> {
    let kind = config.kind;
    let model = config.model.clone().unwrap_or_default();
    let Some(key) = config.api_key.clone() else {
        tracing::debug!(
            provider = kind.as_str(),
            "no API key for the {kind} provider (options.apiKey or {})",
            kind.key_env()
        );
        return Err(AttemptError::new(
            ErrorCode::MissingApiKey,
            format!(
                "the {kind} provider needs an API key: pass options.apiKey or set {}",
                kind.key_env()
            ),
            Retry::No,
        ));
    };
    let base_url = config
        .base_url
        .clone()
        .unwrap_or_else(|| Url::parse(kind.default_base_url()).expect("default URL"));
    let client = http::build_client(&base_url).map_err(|e| {
        AttemptError::new(
            ErrorCode::ConnectionFailed,
            format!("could not create the HTTP client: {e}"),
            Retry::No,
        )
    })?;
    Ok(HttpProvider {
        client,
        base_url,
        model,
        key,
        timeout: config.timeout,
        max_output_tokens: config.max_output_tokens,
    })
}

/// What `provider: 'anthropic-compaction'` makes: the on-demand compaction client and the
/// summarizer to fall back to (same key, base URL, model and timeout).
pub struct CompactionProviders {
    /// The client, or why none can be made (no key: `MISSING_API_KEY`, not retried). The
    /// fallback then fails the same way.
    pub native: Result<anthropic_compaction::AnthropicCompactionClient, AttemptError>,
    /// The plain [`anthropic::AnthropicSummarizer`] (as [`build`] makes it).
    pub fallback: Box<dyn Summarizer>,
}

impl fmt::Debug for CompactionProviders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompactionProviders")
            .field("native", &self.native)
            .field("fallback", &self.fallback.provider())
            .finish()
    }
}

/// The compaction client and its fallback when the options name `anthropic-compaction`
/// (`None` for any other provider), resolved against the process environment.
pub fn compaction_from_options(
    options: &Value,
) -> Result<Option<CompactionProviders>, ValidationError> {
    compaction_from_options_with_env(options, &process_env)
}

/// [`compaction_from_options`] with an injected environment.
pub fn compaction_from_options_with_env(
    options: &Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<CompactionProviders>, ValidationError> {
    let options = ProviderOptions::from_json(options)?;
    let config = resolve(&options, env)?;
    Ok(build_compaction(config))
}

/// The compaction client and its fallback for a resolved configuration of kind
/// `anthropic-compaction` (`None` for any other kind).
pub fn build_compaction(config: ProviderConfig) -> Option<CompactionProviders> {
    if config.kind != ProviderKind::AnthropicCompaction {
        return None;
    }
    let native = http_provider(&config).map(|common| {
        tracing::info!(
            provider = config.kind.as_str(),
            model = common.model.as_str(),
            base_url = common.base_url.as_str(),
            timeout_ms = config.timeout.as_millis() as u64,
            key_from = key_from(&config),
            supported = ?anthropic_compaction::supports_compaction(&common.model),
            "on-demand compaction by anthropic {}",
            common.model
        );
        anthropic_compaction::AnthropicCompactionClient::new(common)
    });
    Some(CompactionProviders {
        native,
        fallback: build(config),
    })
}

/// A provider that cannot work (no key, no HTTP client): every attempt fails the same way,
/// without retries.
#[derive(Debug)]
pub struct Unavailable {
    provider: &'static str,
    model: Option<String>,
    error: AttemptError,
}

impl Summarizer for Unavailable {
    fn summarize<'a>(
        &'a self,
        _request: &'a SummaryRequest<'a>,
    ) -> BoxFuture<'a, Result<String, AttemptError>> {
        let error = self.error.clone();
        Box::pin(async move { Err(error) })
    }

    fn provider(&self) -> &str {
        self.provider
    }

    fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_providers_and_bad_urls_are_rejected() {
        let e = ProviderOptions::from_json(&json!({"provider": "gemini"})).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("options.provider: unknown provider"));
        let e = ProviderOptions::from_json(&json!({"baseUrl": "ftp://x"})).unwrap_err();
        assert!(e.to_string().starts_with("options.baseUrl"));
        let e = ProviderOptions::from_json(&json!({"timeoutMs": 0})).unwrap_err();
        assert!(e.to_string().starts_with("options.timeoutMs"));
        let e = ProviderOptions::from_json(&json!({"apiKey": 12345})).unwrap_err();
        assert!(!e.to_string().contains("12345"));
    }

    #[test]
    fn model_families() {
        assert_eq!(
            model_family("claude-3-5-haiku"),
            Some(ProviderKind::Anthropic)
        );
        assert_eq!(model_family("openai/gpt-4o"), Some(ProviderKind::OpenAi));
        assert_eq!(model_family("o3-mini"), Some(ProviderKind::OpenAi));
        assert_eq!(model_family("ollama-llama3"), None);
        assert_eq!(model_family("qwen3"), None);
    }
}
