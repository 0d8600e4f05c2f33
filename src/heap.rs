//! Giving the heap back after a load has gone: when the requests in flight (open streams
//! included) fall to half their height or less, the allocator's free pages go back to the OS.
//!
//! glibc's `malloc` keeps what 1,000 closed SSE streams freed: a worker's arena gives pages back
//! only from the top of its heap, and a few live blocks among the streams' buffers pin the rest.
//! `scripts/bench-memory` read +9 MB of RSS per round of 1,000 streams until ~78 MB, while a heap
//! profile found the live heap back at its idle size after every round (0.47 → 59.6 → 0.48 MB):
//! not retained buffers but free memory glibc kept resident, more of its arenas touched each
//! round (docs/BENCHMARKS.md, "Memory: given back", issue 29). [`portcullis_malloc::trim`]
//! hands every whole free page back. It costs a walk of the heap under each arena's lock (10–25 ms
//! for a 60 MB heap, during which that arena's allocations wait), so it runs only when a load has
//! drained — sampled once a second off the request path (one atomic read of the concurrency
//! budget), never per request.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How often the watcher samples the requests in flight.
pub const TICK: Duration = Duration::from_secs(1);

/// A drain smaller than this is not worth a walk of the heap: a handful of closed connections
/// leaves little behind, and the allocator reuses it for the next ones.
pub const MIN_DRAIN: usize = 8;

/// What the watcher saw and did, for the metrics (`portcullis_heap_trims_total`,
/// `portcullis_in_flight`).
#[derive(Debug, Default)]
pub struct Watched {
    trims: AtomicU64,
    in_flight: AtomicU64,
}

impl Watched {
    /// Trims run since the proxy started.
    pub fn trims(&self) -> u64 {
        self.trims.load(Ordering::Relaxed)
    }

    /// The requests in flight (open streams included) at the watcher's last sample.
    pub fn in_flight(&self) -> u64 {
        self.in_flight.load(Ordering::Relaxed)
    }
}

/// When a drain calls for a trim: the highest number in flight since the last trim, against
/// the number now. Pure, so the policy is tested without time.
#[derive(Debug, Default, Clone, Copy)]
pub struct Drain {
    high: usize,
}

impl Drain {
    /// Takes one sample; `true` when the load has drained since the last trim: at most half of
    /// the height is left, and at least [`MIN_DRAIN`] went. The height starts again from now.
    pub fn observe(&mut self, in_flight: usize) -> bool {
        self.high = self.high.max(in_flight);
        let drained = self.high - in_flight;
        if drained >= MIN_DRAIN && in_flight <= self.high / 2 {
            self.high = in_flight;
            return true;
        }
        false
    }
}

/// Samples `in_flight` every [`TICK`] until `stop` resolves, and trims the heap after each
/// drain, counting into `watched`. Runs on the admin runtime, beside the admin listener.
pub async fn watch(
    in_flight: impl Fn() -> usize,
    watched: std::sync::Arc<Watched>,
    stop: impl std::future::Future<Output = ()>,
) {
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut drain = Drain::default();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => return,
            _ = tick.tick() => {}
        }
        let now = in_flight();
        watched.in_flight.store(now as u64, Ordering::Relaxed);
        if drain.observe(now) {
            // The trim walks the heap: a blocking thread, so the admin runtime keeps answering.
            let trimmed = tokio::task::spawn_blocking(portcullis_malloc::trim).await;
            if matches!(trimmed, Ok(portcullis_malloc::Trim::Released | portcullis_malloc::Trim::Nothing)) {
                watched.trims.fetch_add(1, Ordering::Relaxed);
            }
            tracing::debug!(in_flight = now, ?trimmed, "requests drained: heap trimmed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples in order → the samples after which a trim runs.
    fn trims_after(samples: &[usize]) -> Vec<usize> {
        let mut d = Drain::default();
        samples.iter().enumerate().filter_map(|(i, &n)| d.observe(n).then_some(i)).collect()
    }

    #[test]
    fn a_trim_runs_once_when_streams_drain_and_again_only_after_the_next_load() {
        let cases: &[(&[usize], &[usize], &str)] = &[
            (&[0, 1000, 1000, 0, 0, 0], &[3], "1,000 streams closed: one trim, then none while idle"),
            (&[0, 1000, 0, 1000, 0], &[2, 4], "each round's close trims"),
            (&[1000, 700, 500, 400, 250], &[2, 4], "a slow drain: at each halving"),
            (&[0, 7, 0, 7, 0], &[], "fewer than MIN_DRAIN closed: not worth a walk"),
            (&[0, 8, 0], &[2], "MIN_DRAIN closed"),
            (&[40, 30, 21, 40, 21], &[], "a steady load's swings keep more than half"),
            (&[0, 0, 0], &[], "idle from the start: nothing freed, no trim"),
        ];
        for (samples, want, why) in cases {
            assert_eq!(trims_after(samples), *want, "{why}: {samples:?}");
        }
    }
}
