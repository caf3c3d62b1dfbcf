//! What the steps share: the call as they see it, the draft (the region and what replaces it),
//! the new list as pieces, the session's own summaries, and what a compaction did.

pub(crate) mod call;
pub(crate) mod draft;
pub mod outcome;
pub(crate) mod pieces;
pub(crate) mod session;
