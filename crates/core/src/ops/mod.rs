//! The operations beside a compaction: shortening tool results on their own (`offload`), and
//! a compaction said in the caller's message format (`format`).

pub mod format;
pub mod offload;
