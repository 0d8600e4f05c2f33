//! Metrics (Prometheus) and traces (OpenTelemetry, [`otel`]).

pub mod checker_metrics;
pub mod flow_metrics;
pub mod limit_metrics;
pub mod metrics;
pub mod notify_metrics;
pub mod otel;
mod process_metrics;
pub mod reviewer_metrics;
pub mod rule_metrics;
mod tally;

pub use metrics::Metrics;
