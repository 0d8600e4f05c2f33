//! The verdict cache: moka, keyed by a digest of everything a verdict depends on (phase, rubric
//! version, model, tool, canonical content), with a TTL; optionally backed by a second tier that
//! replicas share ([`SharedTier`], implemented by the binary over its state store), so a verdict
//! one replica paid for is a hit on the others.
//!
//! Concurrent identical checks make one model call. moka's own `get_with` coalesces callers, but
//! if the first caller is cancelled (its client hung up) its waiters start over with a new call;
//! so the call runs in a task of its own and callers share its result: a cancelled caller cancels
//! nothing. Failures are never cached, in either tier.
//!
//! The second tier can only save a model call, never cost a check: it is asked inside the same
//! single flight (so concurrent identical checks ask it once), a tier that fails or answers
//! something that is not a verdict is a miss, and a verdict goes to it in the background, after
//! the callers have theirs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures_util::future::{BoxFuture, FutureExt, Shared};
use sha2::{Digest, Sha256};

use super::verdict::{self, Verdict};
use super::{Failure, Phase};

pub type Key = [u8; 32];

/// The cache key of a check.
pub fn key(phase: Phase, rubric_version: &str, model: &str, tool: &str, content: &str) -> Key {
    framed_key(phase, rubric_version, model, tool, "", content)
}

/// The cache key of a check whose prompt says more than the content ([`super::prompt::Framing`]:
/// the user's task, whether a rewrite was asked for).
pub fn framed_key(
    phase: Phase,
    rubric_version: &str,
    model: &str,
    tool: &str,
    framing: &str,
    content: &str,
) -> Key {
    let mut h = Sha256::new();
    for part in [phase.as_str(), rubric_version, model, tool, framing, content] {
        // Length-prefixed, so no two different tuples hash the same bytes.
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().into()
}

/// A second cache tier shared by replicas: serialized verdicts by key, with a TTL. Implemented
/// outside this crate (over Redis or Valkey), so the checker needs no store client.
///
/// Both operations must be bounded in time by the implementation. `get` answers `None` for a
/// miss *and* for any failure (a store that is down is a miss: the model is asked); `put` is
/// best effort.
pub trait SharedTier: Send + Sync + std::fmt::Debug {
    /// The bytes stored under `key`, if any and if the tier could be read.
    fn get<'a>(&'a self, key: &'a Key) -> BoxFuture<'a, Option<Vec<u8>>>;
    /// Stores `value` under `key` for `ttl`.
    fn put<'a>(&'a self, key: &'a Key, value: Vec<u8>, ttl: Duration) -> BoxFuture<'a, ()>;
}

/// A verdict as the shared tier stores it: the checker's own reply shape, so reading it back
/// goes through the same strict parser as a model's reply.
pub fn encode(v: &Verdict) -> Vec<u8> {
    let value = match v {
        Verdict::Safe => serde_json::json!({"safe": true, "reason": ""}),
        Verdict::Unsafe { reason, sanitized } => {
            serde_json::json!({"safe": false, "reason": reason, "sanitized_content": sanitized})
        }
    };
    value.to_string().into_bytes()
}

/// A verdict read back from the shared tier; `None` when the bytes are not one (a miss).
pub fn decode(bytes: &[u8]) -> Option<Verdict> {
    verdict::parse(std::str::from_utf8(bytes).ok()?).ok()
}

/// A flight's result, and whether the shared tier supplied it.
type Flight = Shared<BoxFuture<'static, (Result<Verdict, Failure>, bool)>>;

#[derive(Clone)]
pub struct VerdictCache {
    done: moka::future::Cache<Key, Verdict>,
    flights: Arc<Mutex<HashMap<Key, Flight>>>,
    ttl: Duration,
    /// Set at most once (the binary attaches its store after building the checker).
    shared: Arc<OnceLock<Arc<dyn SharedTier>>>,
}

impl std::fmt::Debug for VerdictCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerdictCache").field("entries", &self.done.entry_count()).finish()
    }
}

