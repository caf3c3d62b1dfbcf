//! **The option table**: every option of `CompactOptions` (index.d.ts) in one row — its JSON
//! name, its kind (with the range or the accepted names), its default, and who reads it: the
//! core (with the setter that writes the checked value into [`CompactOptions`]), the provider
//! options ([`super::providers`]), or the JavaScript layer alone (functions and objects that
//! never cross). [`CompactOptions::from_json`] walks these rows in order; the addon hands the
//! same rows to JavaScript (`lib/options/options.js`, the CLI), and a test checks them against
//! index.d.ts and docs/options.md. A new option is one row here (see ARCHITECTURE.md).

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::defaults as d;
use super::ranges::*;
use super::{
    as_options_map, field, find_non_finite, get_bool, get_store_options, int_in, parse_usage,
    range_text, wrong, CompactOptions, PromptStyle, Rehydrate, SummaryFallback, SummaryRequestMode,
};
use crate::base::error::ValidationError;
use crate::model::tokens::Encoding;
use crate::plan::offload::Scope;
use crate::plan::selective::SelectiveRules;
use crate::plan::strategy::Strategy;
use crate::plan::thinking::ThinkingPolicy;
use crate::summary::cache_evidence::CacheTokens;

/// What an option's value may be. The check of each kind is [`OptionSpec::check`].
#[derive(Debug, Clone)]
pub enum Kind {
    /// An integer within the range.
    Integer(RangeInclusive<u64>),
    /// An integer within the range, or a boolean (`false`: off, `true`: the default).
    IntegerOrBoolean(RangeInclusive<u64>),
    /// A number greater than 0 and at most 1.
    Ratio,
    /// A number from 0 to 1.
    RatioOrZero,
    Boolean,
    Text,
    /// One of these names.
    Choice(&'static [&'static str]),
    /// One of these names, or a boolean.
    ChoiceOrBoolean(&'static [&'static str]),
    /// An array of strings.
    List,
    /// An object of its own shape (its reader checks it).
    Object,
    /// A function, or anything: read by JavaScript alone.
    Any,
}

/// An option's default, when it is a plain value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DefaultValue {
    /// None, or one that depends on other options or on the environment.
    Derived,
    Integer(u64),
    Number(f64),
    Boolean(bool),
    Text(&'static str),
    EmptyList,
}

/// A checked value, as the setter of its row receives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Given<'a> {
    Integer(u64),
    Number(f64),
    Boolean(bool),
    Text(&'a str),
    Raw(&'a Value),
}

impl Given<'_> {
    fn usize(self) -> usize {
        match self {
            Given::Integer(n) => n as usize,
            _ => 0,
        }
    }
    fn text(self) -> String {
        match self {
            Given::Text(s) => s.to_string(),
            _ => String::new(),
        }
    }
    fn number(self) -> f64 {
        match self {
            Given::Number(n) => n,
            _ => 0.0,
        }
    }
    /// A section's budget: `false` turns it off, `true` is the default.
    fn budget(self, default: usize) -> usize {
        match self {
            Given::Boolean(true) => default,
            _ => self.usize(),
        }
    }
    fn boolean(self) -> bool {
        matches!(self, Given::Boolean(true))
    }
    fn raw(self) -> Value {
        match self {
            Given::Raw(v) => v.clone(),
            _ => Value::Null,
        }
    }
}

type Setter = for<'a> fn(
    &mut CompactOptions,
    Given<'a>,
    &'a Map<String, Value>,
) -> Result<(), ValidationError>;

/// Who reads an option.
#[derive(Clone, Copy)]
pub enum Reader {
    /// The core, into [`CompactOptions`], with this setter (the value already checked).
    Set(fn(&mut CompactOptions, Given)),
    /// The core, with this reader, which may still refuse the value (a name it does not know,
    /// an object of the wrong shape).
    Check(Setter),
    /// The provider options ([`super::providers`]).
    Provider,
    /// The JavaScript layer alone: it never crosses into the addon.
    Js,
}

