//! What portcullis understands of MCP: JSON-RPC envelopes, protocol eras, SSE framing and the
//! shape of a `tools/call` result.

pub mod era;
pub mod jsonrpc;
pub mod method;
pub mod result;
pub mod sse;
