//! The verdict cache: moka, keyed by a digest of everything a verdict depends on (phase, rubric
//! version, model, tool, canonical content), with a TTL.
//!
//! Concurrent identical checks make one model call. moka's own `get_with` coalesces callers, but
//! if the first caller is cancelled (its client hung up) its waiters start over with a new call;
//! so the call runs in a task of its own and callers share its result: a cancelled caller cancels
//! nothing. Failures are never cached.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::{BoxFuture, FutureExt, Shared};
use sha2::{Digest, Sha256};

use super::verdict::Verdict;
use super::{Failure, Phase};

pub type Key = [u8; 32];

/// The cache key of a check.
pub fn key(phase: Phase, rubric_version: &str, model: &str, tool: &str, content: &str) -> Key {
    let mut h = Sha256::new();
    for part in [phase.as_str(), rubric_version, model, tool, content] {
        // Length-prefixed, so no two different tuples hash the same bytes.
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().into()
}

type Flight = Shared<BoxFuture<'static, Result<Verdict, Failure>>>;

#[derive(Clone)]
pub struct VerdictCache {
    done: moka::future::Cache<Key, Verdict>,
    flights: Arc<Mutex<HashMap<Key, Flight>>>,
}

impl std::fmt::Debug for VerdictCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerdictCache").field("entries", &self.done.entry_count()).finish()
    }
}

/// Whether a lookup was served from the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    Hit,
    /// Computed, or joined a computation already in flight.
    Miss,
}

impl VerdictCache {
    pub fn new(capacity: u64, ttl: Duration) -> VerdictCache {
        VerdictCache {
            done: moka::future::Cache::builder().max_capacity(capacity).time_to_live(ttl).build(),
            flights: Arc::default(),
        }
    }

    /// The cached verdict for `key`, or the result of `check` — run once however many callers
    /// ask at the same time, in its own task.
    pub async fn get_or_check<F>(&self, key: Key, check: F) -> (Result<Verdict, Failure>, Lookup)
    where
        F: FnOnce() -> BoxFuture<'static, Result<Verdict, Failure>>,
    {
        if let Some(v) = self.done.get(&key).await {
            return (Ok(v), Lookup::Hit);
        }
        let flight = {
            let mut flights = self.flights.lock().unwrap_or_else(|p| p.into_inner());
            match flights.get(&key) {
                Some(f) => f.clone(),
                None => {
                    let work = check();
                    let done = self.done.clone();
                    let table = self.flights.clone();
                    let task = tokio::spawn(async move {
                        let result = work.await;
                        if let Ok(v) = &result {
                            done.insert(key, v.clone()).await;
                        }
                        table.lock().unwrap_or_else(|p| p.into_inner()).remove(&key);
                        result
                    });
                    let flight = async move {
                        task.await
                            .unwrap_or_else(|e| Err(Failure::Error(format!("checker task failed: {e}"))))
                    }
                    .boxed()
                    .shared();
                    flights.insert(key, flight.clone());
                    flight
                }
            }
        };
        (flight.await, Lookup::Miss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn counting(
        calls: &Arc<AtomicUsize>,
        result: Result<Verdict, Failure>,
    ) -> BoxFuture<'static, Result<Verdict, Failure>> {
        let calls = calls.clone();
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(50)).await;
            result
        }
        .boxed()
    }

    #[tokio::test(start_paused = true)]
    async fn concurrent_identical_checks_make_one_call_even_if_the_first_caller_goes_away() {
        let cache = VerdictCache::new(100, Duration::from_secs(60));
        let calls = Arc::new(AtomicUsize::new(0));
        let k = key(Phase::Post, "v1", "m", "t", "content");
        let first = {
            let (cache, calls) = (cache.clone(), calls.clone());
            tokio::spawn(async move { cache.get_or_check(k, || counting(&calls, Ok(Verdict::Safe))).await })
        };
        tokio::task::yield_now().await;
        let mut others = Vec::new();
        for _ in 0..8 {
            let (cache, calls) = (cache.clone(), calls.clone());
            others.push(tokio::spawn(async move {
                cache.get_or_check(k, || counting(&calls, Ok(Verdict::Safe))).await
            }));
        }
        tokio::task::yield_now().await;
        first.abort();
        for o in others {
            assert_eq!(o.await.unwrap().0, Ok(Verdict::Safe));
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        let (v, lookup) = cache.get_or_check(k, || counting(&calls, Ok(Verdict::Safe))).await;
        assert_eq!((v, lookup), (Ok(Verdict::Safe), Lookup::Hit));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn failures_are_not_cached_and_every_key_part_matters() {
        let cache = VerdictCache::new(100, Duration::from_secs(60));
        let calls = Arc::new(AtomicUsize::new(0));
        let k = key(Phase::Pre, "v1", "m", "t", "c");
        let fail = Err(Failure::Error("down".into()));
        assert!(cache.get_or_check(k, || counting(&calls, fail.clone())).await.0.is_err());
        assert!(cache.get_or_check(k, || counting(&calls, Ok(Verdict::Safe))).await.0.is_ok());
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        let keys = [
            key(Phase::Post, "v1", "m", "t", "c"),
            key(Phase::Pre, "v2", "m", "t", "c"),
            key(Phase::Pre, "v1", "m2", "t", "c"),
            key(Phase::Pre, "v1", "m", "t2", "c"),
            key(Phase::Pre, "v1", "m", "t", "c2"),
            key(Phase::Pre, "v1m", "", "t", "c"),
        ];
        for other in keys {
            assert_ne!(other, k);
        }
    }
}
