//! Step 7, **assemble**: the new message list, as pieces — messages of the input (by index)
//! and new ones (the summary or notice, cleared and shortened messages) — naming the archives
//! the archive step wrote (`pieces` builds them; the fit step counted the same pieces
//! with a stand-in for these paths).

use serde_json::Value;

use crate::model::tokens::Encoding;
use crate::pipeline::archive::Archived;
use crate::pipeline::shared::draft::Draft;
use crate::pipeline::shared::pieces::{ArchiveRefs, Assembled, Fitting};

pub use crate::pipeline::shared::draft::summary_message;

/// Builds `[...head, { role: 'user', content: summary }, ...tail]` (F-005).
pub fn assemble_messages(head: &[Value], summary: &str, tail: &[Value]) -> Vec<Value> {
    if summary.trim().is_empty() {
        tracing::warn!("assembling messages with an empty summary");
    }
    let mut out = Vec::with_capacity(head.len() + 1 + tail.len());
    out.extend_from_slice(head);
    out.push(summary_message(summary));
    out.extend_from_slice(tail);
    out
}

/// The context window a summary model can read, for bounding the transcript.
pub fn summary_model_window(model: &str) -> Option<usize> {
    crate::model::models::context_window(model)
}

/// The new list, naming the archives where they went.
pub(crate) fn assemble(
    messages: &[Value],
    draft: &Draft,
    fitting: &Fitting,
    archived: &Archived,
    encoding: Encoding,
) -> Assembled {
    let region = archived.region.as_ref().map(|p| p.display().to_string());
    let offload = archived.offload.as_ref().map(|p| p.display().to_string());
    let thinking = archived.thinking.as_ref().map(|p| p.display().to_string());
    let refs = ArchiveRefs {
        region: region.as_deref(),
        offload: offload.as_deref(),
        thinking: thinking.as_deref(),
    };
    crate::pipeline::shared::pieces::assemble(messages, draft, fitting, refs, encoding)
}
