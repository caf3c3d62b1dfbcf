//! The option table (`context_compact_core::options::table`), handed to the JS layer: the names,
//! kinds, ranges, accepted names and defaults that `lib/options.js` and the CLI read instead of
//! lists of their own; and a `Compactor`'s options, held here so that they cross once
//! ([`HeldOptions`]).

use crate::convert::{guarded, invalid, parse_json};
use context_compact_core::base::error::ValidationError;
use context_compact_core::pipeline::CompactOptions;
use context_compact_core::providers::ProviderOptions;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Every option as `[{ name, kind, min?, max?, values?, default, read }]` (JSON): `read` says
/// who reads it (`core`, `provider`, or `js` for functions and objects that never cross).
#[napi]
pub fn option_table_json() -> String {
    context_compact_core::options::table::table_json().to_string()
}

// ---------------------------------------------------------------------------------------------
// A Compactor's options, held in the addon

/// A `Compactor`'s options as read once: the struct, the JSON object they came from (for the
/// provider options), and the tokens of `system` and `tools`, counted at the first call that
/// needs them and never again (a step below the threshold would otherwise count them anew).
pub(crate) struct Held {
    options: CompactOptions,
    /// The options without `system` and `tools`, which a step's measure copies (to add the
    /// call's calibration) without copying them.
    slim: CompactOptions,
    value: Arc<Value>,
    extra: OnceLock<usize>,
}

impl Held {
    fn extra_tokens(&self) -> usize {
        *self.extra.get_or_init(|| self.options.extra_tokens())
    }
}

fn held_options() -> &'static Mutex<HashMap<u32, Arc<Held>>> {
    static HELD: OnceLock<Mutex<HashMap<u32, Arc<Held>>>> = OnceLock::new();
    HELD.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Reads options from their JSON object, provider options checked too (so that a `Compactor`
/// reports them when it is created).
fn read(value: &Value) -> Result<CompactOptions> {
    let options = CompactOptions::from_json(value).map_err(invalid)?;
    ProviderOptions::from_json(value).map_err(invalid)?;
    Ok(options)
}

/// A `Compactor`'s options, handed to the addon once (when it is made, and again only when an
/// option object it was given changed in place, see `lib/options.js`): the per-step calls
/// (`measureHeldJson`, `compactJson`) pass its id and only what the call itself changes.
/// Dropped with the handle when it is garbage-collected.
#[napi]
pub struct HeldOptions {
    id: u32,
}

#[napi]
impl HeldOptions {
    /// Reads the options (a TypeError naming the option when one is invalid).
    #[napi(constructor)]
    pub fn new(options_json: String) -> Result<Self> {
        guarded("Compactor", || {
            let value = parse_json(&options_json, "options")?;
            let options = read(&value)?;
            static NEXT: AtomicU32 = AtomicU32::new(1);
            let id = NEXT.fetch_add(1, Ordering::Relaxed);
            let mut slim = options.clone();
            slim.system = None;
            slim.tools = None;
            let held = Held {
                options,
                slim,
                value: Arc::new(value),
                extra: OnceLock::new(),
            };
            held_options()
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(id, Arc::new(held));
            Ok(HeldOptions { id })
        })
    }

    /// The id the per-call functions take.
    #[napi(getter)]
    pub fn id(&self) -> u32 {
        self.id
    }
}

impl Drop for HeldOptions {
    fn drop(&mut self) {
        held_options()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.id);
    }
}

/// The options whose change changes what `system` and `tools` count.
const COUNTED: [&str; 4] = ["system", "tools", "agentRequest", "encoding"];

/// The options of one call: held options as they are, or with what the call changes.
pub(crate) enum CallOptions {
    Held(Arc<Held>),
    Changed {
        options: Box<CompactOptions>,
        value: Arc<Value>,
        /// The held count of `system` and `tools`, when the call changed nothing it depends on.
        extra: Option<usize>,
    },
}

impl CallOptions {
    /// Held options `id` with `changes`, a JSON object of the options this call changes (a
    /// `null` unsets one). `slim`: the call needs the count of `system` and `tools`, not
    /// their values (a step's measure), so that a call changing other options does not copy
    /// and read them again.
    pub(crate) fn of(id: u32, changes: Option<&str>, slim: bool) -> Result<CallOptions> {
        let held = held_options()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .cloned()
            .ok_or_else(|| {
                invalid(ValidationError::argument(
                    "options",
                    "these options were released",
                ))
            })?;
        let Some(text) = changes else {
            return Ok(CallOptions::Held(held));
        };
        let Value::Object(changes) = parse_json(text, "overrides")? else {
            return Err(invalid(ValidationError::argument(
                "overrides",
                "expected an object",
            )));
        };
        let counted = changes.keys().any(|k| COUNTED.contains(&k.as_str()));
        let mut map = Map::new();
        if let Value::Object(base) = held.value.as_ref() {
            for (key, value) in base {
                if slim && !counted && (key == "system" || key == "tools") {
                    continue;
                }
                map.insert(key.clone(), value.clone());
            }
        }
        map.extend(changes);
        let value = Value::Object(map);
        let options = read(&value)?;
        Ok(CallOptions::Changed {
            options: Box::new(options),
            value: Arc::new(value),
            extra: (!counted).then(|| held.extra_tokens()),
        })
    }

    /// The options to measure with (the count of `system` and `tools` is `extra_tokens`: they
    /// are left out, not copied).
    pub(crate) fn measuring(self) -> CompactOptions {
        match self {
            CallOptions::Held(held) => held.slim.clone(),
            CallOptions::Changed { options, .. } => {
                let mut options = *options;
                options.system = None;
                options.tools = None;
                options
            }
        }
    }

    /// The tokens of `system` and `tools`, counted once per held options.
    pub(crate) fn extra_tokens(&self) -> usize {
        match self {
            CallOptions::Held(held) => held.extra_tokens(),
            CallOptions::Changed { options, extra, .. } => {
                extra.unwrap_or_else(|| options.extra_tokens())
            }
        }
    }

    /// The options as a compaction takes them (not from a `slim` read), with the count of
    /// `system` and `tools` it may use, and the JSON object.
    pub(crate) fn into_owned(self) -> (CompactOptions, Arc<Value>) {
        let extra = self.extra_tokens();
        let (mut options, value) = match self {
            CallOptions::Held(held) => (held.options.clone(), held.value.clone()),
            CallOptions::Changed { options, value, .. } => (*options, value),
        };
        options.extra_tokens_known = Some(extra);
        (options, value)
    }
}
