//! What an SRE's standard panels read beside portcullis's own families: the process collector's
//! `process_*` series (CPU seconds, resident and virtual memory, open and maximum file
//! descriptors, start time — unprefixed, as every exporter names them, so stock dashboards work)
//! and `portcullis_build_info{version}` = 1, which tells a rollout's versions apart. Beside them,
//! the allocator's heap ([`HeapCollector`]): what the process holds against what its allocator
//! keeps free, and the trims that gave free pages back ([`crate::heap`]).

use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{IntCounter, IntGauge, IntGaugeVec, Opts, Registry};
use std::sync::Arc;

use crate::heap::Watched;

/// The unprefixed registry and what the heap watcher counts into it.
#[derive(Debug)]
pub struct ProcessMetrics {
    registry: Registry,
    /// The heap watcher's counts (one per proxy, read at each scrape).
    pub heap: Arc<Watched>,
}

impl ProcessMetrics {
    pub fn new() -> ProcessMetrics {
        let heap = Arc::new(Watched::default());
        ProcessMetrics { registry: process_registry(heap.clone()), heap }
    }

    pub fn gather(&self) -> Vec<MetricFamily> {
        self.registry.gather()
    }
}

/// A registry of its own for the `process_*` series: the main one prefixes every name with
/// `portcullis_`.
fn process_registry(heap: Arc<Watched>) -> Registry {
    let registry = Registry::new();
    #[cfg(target_os = "linux")]
    {
        let collector = prometheus::process_collector::ProcessCollector::for_self();
        if let Err(e) = registry.register(Box::new(collector)) {
            tracing::warn!(error = %e, "process metrics are not exported");
        }
    }
    if let Err(e) = registry.register(Box::new(HeapCollector::new(heap))) {
        tracing::warn!(error = %e, "heap metrics are not exported");
    }
    registry
}

/// Read at each scrape: `portcullis_heap_bytes{state}` (`in_use`: allocated and not freed;
/// `free`: freed and kept by the allocator for reuse, pages a trim gave back included; absent
/// where the allocator reports neither), `portcullis_heap_trims_total` and
/// `portcullis_in_flight` (the requests in flight, open streams included, at the trim watcher's
/// last sample). `in_use` that climbs after traffic has ended is retained state; resident memory
/// that climbs while `in_use` does not is the allocator's.
struct HeapCollector {
    heap: Arc<Watched>,
    bytes: IntGaugeVec,
    trims: IntCounter,
    in_flight: IntGauge,
    descs: Vec<Desc>,
}

impl HeapCollector {
    fn new(heap: Arc<Watched>) -> HeapCollector {
        let bytes = IntGaugeVec::new(
            Opts::new(
                "portcullis_heap_bytes",
                "The allocator's heap at this scrape: in_use (allocated, not freed) and free (freed and kept for reuse; pages a trim gave back still count)",
            ),
            &["state"],
        )
        .expect("static metric");
        let trims = IntCounter::new(
            "portcullis_heap_trims_total",
            "Times the heap's free pages were given back to the OS after the requests in flight drained",
        )
        .expect("static metric");
        let in_flight = IntGauge::new(
            "portcullis_in_flight",
            "Requests in flight, open streams included, at the heap watcher's last sample (once a second)",
        )
        .expect("static metric");
        let descs = [bytes.desc(), trims.desc(), in_flight.desc()].concat().into_iter().cloned().collect();
        HeapCollector { heap, bytes, trims, in_flight, descs }
    }
}

impl Collector for HeapCollector {
    fn desc(&self) -> Vec<&Desc> {
        self.descs.iter().collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let mut out = Vec::new();
        if let Some(heap) = portcullis_malloc::stats() {
            for (state, n) in [("in_use", heap.in_use), ("free", heap.free)] {
                self.bytes.with_label_values(&[state]).set(i64::try_from(n).unwrap_or(i64::MAX));
            }
            out.extend(self.bytes.collect());
        }
        let seen = self.trims.get();
        self.trims.inc_by(self.heap.trims().saturating_sub(seen));
        self.in_flight.set(i64::try_from(self.heap.in_flight()).unwrap_or(i64::MAX));
        out.extend(self.trims.collect());
        out.extend(self.in_flight.collect());
        out
    }
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
