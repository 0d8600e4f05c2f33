//! OpenTelemetry traces (`telemetry.otlp`): a span per exchange on every transport (an MCP
//! message or batch over HTTP or stdio, a plain HTTP tool call, a GET stream) with the MCP and GenAI semantic
//! conventions, children for Layer 1, the checker call, the upstream call and the approval wait,
//! exported over OTLP/HTTP (protobuf), and W3C trace context continued from the caller and
//! passed on to the upstream.
//!
//! How it is put together, and why:
//! - The subscriber layer ([`layer`]) is installed with the logs, before any config is read; it
//!   only sees spans whose target is [`TARGET`] (a per-layer filter), so log lines never become
//!   span events and the proxy's own log spans never become trace spans.
//! - Its tracer's sampler and span processor are filled in once by [`start`], from the config;
//!   until then (and forever when `telemetry.otlp` is absent) every span constructor in
//!   [`spans`] returns [`tracing::Span::none`] after one atomic load: off costs no span.
//! - The exporter sends with the proxy's own hyper client (`client.rs`), on the tokio runtime
//!   that called [`start`]: no second HTTP stack, and https with the same roots as upstreams.
//! - Nothing the agent sent as arguments, no result, no token and no credential is an attribute:
//!   the session id is hashed, names and ids are bounded ([`spans`]).

mod client;
pub mod context;
pub mod exchange;
mod pipeline;
pub mod spans;

pub use exchange::{exchange, Exchange, ExchangeKind, ExchangeSpans};
pub use pipeline::{flush, layer, on, start, OtelLayer, StartError};
pub use spans::propagate;

/// The target every trace span is made with; the only one the trace layer sees.
pub const TARGET: &str = "portcullis::otel";
