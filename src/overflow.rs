//! Overflow recovery (SPEC §4.8): the signals of a JS error read for the core's recogniser.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::convert::{guarded, parse_options};
use crate::counting::parse_calibration;

// ---------------------------------------------------------------------------------------------
// Overflow recovery (SPEC §4.8)

pub(crate) fn error_signals(
    statuses: Vec<u32>,
    codes: Vec<String>,
    messages: Vec<String>,
) -> context_compact_core::model::overflow::ErrorSignals {
    let mut signals = context_compact_core::model::overflow::ErrorSignals::default();
    for status in statuses {
        if let Ok(status) = u16::try_from(status) {
            signals.add_status(status);
        }
    }
    for code in &codes {
        signals.add_code(code);
    }
    for message in &messages {
        signals.add_message(message);
    }
    signals
}

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
        context_compact_core::model::overflow::is_context_overflow(&error_signals(
            statuses, codes, messages,
        ))
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
        use context_compact_core::model::overflow::{refusal_numbers, reported_prompt_tokens};
        let mut calibration = parse_calibration(calibration_json)?.unwrap_or_default();
        let mut options = parse_options(options_json)?;
        let mut signals = error_signals(Vec::new(), Vec::new(), messages);
        let positive = |n: Option<f64>| n.filter(|n| n.is_finite() && *n >= 1.0).map(|n| n as u64);
        signals.context_size = positive(context_size);
        signals.prompt_size = positive(prompt_size);
        let numbers = refusal_numbers(&signals);
        if let Some(window) = numbers.prompt_window() {
            calibration.observe_window(window);
        }
        let reported = numbers.prompt.or_else(|| reported_prompt_tokens(&signals));
        options.calibration = Some(calibration);
        let billed = reported.unwrap_or(options.context_limit() as u64 + 1);
        calibration.observe_overflow(raw_tokens as u64, billed);
        Ok(serde_json::to_string(&calibration).unwrap_or_default())
    })
}