/// One option.
#[derive(Clone)]
pub struct OptionSpec {
    /// The name in the options object.
    pub name: &'static str,
    pub kind: Kind,
    pub default: DefaultValue,
    pub read: Reader,
}

const fn row(name: &'static str, kind: Kind, default: DefaultValue, read: Reader) -> OptionSpec {
    OptionSpec {
        name,
        kind,
        default,
        read,
    }
}

fn quoted(names: &[&str]) -> String {
    let names: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

impl OptionSpec {
    /// `value` checked against the option's kind: the value, or the error naming the option and
    /// what it expects.
    pub fn check<'a>(&self, value: &'a Value) -> Result<Given<'a>, ValidationError> {
        let name = self.name;
        Ok(match &self.kind {
            Kind::Integer(range) => Given::Integer(int_in(value, name, range.clone())?),
            Kind::IntegerOrBoolean(range) => match value {
                Value::Bool(b) => Given::Boolean(*b),
                _ => Given::Integer(int_in(value, name, range.clone()).map_err(|_| {
                    wrong(name, &format!("{} or a boolean", range_text(range)), value)
                })?),
            },
            Kind::Ratio => Given::Number(
                value
                    .as_f64()
                    .filter(|n| n.is_finite() && *n > 0.0 && *n <= 1.0)
                    .ok_or_else(|| wrong(name, "a number greater than 0 and at most 1", value))?,
            ),
            Kind::RatioOrZero => Given::Number(
                value
                    .as_f64()
                    .filter(|n| n.is_finite() && (0.0..=1.0).contains(n))
                    .ok_or_else(|| wrong(name, "a number from 0 to 1", value))?,
            ),
            Kind::Boolean => match value {
                Value::Bool(b) => Given::Boolean(*b),
                _ => return Err(wrong(name, "a boolean", value)),
            },
            Kind::Text | Kind::Choice(_) => match value {
                Value::String(s) => Given::Text(s),
                _ => return Err(wrong(name, "a string", value)),
            },
            Kind::ChoiceOrBoolean(names) => match value {
                Value::Bool(b) => Given::Boolean(*b),
                Value::String(s) => Given::Text(s),
                _ => {
                    return Err(wrong(
                        name,
                        &format!("{} or a boolean", quoted(names)),
                        value,
                    ))
                }
            },
            Kind::List | Kind::Object | Kind::Any => Given::Raw(value),
        })
    }

    /// The row as JavaScript reads it (`optionTable()` in the addon).
    pub fn to_json(&self) -> Value {
        let (kind, range, values): (&str, Option<&RangeInclusive<u64>>, &[&str]) = match &self.kind
        {
            Kind::Integer(r) => ("integer", Some(r), &[]),
            Kind::IntegerOrBoolean(r) => ("integer-or-boolean", Some(r), &[]),
            Kind::Ratio => ("ratio", None, &[]),
            Kind::RatioOrZero => ("ratio-or-zero", None, &[]),
            Kind::Boolean => ("boolean", None, &[]),
            Kind::Text => ("string", None, &[]),
            Kind::Choice(v) => ("choice", None, v),
            Kind::ChoiceOrBoolean(v) => ("choice-or-boolean", None, v),
            Kind::List => ("list", None, &[]),
            Kind::Object => ("object", None, &[]),
            Kind::Any => ("any", None, &[]),
        };
        let default = match self.default {
            D::Derived => Value::Null,
            D::Integer(n) => json!(n),
            D::Number(n) => json!(n),
            D::Boolean(b) => json!(b),
            D::Text(s) => json!(s),
            D::EmptyList => json!([]),
        };
        let read = match self.read {
            Reader::Set(_) | Reader::Check(_) => "core",
            Reader::Provider => "provider",
            Reader::Js => "js",
        };
        let mut out = json!({ "name": self.name, "kind": kind, "default": default, "read": read });
        if let Some(r) = range {
            out["min"] = json!(r.start());
            out["max"] = json!(r.end());
        }
        if !values.is_empty() {
            out["values"] = json!(values);
        }
        out
    }
}

/// The table as JSON, for the addon.
pub fn table_json() -> Value {
    Value::Array(OPTIONS.iter().map(OptionSpec::to_json).collect())
}

