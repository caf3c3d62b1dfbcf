//! The option table (`context_compact_core::options::table`), handed to the JS layer: the names,
//! kinds, ranges, accepted names and defaults that `lib/options/options.js` and the CLI read instead of
//! lists of their own; and a `Compactor`'s options, held here so that they cross once
//! ([`HeldOptions`]).

use crate::convert::{guarded, invalid, parse_json};
use context_compact_core::base::error::ValidationError;
pub(crate) use context_compact_core::options::held::CallOptions;
use context_compact_core::options::held::Held;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;
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
// A Compactor's options, held in the addon (`context_compact_core::options::held`)

fn held_options() -> &'static Mutex<HashMap<u32, Arc<Held>>> {
    static HELD: OnceLock<Mutex<HashMap<u32, Arc<Held>>>> = OnceLock::new();
    HELD.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A `Compactor`'s options, handed to the addon once (when it is made, and again only when an
/// option object it was given changed in place, see `lib/options/options.js`): the per-step calls
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
            let held = Held::read(parse_json(&options_json, "options")?).map_err(invalid)?;
            static NEXT: AtomicU32 = AtomicU32::new(1);
            let id = NEXT.fetch_add(1, Ordering::Relaxed);
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

/// The options of a call: held options `id` with `changes`, the JSON text of the options this
/// call changes (see `CallOptions::of`).
pub(crate) fn call_options(id: u32, changes: Option<&str>, slim: bool) -> Result<CallOptions> {
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
    let changes = match changes {
        None => None,
        Some(text) => match parse_json(text, "overrides")? {
            Value::Object(map) => Some(map),
            _ => {
                return Err(invalid(ValidationError::argument(
                    "overrides",
                    "expected an object",
                )))
            }
        },
    };
    CallOptions::of(held, changes, slim).map_err(invalid)
}
