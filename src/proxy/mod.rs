//! The HTTP side of the proxy: tower layers for Streamable HTTP MCP and plain HTTP tools.
//! `app.rs` stacks them; each file here is one layer (or the body type it needs).

pub mod authenticate;
pub mod delegations;
pub mod error;
pub mod host;
pub mod in_flight;
pub mod limit;
pub mod parked;
pub mod post;
pub mod pre;
pub mod route;
pub mod sessions;
pub mod sse_body;
pub mod stream_order;
pub mod telemetry;
pub mod watch;

use std::sync::Arc;

use crate::config::Limits;
use crate::gate::Guard;
use crate::telemetry::Metrics;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};

/// Errors inside tower plumbing.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Every response body the proxy sends.
pub type Body = UnsyncBoxBody<Bytes, BoxError>;

/// A request after its body was read (bounded) into memory.
pub type Req = http::Request<Bytes>;

/// A response.
pub type Resp = http::Response<Body>;

/// A whole body from bytes.
pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).map_err(|never| match never {}).boxed_unsync()
}

/// A JSON response.
pub fn json_response(status: http::StatusCode, body: impl Into<Bytes>) -> Resp {
    let body = body.into();
    let mut resp = http::Response::new(full(body));
    *resp.status_mut() = status;
    resp.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    resp
}

/// What every layer of one proxy shares. Built once; read-only but for the session table and the
/// policy, which a reload swaps whole (readers take a snapshot without locking).
#[derive(Debug)]
pub struct Shared {
    pub guard: arc_swap::ArcSwap<Guard>,
    /// The credentials agents authenticate with; a reload swaps them with the policy.
    pub identities: arc_swap::ArcSwap<crate::identity::Identities>,
    /// Where state replicas share lives (this process's memory unless `state.backend` says).
    pub store: crate::state::Store,
    /// Delegated credentials (`POST /delegations`); kept across reloads, like the sessions.
    pub delegations: Arc<crate::identity::delegation::Delegations>,
    pub metrics: Arc<Metrics>,
    /// The metrics, as the gate counts call outcomes ([`crate::gate::tally`]).
    pub counter: crate::gate::tally::SharedCounter,
    /// Parked asks and session waivers; kept across policy reloads.
    pub approvals: crate::approval::Approvals,
    pub sessions: sessions::Sessions,
    /// Holds a session's POSTs while its GET stream is being attached upstream.
    pub stream_order: stream_order::StreamOrder,
    pub limits: Limits,
}

impl Shared {
    /// The counter the gate counts call outcomes with.
    pub fn counter(&self) -> Option<&crate::gate::tally::SharedCounter> {
        Some(&self.counter)
    }

    /// Takes in what the post gate saw in one answer: a call's outcome (counted as the call is
    /// dropped here), a session's version and capabilities, a server's tool definitions.
    pub fn saw(&self, seen: crate::gate::post::Seen, session: Option<&str>) {
        use crate::gate::post::Seen;
        match seen {
            Seen::Call { call } => {
                tracing::Span::current().record("outcome", call.outcome().as_str());
            }
            Seen::Initialized { version, elicits } => {
                if let Some(s) = session {
                    self.sessions.record(s, version, elicits);
                }
            }
            Seen::Listed { upstream, result } => self.approvals.tools.record(&upstream, &result),
        }
    }
}