/// The row of `name`.
pub fn spec(name: &str) -> Option<&'static OptionSpec> {
    OPTIONS.iter().find(|s| s.name == name)
}

pub const ENCODINGS: &[&str] = &["o200k_base", "cl100k_base"];
pub const FORMATS: &[&str] = &[
    "auto",
    "anthropic",
    "openai",
    "openai-responses",
    "ai-sdk",
    "gemini",
    "bedrock",
    "langchain",
];
pub const PROVIDERS: &[&str] = &["anthropic", "openai", "extractive", "anthropic-compaction"];
pub const PROMPT_STYLES: &[&str] = &["structured", "continuation"];
pub const SUMMARY_REQUESTS: &[&str] = &["auto", "shared", "transcript"];
pub const SUMMARY_FALLBACKS: &[&str] = &["extractive", "none"];
pub const OFFLOAD_SCOPES: &[&str] = &["tool-results", "all", "off"];
pub const THINKING_POLICIES: &[&str] = &["auto", "keep", "strip"];
pub const LOG_LEVELS: &[&str] = &["off", "error", "warn", "info", "debug"];

fn choice_error(name: &str, names: &[&str], got: &str) -> ValidationError {
    ValidationError::argument(
        &format!("options.{name}"),
        format!("expected {}, got {got:?}", quoted(names)),
    )
}

use DefaultValue as D;
use Kind as K;
use Reader::{Check, Js, Provider, Set};

