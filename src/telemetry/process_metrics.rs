//! What an SRE's standard panels read beside portcullis's own families: the process collector's
//! `process_*` series (CPU seconds, resident and virtual memory, open and maximum file
//! descriptors, start time — unprefixed, as every exporter names them, so stock dashboards work)
//! and `portcullis_build_info{version}` = 1, which tells a rollout's versions apart.

use prometheus::{IntGaugeVec, Opts, Registry};

/// A registry of its own for the `process_*` series: the main one prefixes every name with
/// `portcullis_`.
pub fn process_registry() -> Registry {
    let registry = Registry::new();
    #[cfg(target_os = "linux")]
    {
        let collector = prometheus::process_collector::ProcessCollector::for_self();
        if let Err(e) = registry.register(Box::new(collector)) {
            tracing::warn!(error = %e, "process metrics are not exported");
        }
    }
    registry
}

/// Registers `build_info{version}` (1) in `registry`.
pub fn register_build_info(registry: &Registry) {
    let info = IntGaugeVec::new(
        Opts::new("build_info", "The running build: 1, labelled with its version"),
        &["version"],
    )
    .expect("static metric");
    registry.register(Box::new(info.clone())).expect("registered once");
    info.with_label_values(&[env!("CARGO_PKG_VERSION")]).set(1);
}
