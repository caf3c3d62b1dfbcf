//! The operations beside a compaction, on the same steps: shortening tool results on their own
//! (`offload`), a compaction said in the caller's message format (`format`), and
//! `generateSummary` ([`generate`]), a summary of a whole list without compacting it.

pub mod format;
pub mod generate;
pub mod offload;