/// Every option, in the order the core reads them: a row that depends on another comes after
/// it (`outputDir` after the retries, `storeOptions` after `outputDir`, `agentRequest` after
/// `system` and `tools`). The order is also the one a misspelled name's suggestion prefers.
// One row a line, read as a table (name, kind, default, reader).
#[rustfmt::skip]
pub static OPTIONS: &[OptionSpec] = &[
    row("format", K::Choice(FORMATS), D::Text("auto"), Check(format)),
    row("contextTokenLimit", K::Integer(TOKENS), D::Integer(d::CONTEXT_TOKEN_LIMIT as u64), Set(|o, g| o.context_token_limit = g.usize())),
    row("thresholdRatio", K::Ratio, D::Number(d::COMPACT_THRESHOLD_RATIO), Set(|o, g| o.threshold_ratio = g.number())),
    // 0: the PRD's extreme case, an empty tail (the head and the summary message).
    row("tailRetentionRatio", K::RatioOrZero, D::Number(d::TAIL_RETENTION_RATIO), Set(|o, g| o.tail_retention_ratio = g.number())),
    row("maxRetries", K::Integer(RETRIES), D::Integer(d::COMPACT_MAX_RETRIES as u64), Set(|o, g| o.max_retries = g.usize() as u32)),
    row("retryBaseDelayMs", K::Integer(RETRY_BASE_DELAY_MS), D::Integer(d::RETRY_BASE_DELAY_MS), Set(|o, g| o.retry_base_delay = Duration::from_millis(g.usize() as u64))),
    row("encoding", K::Choice(ENCODINGS), D::Text("o200k_base"), Check(encoding)),
    row("provider", K::Choice(PROVIDERS), D::Derived, Provider),
    row("model", K::Text, D::Derived, Set(|o, g| o.model = Some(g.text()))),
    row("apiKey", K::Text, D::Derived, Provider),
    row("baseUrl", K::Text, D::Derived, Provider),
    row("timeoutMs", K::Integer(TIMEOUT_MS), D::Integer(d::TIMEOUT_MS), Provider),
    row("summaryMaxTokens", K::Integer(OUTPUT_TOKENS), D::Integer(d::SUMMARY_MAX_TOKENS as u64), Set(|o, g| o.summary_max_tokens = g.usize() as u32)),
    row("summaryContextTokens", K::Integer(TOKENS), D::Derived, Set(|o, g| o.summary_context_tokens = Some(g.usize()))),
    row("customInstructions", K::Text, D::Derived, Set(|o, g| o.custom_instructions = Some(g.text()))),
    row("promptStyle", K::Choice(PROMPT_STYLES), D::Text("structured"), Check(prompt_style)),
    row("summarizer", K::Any, D::Derived, Js),
    row("outputDir", K::Text, D::Text(crate::archive::DEFAULT_OUTPUT_DIR), Check(output_dir)),
    row("storeOptions", K::Object, D::Derived, Check(store_options)),
    row("archiveStore", K::Object, D::Derived, Js),
    row("sessionId", K::Text, D::Text(crate::archive::DEFAULT_SESSION_ID), Set(|o, g| o.session_id = g.text())),
    row("force", K::Boolean, D::Boolean(false), Set(|o, g| o.force = g.boolean())),
    row("requireArchive", K::Boolean, D::Boolean(false), Set(|o, g| o.require_archive = g.boolean())),
    row("keepRecentTurns", K::Integer(MESSAGES_OR_ZERO), D::Integer(0), Set(|o, g| o.keep_recent_turns = g.usize())),
    row("strategy", K::Choice(Strategy::NAMES), D::Text("summary"), Check(strategy)),
    row("selectiveRules", K::Object, D::Derived, Check(|o, g, _| SelectiveRules::from_json(&g.raw()).map(|r| o.selective_rules = r))),
    row("keepRecentMessages", K::Integer(MESSAGES), D::Integer(d::KEEP_RECENT_MESSAGES as u64), Set(|o, g| o.keep_recent_messages = g.usize())),
    row("compression", K::Object, D::Derived, Check(compression)),
    // 0: any message fires.
    row("maxMessages", K::Integer(MESSAGES_OR_ZERO), D::Derived, Set(|o, g| o.max_messages = Some(g.usize()))),
    row("maxToolOutputBytes", K::Integer(BYTES), D::Derived, Set(|o, g| o.max_tool_output_bytes = Some(g.usize()))),
    row("summaryMaxChars", K::Integer(CHARACTERS), D::Derived, Set(|o, g| o.summary_max_chars = Some(g.usize()))),
    // `false` turns the verbatim user messages off, `true` is the default budget (`None`).
    row("userMessagesMaxTokens", K::IntegerOrBoolean(TOKENS_OR_ZERO), D::Derived, Set(|o, g| o.user_messages_max_tokens = (g != Given::Boolean(true)).then(|| g.usize()))),
    row("rehydrate", K::Object, D::Derived, Check(rehydrate)),
    row("extractMemory", K::Boolean, D::Boolean(false), Set(|o, g| o.extract_memory = g.boolean())),
    row("checkpoints", K::Boolean, D::Boolean(true), Set(|o, g| o.checkpoints = g.boolean())),
    row("background", K::Object, D::Derived, Js),
    row("offload", K::ChoiceOrBoolean(OFFLOAD_SCOPES), D::Text("tool-results"), Check(offload)),
    row("thinking", K::Choice(THINKING_POLICIES), D::Text("auto"), Check(thinking)),
    row("compactionUnavailableModels", K::List, D::EmptyList, Check(compaction_unavailable_models)),
    // The JS layer passes `overflow: true` when the caller gave the API's refusal (the error
    // itself stays in JS).
    row("overflow", K::Any, D::Derived, Set(|o, g| o.overflow_recovery = g.raw() == Value::Bool(true))),
    row("onBeforeCompact", K::Any, D::Derived, Js),
    row("planMaxTokens", K::IntegerOrBoolean(TOKENS_OR_ZERO), D::Integer(d::PLAN_MAX_TOKENS as u64), Set(|o, g| o.plan_max_tokens = g.budget(d::PLAN_MAX_TOKENS))),
    row("planTools", K::List, D::EmptyList, Check(plan_tools)),
    row("latestFailureMaxTokens", K::IntegerOrBoolean(TOKENS_OR_ZERO), D::Integer(d::LATEST_FAILURE_MAX_TOKENS as u64), Set(|o, g| o.latest_failure_max_tokens = g.budget(d::LATEST_FAILURE_MAX_TOKENS))),
    row("summaryBudgetTokens", K::Integer(TOKENS), D::Derived, Set(|o, g| o.summary_budget_tokens = Some(g.usize()))),
    row("agentModel", K::Text, D::Derived, Set(|o, g| o.agent_model = Some(g.text()))),
    row("usage", K::Object, D::Derived, Check(usage)),
    row("system", K::Object, D::Derived, Check(|o, g, _| system_value(g.raw(), "system").map(|v| o.system = Some(v)))),
    row("tools", K::List, D::Derived, Check(|o, g, _| tools_value(g.raw(), "tools").map(|v| o.tools = Some(v)))),
    row("agentRequest", K::Object, D::Derived, Check(agent_request)),
    row("summaryRequest", K::Choice(SUMMARY_REQUESTS), D::Text("auto"), Check(summary_request)),
    row("summaryFallback", K::Choice(SUMMARY_FALLBACKS), D::Text("extractive"), Check(summary_fallback)),
    row("signal", K::Any, D::Derived, Js),
    row("onEvent", K::Any, D::Derived, Js),
    row("onLog", K::Any, D::Derived, Js),
    row("logger", K::Any, D::Derived, Js),
    row("logLevel", K::Choice(LOG_LEVELS), D::Text("off"), Js),
    row("strict", K::Boolean, D::Boolean(false), Js),
];

