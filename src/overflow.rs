//! Overflow recovery (SPEC §4.8): the signals of a JS error read for the core's recogniser.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use context_compact_core::model::overflow::ErrorSignals;
use context_compact_core::pipeline::measure;

use crate::convert::{guarded, parse_options};
use crate::counting::parse_calibration;

/// Whether an API error was a context overflow (`overflow::is_context_overflow`), from the
/// statuses, codes and messages `index.js` gathered from the error object. Never throws: a
/// panic answers `false`, as the public `isContextOverflow` promises a boolean for any input.
#[napi]
pub fn is_context_overflow_signals(
    statuses: Vec<u32>,
    codes: Vec<String>,
    messages: Vec<String>,
) -> bool {
    std::panic::catch_unwind(move || {
        let signals = ErrorSignals::from_parts(&statuses, &codes, &messages);
        context_compact_core::model::overflow::is_context_overflow(&signals)
    })
    .unwrap_or(false)
}

/// A calibration raised after a context-overflow error: the request of `raw_tokens` (messages
/// + system + tools) was billed at least the prompt size the error names, else more than the
/// context window of the options; and when the error states the model's maximum, that (less
/// the output the request reserved) is the window from now on. `context_size` and
/// `prompt_size` are llama.cpp's `n_ctx` and `n_prompt_tokens`, when the error has them.
/// Returns the calibration as JSON.
#[napi]
pub fn calibrate_overflow_json(
    calibration_json: Option<String>,
    raw_tokens: f64,
    messages: Vec<String>,
    options_json: Option<String>,
    context_size: Option<f64>,
    prompt_size: Option<f64>,
) -> Result<String> {
    guarded("calibrateOverflow", || {
        let calibration = parse_calibration(calibration_json)?;
        let options = parse_options(options_json)?;
        let mut signals = ErrorSignals::from_parts(&[], &[], &messages);
        let positive = |n: Option<f64>| n.filter(|n| n.is_finite() && *n >= 1.0).map(|n| n as u64);
        signals.context_size = positive(context_size);
        signals.prompt_size = positive(prompt_size);
        let calibration =
            measure::calibrate_overflow(calibration, raw_tokens as u64, &signals, &options);
        Ok(serde_json::to_string(&calibration).unwrap_or_default())
    })
}
