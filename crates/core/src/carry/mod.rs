//! Layer 4, **what is carried beside every summary**: the sections the library itself writes
//! after the summary's text, whoever wrote that text (a model, the extractive summarizer, a
//! caller's function), and reads back at the next compaction to carry them forward. They are
//! built deterministically from the messages because a summary model's judgement loses exactly
//! what an agent resumes from: which files it touched and which calls failed (the ledger), its
//! task list (todos), the user's own words (user messages), the latest failure, and the key
//! information a compaction files away (memory). The sections' headers and the library's
//! reserved lines, their shares of one summary budget (which sections, in which order:
//! [`appended`]), and the cut that keeps untrusted text
//! from forging them live here too.
//!
//! Imports [`crate::base`], [`crate::model`], [`crate::formats`], [`crate::plan`]; the shell
//! command-line reader the ledger uses is the `shell-effects` crate.

pub mod appended;
pub mod budget;
pub mod latest_error;
pub mod ledger;
pub mod memory;
pub mod reserved;
pub mod sections;
pub mod todos;
pub mod user_messages;