// The readers of the rows whose value can still be wrong once its kind is checked.

fn format(o: &mut CompactOptions, g: Given, _: &Map<String, Value>) -> Result<(), ValidationError> {
    o.format = format_named(&g.text())?;
    Ok(())
}

/// The `format` option's value named `name` (`None`: `auto`, detect it), or the error saying
/// which names it takes. Also how a function's own `format` argument is read.
pub fn format_named(name: &str) -> Result<Option<crate::formats::Format>, ValidationError> {
    crate::formats::Format::parse(name).ok_or_else(|| {
        ValidationError::argument(
            "options.format",
            format!("expected {}, got {name:?}", crate::formats::FORMAT_NAMES),
        )
    })
}

fn encoding(
    o: &mut CompactOptions,
    g: Given,
    _: &Map<String, Value>,
) -> Result<(), ValidationError> {
    o.encoding = encoding_named(&g.text())?;
    Ok(())
}

/// The `encoding` option's value named `name`, or the error saying which names it takes. Also
/// how a function's own `encoding` argument is read.
pub fn encoding_named(name: &str) -> Result<Encoding, ValidationError> {
    Encoding::parse(name).ok_or_else(|| {
        ValidationError::argument(
            "options.encoding",
            format!("unknown encoding {name:?} (expected \"o200k_base\" or \"cl100k_base\")"),
        )
    })
}

fn prompt_style(
    o: &mut CompactOptions,
    g: Given,
    _: &Map<String, Value>,
) -> Result<(), ValidationError> {
    o.prompt_style = match g.text().as_str() {
        "structured" => PromptStyle::Structured,
        "continuation" => PromptStyle::Continuation,
        other => {
            return Err(ValidationError::argument(
                "options.promptStyle",
                format!("unknown style {other:?} (expected \"structured\" or \"continuation\")"),
            ))
        }
    };
    Ok(())
}

fn store_options(
    o: &mut CompactOptions,
    _: Given,
    _: &Map<String, Value>,
) -> Result<(), ValidationError> {
    if o.archive_store.is_none() {
        return Err(ValidationError::argument(
            "options.storeOptions",
            "only applies when outputDir is an object-store URL (s3://, gs://, az://, file://)",
        ));
    }
    Ok(())
}

fn strategy(
    o: &mut CompactOptions,
    g: Given,
    _: &Map<String, Value>,
) -> Result<(), ValidationError> {
    let name = g.text();
    o.strategy = Strategy::parse(&name).ok_or_else(|| {
        ValidationError::argument(
            "options.strategy",
            format!(
                "unknown strategy {name:?} (expected one of {}, or an object with a compress method)",
                Strategy::NAMES.join(", ")
            ),
        )
    })?;
    Ok(())
}

