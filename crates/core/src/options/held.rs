//! A caller's options read once and kept (a `Compactor`'s, in the binding): the struct, the
//! JSON object they came from (the provider options are read from it), and the tokens of
//! `system` and `tools`, counted at the first call that needs them and never again — a step
//! below the threshold would otherwise read and count them anew. A call's overrides are applied
//! on top ([`CallOptions`]) without reading the held options again.

use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use super::CompactOptions;
use crate::base::error::ValidationError;
use crate::providers::ProviderOptions;

/// Options as read once.
pub struct Held {
    options: CompactOptions,
    /// The options without `system` and `tools`, which a step's measure copies (to add the
    /// call's calibration) without copying them.
    slim: CompactOptions,
    value: Arc<Value>,
    extra: OnceLock<usize>,
}

/// The options whose change changes what `system` and `tools` count.
const COUNTED: [&str; 4] = ["system", "tools", "agentRequest", "encoding"];

/// Reads options from their JSON object, provider options checked too (so that a `Compactor`
/// reports them when it is created).
fn read(value: &Value) -> Result<CompactOptions, ValidationError> {
    let options = CompactOptions::from_json(value)?;
    ProviderOptions::from_json(value)?;
    Ok(options)
}

impl Held {
    /// Reads `value`, a JSON object of options (an error names the option that is invalid).
    pub fn read(value: Value) -> Result<Held, ValidationError> {
        let options = read(&value)?;
        let mut slim = options.clone();
        slim.system = None;
        slim.tools = None;
        Ok(Held {
            options,
            slim,
            value: Arc::new(value),
            extra: OnceLock::new(),
        })
    }

    fn extra_tokens(&self) -> usize {
        *self.extra.get_or_init(|| self.options.extra_tokens())
    }
}

/// The options of one call: held options as they are, or with what the call changes.
pub enum CallOptions {
    Held(Arc<Held>),
    Changed {
        options: Box<CompactOptions>,
        value: Arc<Value>,
        /// The held count of `system` and `tools`, when the call changed nothing it depends on.
        extra: Option<usize>,
    },
}

impl CallOptions {
    /// `held` with `changes`, the options this call changes (a `null` unsets one). `slim`: the
    /// call needs the count of `system` and `tools`, not their values (a step's measure), so
    /// that a call changing other options does not copy and read them again.
    pub fn of(
        held: Arc<Held>,
        changes: Option<Map<String, Value>>,
        slim: bool,
    ) -> Result<CallOptions, ValidationError> {
        let Some(changes) = changes else {
            return Ok(CallOptions::Held(held));
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
    pub fn measuring(self) -> CompactOptions {
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
    pub fn extra_tokens(&self) -> usize {
        match self {
            CallOptions::Held(held) => held.extra_tokens(),
            CallOptions::Changed { options, extra, .. } => {
                extra.unwrap_or_else(|| options.extra_tokens())
            }
        }
    }

    /// The options as a compaction takes them (not from a `slim` read), with the count of
    /// `system` and `tools` it may use, and the JSON object.
    pub fn into_owned(self) -> (CompactOptions, Arc<Value>) {
        let extra = self.extra_tokens();
        let (mut options, value) = match self {
            CallOptions::Held(held) => (held.options.clone(), held.value.clone()),
            CallOptions::Changed { options, value, .. } => (*options, value),
        };
        options.extra_tokens_known = Some(extra);
        (options, value)
    }
}
