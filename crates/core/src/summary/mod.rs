//! Layer 4, **writing the summary**: the prompt and transcript, the [`summarize::Summarizer`]
//! seam with its retry policy, the HTTP providers (Anthropic, OpenAI, Anthropic's native
//! compaction), the extractive summarizer, the sections the library writes after every summary
//! (the ledger of file operations and failures, the agent's task list, the user's messages, the
//! latest failure), key-information extraction (memory) and recognising the providers' overflow
//! errors.
//! Imports [`crate::base`], [`crate::model`], [`crate::formats`], [`crate::plan`].

pub mod budget;
pub mod cache_evidence;
pub mod extractive;
pub mod latest_error;
pub mod ledger;
pub mod memory;
pub mod overflow;
pub mod parts;
pub mod prompt;
pub mod providers;
pub mod reserved;
pub mod sections;
pub mod summarize;
pub mod todos;
pub mod user_messages;