fn offload(
    o: &mut CompactOptions,
    g: Given,
    _: &Map<String, Value>,
) -> Result<(), ValidationError> {
    o.offload = match g {
        // `offload: false` reads as "off", `true` as the default.
        Given::Boolean(false) => Scope::Off,
        Given::Boolean(true) => Scope::ToolResults,
        _ => {
            let name = g.text();
            Scope::parse(&name).ok_or_else(|| {
                ValidationError::argument(
                    "options.offload",
                    format!("expected 'tool-results', 'all', 'off' or a boolean, got {name:?}"),
                )
            })?
        }
    };
    Ok(())
}

fn thinking(
    o: &mut CompactOptions,
    g: Given,
    _: &Map<String, Value>,
) -> Result<(), ValidationError> {
    let name = g.text();
    o.thinking = ThinkingPolicy::parse(&name)
        .ok_or_else(|| choice_error("thinking", THINKING_POLICIES, &name))?;
    Ok(())
}

fn summary_request(
    o: &mut CompactOptions,
    g: Given,
    _: &Map<String, Value>,
) -> Result<(), ValidationError> {
    let name = g.text();
    o.summary_request = SummaryRequestMode::parse(&name)
        .ok_or_else(|| choice_error("summaryRequest", SUMMARY_REQUESTS, &name))?;
    Ok(())
}

fn summary_fallback(
    o: &mut CompactOptions,
    g: Given,
    _: &Map<String, Value>,
) -> Result<(), ValidationError> {
    let name = g.text();
    o.summary_fallback = SummaryFallback::parse(&name)
        .ok_or_else(|| choice_error("summaryFallback", SUMMARY_FALLBACKS, &name))?;
    Ok(())
}

fn compaction_unavailable_models(
    o: &mut CompactOptions,
    g: Given,
    _: &Map<String, Value>,
) -> Result<(), ValidationError> {
    let models = g.raw();
    o.compaction_unavailable_models = models
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .ok_or_else(|| {
            wrong(
                "compactionUnavailableModels",
                "an array of model names",
                &models,
            )
        })?;
    Ok(())
}

fn plan_tools(
    o: &mut CompactOptions,
    g: Given,
    _: &Map<String, Value>,
) -> Result<(), ValidationError> {
    let tools = g.raw();
    let names = tools
        .as_array()
        .filter(|list| {
            list.iter()
                .all(|n| n.as_str().is_some_and(|n| !n.trim().is_empty()))
        })
        .ok_or_else(|| {
            wrong(
                "planTools",
                "an array of tool names (non-empty strings)",
                &tools,
            )
        })?;
    o.plan_tools = names
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    Ok(())
}

fn usage(o: &mut CompactOptions, g: Given, _: &Map<String, Value>) -> Result<(), ValidationError> {
    let value = g.raw();
    o.usage = Some(parse_usage(&value)?);
    o.usage_cache = Some(CacheTokens::from_usage(&value));
    Ok(())
}

impl CompactOptions {
    /// Reads options from a JSON object (see the module docs): the rows of the option table
    /// ([`OPTIONS`]) the core reads, in order, then what is derived from them.
    pub fn from_json(value: &Value) -> Result<CompactOptions, ValidationError> {
        let map = as_options_map(value)?;
        let mut o = CompactOptions::default();
        for spec in OPTIONS {
            let Some(value) = field(&map, spec.name) else {
                continue;
            };
            match spec.read {
                Set(set) => set(&mut o, spec.check(value)?),
                Check(read) => read(&mut o, spec.check(value)?, &map)?,
                Provider | Js => {}
            }
        }
        // Set by the JS layer from the store's record (never by the caller: it drops the key
        // from their options). A record it cannot read stands for none.
        if let Some(models) = field(&map, "learntModels") {
            o.learnt_models = serde_json::from_value(models.clone()).unwrap_or_default();
        }
        // Set by a `Compactor` (never by the caller: the JS layer drops it from their options).
        if let Some(declined) = field(&map, "summaryDeclined") {
            o.summary_declined = Some(serde_json::from_value(declined.clone()).map_err(|e| {
                ValidationError::argument("options.summaryDeclined", e.to_string())
            })?);
        }
        // The loop's own model, when it says it in `agentRequest`.
        if o.agent_model.is_none() {
            o.agent_model = o
                .agent_request
                .as_ref()
                .and_then(|body| body.get("model")?.as_str().map(str::to_string));
        }
        if field(&map, "contextTokenLimit").is_none() {
            if let Some(window) = o
                .agent_model
                .as_deref()
                .and_then(crate::model::models::context_window)
            {
                o.context_token_limit = window;
            }
        }
        o.validate()?;
        Ok(o)
    }
}

