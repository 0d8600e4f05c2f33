//! Metrics (Prometheus) and, later, the audit log.

pub mod metrics;

pub use metrics::Metrics;
