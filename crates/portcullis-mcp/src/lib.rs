//! What portcullis understands of MCP: JSON-RPC envelopes, protocol eras, SSE framing and the
//! shape of a `tools/call` result.

#![forbid(unsafe_code)]
// clippy.toml's disallowed methods are for the product; tests may set variables and sleep.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod era;
pub mod jsonrpc;
pub mod method;
pub mod result;
pub mod sse;
