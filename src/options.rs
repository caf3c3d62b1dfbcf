//! The option table (`context_compact_core::options::table`), handed to the JS layer: the names,
//! kinds, ranges, accepted names and defaults that `lib/options.js` and the CLI read instead of
//! lists of their own.

use napi_derive::napi;

/// Every option as `[{ name, kind, min?, max?, values?, default, read }]` (JSON): `read` says
/// who reads it (`core`, `provider`, or `js` for functions and objects that never cross).
#[napi]
pub fn option_table_json() -> String {
    context_compact_core::options::table::table_json().to_string()
}