fn system_value(value: Value, name: &str) -> Result<Value, ValidationError> {
    match value {
        Value::String(_) | Value::Array(_) => Ok(value),
        other => Err(wrong(name, "a string or an array of text blocks", &other)),
    }
}

fn tools_value(value: Value, name: &str) -> Result<Value, ValidationError> {
    match value {
        Value::Array(_) => Ok(value),
        other => Err(wrong(name, "an array of tool definitions", &other)),
    }
}

fn output_dir(
    o: &mut CompactOptions,
    given: Given,
    map: &Map<String, Value>,
) -> Result<(), ValidationError> {
    let dir = given.text();
    if dir.is_empty() {
        return Err(ValidationError::argument(
            "options.outputDir",
            "must not be empty",
        ));
    }
    if crate::archive::store::is_store_url(&dir) {
        let retry = crate::base::retry::RetryPolicy {
            max_retries: o.max_retries,
            base_delay: o.retry_base_delay,
        };
        let store = crate::archive::store::ArchiveStore::open(
            &dir,
            &get_store_options(map)?,
            retry,
            "options.outputDir",
        )?;
        o.archive_store = Some(Arc::new(store));
    }
    o.output_dir = PathBuf::from(dir);
    Ok(())
}

fn agent_request(
    o: &mut CompactOptions,
    given: Given,
    _: &Map<String, Value>,
) -> Result<(), ValidationError> {
    let Value::Object(body) = given.raw() else {
        return Err(wrong(
            "agentRequest",
            "an object (the request body without its messages)",
            &given.raw(),
        ));
    };
    // The loop's messages come separately; a `messages` field here is a mistake that would
    // otherwise be sent twice.
    if body.contains_key("messages") || body.contains_key("contents") || body.contains_key("input")
    {
        return Err(ValidationError::argument(
            "options.agentRequest",
            "must not hold the messages (messages, contents, input): pass the request body without them",
        ));
    }
    if let Some(model) = body.get("model").filter(|m| !m.is_string()) {
        return Err(wrong("agentRequest.model", "a string", model));
    }
    // It is sent as JSON: a NaN or Infinity in it cannot be.
    if let Some((path, value)) = find_non_finite(&Value::Object(body.clone()), "") {
        return Err(ValidationError::argument(
            &format!("options.agentRequest{path}"),
            format!("{value} cannot be sent as JSON"),
        ));
    }
    // What the loop sends also counts toward the trigger, when not given apart.
    if o.system.is_none() {
        if let Some(system) = body.get("system").filter(|v| !v.is_null()) {
            o.system = Some(system_value(system.clone(), "agentRequest.system")?);
        }
    }
    if o.tools.is_none() {
        if let Some(tools) = body.get("tools").filter(|v| !v.is_null()) {
            o.tools = Some(tools_value(tools.clone(), "agentRequest.tools")?);
        }
    }
    o.agent_request = Some(Arc::new(body));
    Ok(())
}

fn compression(
    o: &mut CompactOptions,
    given: Given,
    _: &Map<String, Value>,
) -> Result<(), ValidationError> {
    let Value::Object(compression) = given.raw() else {
        return Err(wrong(
            "compression",
            "an object { enabled?, threshold?, targetTokens? }",
            &given.raw(),
        ));
    };
    let name = |field: &str| format!("compression.{field}");
    if let Some(v) = get_bool(&compression, "enabled")
        .map_err(|_| wrong(&name("enabled"), "a boolean", &compression["enabled"]))?
    {
        o.enabled = v;
    }
    o.threshold_override = field(&compression, "threshold")
        .map(|v| int_in(v, &name("threshold"), TOKENS))
        .transpose()?
        .map(|v| v as usize);
    o.target_tokens = field(&compression, "targetTokens")
        .map(|v| int_in(v, &name("targetTokens"), TOKENS_OR_ZERO))
        .transpose()?
        .map(|v| v as usize);
    Ok(())
}

