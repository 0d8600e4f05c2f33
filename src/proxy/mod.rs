//! The HTTP side of the proxy: tower layers for Streamable HTTP MCP and plain HTTP tools.
//! `app.rs` stacks them; each file here is one layer (or the body type it needs).

pub mod authenticate;
mod caller;
pub mod delegations;
pub mod error;
pub mod held;
pub mod host;
pub mod in_flight;
pub mod limit;
pub mod listener;
pub mod parked;
pub mod post;
pub mod pre;
pub mod route;
pub mod sse_body;
pub mod telemetry;
pub mod watch;

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
