//! Layer 1, **the message model and counting**: what a message is (Anthropic and OpenAI Chat
//! shapes), how a list is validated and checked for API validity, how tokens are counted the
//! way the APIs bill them, the model table (context windows, billing factors), the trigger's
//! measure, and recognising a provider's "longer than the context window" error ([`overflow`]:
//! it is about the model's limit, so it sits beside the model table, where the loop's overflow
//! check and the summary's providers both reach it). Imports only [`crate::base`].

pub mod added;
pub mod binary;
pub mod bpe;
pub mod check;
pub mod encoding;
pub mod exchanges;
pub mod media;
pub mod message;
pub mod models;
pub mod overflow;
pub mod piece;
pub mod pretokenize;
pub mod tokens;
pub mod trigger;
