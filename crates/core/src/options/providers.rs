//! The provider options (`provider`, `model`, `apiKey`, `baseUrl`, `timeoutMs`,
//! `summaryMaxTokens`), read from JSON into [`ProviderOptions`], and the summarizer they ask for.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{as_options_map, get_int, get_string, ranges, CompactOptions};
use crate::base::error::ValidationError;
use crate::providers::{
    build, compaction_from_options, parse_base_url, process_env, resolve, ApiKey, ProviderKind,
    ProviderOptions,
};
use crate::summary::summarize::Summarizer;

impl ProviderOptions {
    /// Reads `provider`, `model`, `apiKey`, `baseUrl`, `timeoutMs` and `summaryMaxTokens` from
    /// the options object (other fields are ignored). Empty `apiKey`/`baseUrl`/`model` strings
    /// count as absent.
    pub fn from_json(value: &Value) -> Result<ProviderOptions, ValidationError> {
        let map = as_options_map(value)?;
        Self::from_map(&map)
    }

    pub fn from_map(map: &Map<String, Value>) -> Result<ProviderOptions, ValidationError> {
        let non_empty = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
        let provider = match get_string(map, "provider")? {
            None => None,
            Some(name) => Some(ProviderKind::parse(&name).ok_or_else(|| {
                ValidationError::argument(
                    "options.provider",
                    format!(
                        "unknown provider {:?} (expected \"anthropic\", \"openai\", \"extractive\" or \"anthropic-compaction\")",
                        crate::base::text::clip(&name, 40)
                    ),
                )
            })?),
        };
        // Never echo a wrongly typed key back in the error.
        let api_key = match map.get("apiKey") {
            None | Some(Value::Null) => None,
            Some(Value::String(key)) => Some(key.trim().to_string()),
            Some(_) => {
                return Err(ValidationError::argument(
                    "options.apiKey",
                    "expected a string",
                ))
            }
        };
        let api_key = non_empty(api_key).map(ApiKey::new);
        if let Some(key) = &api_key {
            if reqwest::header::HeaderValue::from_str(key.expose()).is_err() {
                return Err(ValidationError::argument(
                    "options.apiKey",
                    "contains characters that cannot be sent in an HTTP header",
                ));
            }
        }
        let base_url = non_empty(get_string(map, "baseUrl")?);
        if let Some(url) = &base_url {
            parse_base_url(url, "options.baseUrl")?;
        }
        let timeout = get_int(map, "timeoutMs", ranges::TIMEOUT_MS)?.map(Duration::from_millis);
        let summary_max_tokens =
            get_int(map, "summaryMaxTokens", ranges::OUTPUT_TOKENS)?.map(|n| n as u32);
        Ok(ProviderOptions {
            provider,
            // The summary model defaults to the loop's own (`agentRequest.model`): a shared
            // request is only a cache hit on the model that wrote the cache.
            model: non_empty(get_string(map, "model")?).or_else(|| {
                map.get("agentRequest")
                    .and_then(|body| body.get("model"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .filter(|m| !m.trim().is_empty())
            }),
            api_key,
            base_url,
            timeout,
            summary_max_tokens,
        })
    }
}

/// The summarizer of a compaction whose caller gave none of their own: with `provider:
/// 'anthropic-compaction'`, Anthropic's on-demand compaction (its client set in
/// `options.native_compaction`) with the plain Anthropic summarizer as its fallback; else the
/// provider the options (or, with zero configuration, the environment) choose.
pub fn choose(
    raw: &Value,
    options: &mut CompactOptions,
) -> Result<Box<dyn Summarizer>, ValidationError> {
    match compaction_from_options(raw)? {
        Some(compaction) => {
            options.native_compaction = compaction.native.ok().map(Arc::new);
            Ok(compaction.fallback)
        }
        None => from_options(raw),
    }
}

/// The summarizer the options ask for, resolved against the process environment.
pub fn from_options(options: &Value) -> Result<Box<dyn Summarizer>, ValidationError> {
    from_options_with_env(options, &process_env)
}

/// [`from_options`] with an injected environment.
pub fn from_options_with_env(
    options: &Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Box<dyn Summarizer>, ValidationError> {
    let options = ProviderOptions::from_json(options)?;
    let config = resolve(&options, env)?;
    Ok(build(config))
}
