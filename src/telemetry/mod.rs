//! Metrics (Prometheus) and traces (OpenTelemetry, [`otel`]).

pub mod checker_metrics;
pub mod flow_metrics;
pub mod limit_metrics;
pub mod metrics;
pub mod otel;
pub mod reviewer_metrics;
mod tally;

pub use metrics::Metrics;
