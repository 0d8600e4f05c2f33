//! Metrics (Prometheus) and, later, the audit log.

pub mod checker_metrics;
pub mod metrics;

pub use metrics::Metrics;
