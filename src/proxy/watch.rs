//! What the pre layer tells the post layer (and the parked stream) to inspect: a leaf both
//! import, so neither `parked` nor `post` imports `pre`'s internals for it.

use std::sync::Arc;

use crate::gate::post::Watched;
use crate::gate::tally::Counted;
use crate::mcp::era::Era;

/// The policy snapshot the pre gate decided a request under: the post layer inspects its answer
/// under the same one (one load per exchange; a reload meanwhile applies from the next
/// exchange, and, on a long-lived SSE stream, from its next event).
#[derive(Debug, Clone)]
pub struct Snapshot(pub Arc<crate::gate::Guard>);

/// What the post layer must inspect in the response to a forwarded request.
#[derive(Debug, Clone)]
pub enum PostWatch {
    /// These JSON-RPC responses (tools/call results, initialize).
    Mcp { watched: Watched, upstream: Arc<str>, era: Era },
    /// A GET stream: it may replay responses of earlier POSTs (resumption), so every response on
    /// it is inspected as a tool result.
    Resumed { upstream: Arc<str> },
    /// A plain HTTP tool's response body (the call counted when its answer is done with).
    Http { call: Counted },
}
