//! The two shapes a list takes on its way out: the pieces of a compacted list and the
//! elements of a restored one. Each is a message of the caller's list, named by its index so
//! it can be returned as the very object the caller passed, or a message the library wrote or
//! read back. They live in the model layer because every layer above speaks them: the formats
//! map them back to the caller's items, the plans and the pipeline build them, restore reads
//! them.

use serde_json::Value;

/// One element of the compacted list: a message of the input (by index) or a new one. As JSON
/// (the result the addon hands to JavaScript): the index, or the message itself.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum Piece {
    Original(usize),
    New(Value),
}

/// An element of a restored conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Restored {
    /// The message at this index of the list given to `restoreMessages`, unchanged.
    Original(usize),
    /// A message read back from an archive.
    Archived(Value),
}