/// Whether a lookup was served from the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// Served from this process's tier.
    Hit,
    /// Served from the shared tier (another replica, or this one earlier, paid for it).
    SharedHit,
    /// Computed, or joined a computation already in flight.
    Miss,
}

impl Lookup {
    /// The `result` label of `portcullis_cache_requests_total`.
    pub fn as_str(self) -> &'static str {
        match self {
            Lookup::Hit => "hit",
            Lookup::SharedHit => "shared_hit",
            Lookup::Miss => "miss",
        }
    }

    pub const ALL: [Lookup; 3] = [Lookup::Hit, Lookup::SharedHit, Lookup::Miss];
}

impl VerdictCache {
    pub fn new(capacity: u64, ttl: Duration) -> VerdictCache {
        VerdictCache {
            done: moka::future::Cache::builder().max_capacity(capacity).time_to_live(ttl).build(),
            flights: Arc::default(),
            ttl,
            shared: Arc::default(),
        }
    }

    /// Puts `tier` behind this process's tier. Only the first call counts: a cache keeps the
    /// tier it was given (a reload that keeps the cache keeps its tier).
    pub fn share(&self, tier: Arc<dyn SharedTier>) {
        let _ = self.shared.set(tier);
    }

    /// Whether a second tier is attached.
    pub fn is_shared(&self) -> bool {
        self.shared.get().is_some()
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
                    let (done, ttl) = (self.done.clone(), self.ttl);
                    let shared = self.shared.get().cloned();
                    let table = self.flights.clone();
                    let task = tokio::spawn(async move {
                        let found = match &shared {
                            Some(tier) => tier.get(&key).await.as_deref().and_then(decode),
                            None => None,
                        };
                        let (result, from_shared) = match found {
                            Some(v) => (Ok(v), true),
                            None => (work.await, false),
                        };
                        if let Ok(v) = &result {
                            done.insert(key, v.clone()).await;
                            // Only a verdict the model gave goes out: never a failure, and not
                            // one read from the tier (it is there already).
                            if let (Some(tier), false) = (shared, from_shared) {
                                let bytes = encode(v);
                                tokio::spawn(async move { tier.put(&key, bytes, ttl).await });
                            }
                        }
                        table.lock().unwrap_or_else(|p| p.into_inner()).remove(&key);
                        (result, from_shared)
                    });
                    let flight = async move {
                        task.await.unwrap_or_else(|e| {
                            (Err(Failure::Error(format!("checker task failed: {e}"))), false)
                        })
                    }
                    .boxed()
                    .shared();
                    flights.insert(key, flight.clone());
                    flight
                }
            }
        };
        let (result, from_shared) = flight.await;
        (result, if from_shared { Lookup::SharedHit } else { Lookup::Miss })
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

    /// A shared tier in memory, as two replicas' caches would see one store.
    #[derive(Debug, Default)]
    struct MemoryTier {
        map: Mutex<HashMap<Key, (Vec<u8>, Duration)>>,
        down: std::sync::atomic::AtomicBool,
        gets: AtomicUsize,
    }

    impl SharedTier for MemoryTier {
        fn get<'a>(&'a self, key: &'a Key) -> BoxFuture<'a, Option<Vec<u8>>> {
            self.gets.fetch_add(1, Ordering::SeqCst);
            let found = match self.down.load(Ordering::SeqCst) {
                true => None,
                false => self.map.lock().unwrap().get(key).map(|(v, _)| v.clone()),
            };
            async move { found }.boxed()
        }
        fn put<'a>(&'a self, key: &'a Key, value: Vec<u8>, ttl: Duration) -> BoxFuture<'a, ()> {
            if !self.down.load(Ordering::SeqCst) {
                self.map.lock().unwrap().insert(*key, (value, ttl));
            }
            async {}.boxed()
        }
    }

    /// Lets the background put run.
    async fn settle() {
        for _ in 0..8 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_verdict_one_replica_paid_for_is_a_shared_hit_on_another() {
        let tier = Arc::new(MemoryTier::default());
        let (a, b) = (
            VerdictCache::new(100, Duration::from_secs(60)),
            VerdictCache::new(100, Duration::from_secs(60)),
        );
        a.share(tier.clone());
        b.share(tier.clone());
        let calls = Arc::new(AtomicUsize::new(0));
        let k = key(Phase::Pre, "v1", "m", "t", "rm -rf /");
        let unsafe_v = Verdict::Unsafe { reason: "destroys files".into(), sanitized: Some("ls /".into()) };
        let (v, lookup) = a.get_or_check(k, || counting(&calls, Ok(unsafe_v.clone()))).await;
        assert_eq!((v, lookup), (Ok(unsafe_v.clone()), Lookup::Miss));
        settle().await;
        assert_eq!(tier.map.lock().unwrap().get(&k).map(|(_, ttl)| *ttl), Some(Duration::from_secs(60)));
        let (v, lookup) = b.get_or_check(k, || counting(&calls, Ok(Verdict::Safe))).await;
        assert_eq!((v, lookup), (Ok(unsafe_v.clone()), Lookup::SharedHit), "B did not ask the model");
        // Now in B's own tier: the store is not asked again.
        let gets = tier.gets.load(Ordering::SeqCst);
        assert_eq!(b.get_or_check(k, || counting(&calls, Ok(Verdict::Safe))).await.1, Lookup::Hit);
        assert_eq!(tier.gets.load(Ordering::SeqCst), gets);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_tier_that_is_down_or_holds_garbage_is_a_miss_and_failures_never_reach_it() {
        let tier = Arc::new(MemoryTier::default());
        let cache = VerdictCache::new(100, Duration::from_secs(60));
        cache.share(tier.clone());
        let calls = Arc::new(AtomicUsize::new(0));
        let k = key(Phase::Post, "v1", "m", "t", "c");
        assert!(cache
            .get_or_check(k, || counting(&calls, Err(Failure::Error("down".into()))))
            .await
            .0
            .is_err());
        settle().await;
        assert!(tier.map.lock().unwrap().is_empty(), "a checker failure is not shared");

        let garbage = key(Phase::Post, "v1", "m", "t", "other");
        for bytes in
            [&b"{\"safe\":true}"[..], b"not json", b"\xff\xfe", b"{\"safe\":true,\"reason\":\"\"} {}"]
        {
            tier.map.lock().unwrap().insert(garbage, (bytes.to_vec(), Duration::from_secs(1)));
            let fresh = VerdictCache::new(100, Duration::from_secs(60));
            fresh.share(tier.clone());
            let unsafe_v = Verdict::Unsafe { reason: "r".into(), sanitized: None };
            let (v, lookup) = fresh.get_or_check(garbage, || counting(&calls, Ok(unsafe_v.clone()))).await;
            assert_eq!((v, lookup), (Ok(unsafe_v), Lookup::Miss), "{bytes:?} is not a verdict");
        }

        tier.down.store(true, Ordering::SeqCst);
        let before = calls.load(Ordering::SeqCst);
        let (v, lookup) = cache.get_or_check(k, || counting(&calls, Ok(Verdict::Safe))).await;
        assert_eq!((v, lookup), (Ok(Verdict::Safe), Lookup::Miss), "the model answers instead");
        assert_eq!(calls.load(Ordering::SeqCst), before + 1);
    }

    #[test]
    fn encoded_verdicts_read_back_as_themselves() {
        for v in [
            Verdict::Safe,
            Verdict::Unsafe { reason: "a \"quoted\" reason".into(), sanitized: None },
            Verdict::Unsafe { reason: "r".into(), sanitized: Some("clean\ntext".into()) },
        ] {
            assert_eq!(decode(&encode(&v)), Some(v));
        }
    }
}
