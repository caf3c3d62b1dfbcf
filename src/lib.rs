//! The Node.js binding of `context-compact-core`.
//!
//! It only converts: messages arrive as the JS objects themselves, read into `serde_json`
//! values with `JSON.stringify`'s rules (`js_json`: faster than a JSON text crossing and no
//! copy of the conversation on the JS heap, see `benchmark/`), results leave as JSON or plain
//! objects, and core errors become JS errors with a `code`. The public, documented API is the thin
//! JavaScript layer in `index.js` / `index.d.ts`, which keeps the caller's own message objects
//! for everything that is retained. No core logic lives here.
//!
//! One module per concern of the JS API:
//! - `errors`: core errors to JS errors (a panic too);
//! - `convert`: the JSON options and names read; `options`: the option table handed to JS;
//! - `counting`: counting, the trigger, the partition, validation and checks;
//! - `cancel`: the cancellation tokens behind `AbortSignal`s;
//! - `checkpoints`: the checkpoints a `Compactor` keeps, held natively behind a handle;
//! - `compaction`: the JS summarizer and event callbacks behind the core's traits,
//!   `compactMessages`, `generateSummary` and the writes beside them;
//! - `history`: list, restore, prune;
//! - `learnt`: what was learnt about models, kept in the store;
//! - `overflow`: an API error's signals for the overflow recogniser;
//! - `report`: what a session report reads (messages described, a session's records);
//! - `js_json` (the crate `js-values`), `js_store`, `logging`: JS values, a JS `archiveStore` and
//!   `onLog` at the boundary.

#![deny(clippy::all)]

// The JS message reader is a crate of its own (`crates/js-values`), named here as before.
use js_values as js_json;

pub mod cancel;
pub mod checkpoints;
pub mod compaction;
pub mod convert;
pub mod counting;
mod errors;
pub mod history;
pub mod js_store;
pub mod learnt;
mod logging;
pub mod options;
pub mod overflow;
pub mod report;

#[napi_derive::module_init]
fn init() {
    logging::install();
}
