//! **The other operations** beside a compaction, on the same steps: `generateSummary`
//! ([`generate`]), a summary of a whole list without compacting it.

pub mod generate;