fn rehydrate(
    o: &mut CompactOptions,
    given: Given,
    _: &Map<String, Value>,
) -> Result<(), ValidationError> {
    match given.raw() {
        Value::Bool(false) => {}
        Value::Bool(true) => o.rehydrate = Some(Rehydrate::default()),
        // `read` is a function: the binding attaches it (it never crosses as JSON).
        Value::Object(given) => {
            let mut rehydrate = Rehydrate::default();
            for (key, slot, range) in [
                ("maxFiles", &mut rehydrate.max_files, FILES),
                (
                    "maxTokensPerFile",
                    &mut rehydrate.max_tokens_per_file,
                    TOKENS_OR_ZERO,
                ),
                ("maxTokens", &mut rehydrate.max_tokens, TOKENS_OR_ZERO),
            ] {
                if let Some(value) = field(&given, key) {
                    *slot = int_in(value, &format!("rehydrate.{key}"), range)? as usize;
                }
            }
            o.rehydrate = Some(rehydrate);
        }
        other => {
            return Err(wrong(
                "rehydrate",
                "an object { read?, maxFiles?, maxTokensPerFile?, maxTokens? } or a boolean",
                &other,
            ))
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn debug(o: &CompactOptions) -> String {
        format!("{o:?}")
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = OPTIONS.iter().map(|s| s.name).collect();
        names.sort();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len());
    }

    #[test]
    fn a_default_given_reads_as_the_default() {
        let defaults = debug(&CompactOptions::default());
        for spec in OPTIONS
            .iter()
            .filter(|s| matches!(s.read, Set(_) | Check(_)))
        {
            let value = spec.to_json()["default"].clone();
            if value.is_null() {
                continue;
            }
            let o = CompactOptions::from_json(&json!({ spec.name: value })).unwrap();
            assert_eq!(debug(&o), defaults, "{}", spec.name);
        }
        let retry = crate::base::retry::RetryPolicy::default();
        assert_eq!(retry.max_retries, d::COMPACT_MAX_RETRIES);
        assert_eq!(
            retry.base_delay,
            Duration::from_millis(d::RETRY_BASE_DELAY_MS)
        );
        assert_eq!(
            crate::providers::http::DEFAULT_TIMEOUT,
            Duration::from_millis(d::TIMEOUT_MS)
        );
    }

    #[test]
    fn every_listed_name_is_read_and_no_other() {
        for spec in OPTIONS
            .iter()
            .filter(|s| matches!(s.read, Set(_) | Check(_)))
        {
            let names = match spec.kind {
                K::Choice(names) | K::ChoiceOrBoolean(names) => names,
                _ => continue,
            };
            for name in names {
                CompactOptions::from_json(&json!({ spec.name: name }))
                    .unwrap_or_else(|e| panic!("{}: {name}: {e}", spec.name));
            }
            let e = CompactOptions::from_json(&json!({ spec.name: "no-such-name" })).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with(&format!("options.{}:", spec.name)),
                "{e}"
            );
        }
        for name in PROVIDERS {
            crate::providers::ProviderOptions::from_json(&json!({ "provider": name })).unwrap();
        }
    }

    #[test]
    fn integers_are_refused_outside_their_range() {
        for spec in OPTIONS
            .iter()
            .filter(|s| matches!(s.read, Set(_) | Check(_)))
        {
            let (K::Integer(range) | K::IntegerOrBoolean(range)) = &spec.kind else {
                continue;
            };
            let e = CompactOptions::from_json(&json!({ spec.name: range.end() + 1 }))
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with(&format!(
                    "options.{}: expected {}",
                    spec.name,
                    range_text(range)
                )),
                "{e}"
            );
            CompactOptions::from_json(&json!({ spec.name: range.end() })).unwrap();
        }
    }
}
