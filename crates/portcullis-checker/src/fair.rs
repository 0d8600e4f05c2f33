//! The checker's concurrency limit, shared fairly among callers.
//!
//! `max_concurrency` model calls may be in flight; each caller key (a session or principal,
//! passed in with the job) may hold at most its share, `max(1, max_concurrency / active keys)`,
//! where a key is active while it holds or waits for a slot. One agent firing sixty calls gets the
//! whole limit while it is alone, and gives slots back to a newcomer as its own calls land — so
//! it cannot starve the others' checks, which would otherwise wait behind it and (under
//! fail-open) pass unjudged.
//!
//! Waiting here is load, not a checker failure: the caller bounds the wait (`queue_timeout`) and
//! sheds the call by the rule's failure mode; the breaker never hears of it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

#[derive(Debug)]
pub struct FairLimiter {
    max: usize,
    state: Mutex<State>,
    /// Woken whenever a slot frees or a key stops waiting (shares change).
    changed: Notify,
}

#[derive(Debug, Default)]
struct State {
    total: usize,
    keys: HashMap<Arc<str>, Slots>,
}

#[derive(Debug, Default)]
struct Slots {
    held: usize,
    waiting: usize,
}

/// One model call's slot; freed on drop.
#[derive(Debug)]
pub struct Permit {
    limiter: Arc<FairLimiter>,
    key: Arc<str>,
}

/// Counts a key as waiting while a caller is parked; a cancelled wait (timeout) uncounts it.
struct Waiting {
    limiter: Arc<FairLimiter>,
    key: Arc<str>,
    armed: bool,
}

impl FairLimiter {
    pub fn new(max: usize) -> Arc<FairLimiter> {
        Arc::new(FairLimiter { max: max.max(1), state: Mutex::default(), changed: Notify::new() })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits (unbounded: the caller puts a timeout around it) for a slot for `key`.
    pub async fn acquire(self: &Arc<Self>, key: &str) -> Permit {
        let key: Arc<str> = key.into();
        let mut waiting: Option<Waiting> = None;
        loop {
            // Registered before the state is read, so a slot freed in between still wakes us.
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut s = self.lock();
                let active = s.keys.len() + usize::from(!s.keys.contains_key(&key));
                let share = (self.max / active).max(1);
                let total = s.total;
                let slots = s.keys.entry(key.clone()).or_default();
                if total < self.max && slots.held < share {
                    slots.held += 1;
                    if let Some(mut w) = waiting.take() {
                        slots.waiting -= 1;
                        w.armed = false;
                    }
                    s.total += 1;
                    return Permit { limiter: self.clone(), key };
                }
                if waiting.is_none() {
                    slots.waiting += 1;
                    waiting = Some(Waiting { limiter: self.clone(), key: key.clone(), armed: true });
                }
            }
            notified.await;
        }
    }

    /// Slots held by `key` now (for tests and debugging).
    pub fn held(&self, key: &str) -> usize {
        self.lock().keys.get(key).map_or(0, |s| s.held)
    }

    fn release(&self, key: &str, held: usize, waiting: usize) {
        {
            let mut s = self.lock();
            s.total -= held;
            if let Some(slots) = s.keys.get_mut(key) {
                slots.held -= held;
                slots.waiting -= waiting;
                if slots.held == 0 && slots.waiting == 0 {
                    s.keys.remove(key);
                }
            }
        }
        self.changed.notify_waiters();
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.limiter.release(&self.key, 1, 0);
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if self.armed {
            self.limiter.release(&self.key, 0, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn one_key_alone_gets_the_whole_limit_and_gives_way_to_a_newcomer() {
        let l = FairLimiter::new(4);
        let mut mine = Vec::new();
        for _ in 0..4 {
            mine.push(l.acquire("a").await);
        }
        assert_eq!(l.held("a"), 4);
        // A fifth call of the same key waits: the limit is full.
        let a5 = tokio::spawn({
            let l = l.clone();
            async move { l.acquire("a").await }
        });
        let b = tokio::spawn({
            let l = l.clone();
            async move { l.acquire("b").await }
        });
        tokio::task::yield_now().await;
        assert!(!a5.is_finished() && !b.is_finished());
        // One of a's calls lands: a is over its share (2 of 4 with b waiting), so b gets the slot.
        mine.pop();
        let b = b.await.unwrap();
        assert_eq!((l.held("a"), l.held("b")), (3, 1));
        assert!(!a5.is_finished(), "a waits until it is back within its share");
        mine.pop();
        mine.pop();
        let a5 =
            tokio::time::timeout(Duration::from_secs(1), a5).await.expect("a is within its share").unwrap();
        assert_eq!((l.held("a"), l.held("b")), (2, 1));
        drop((a5, b, mine));
        assert_eq!(l.lock().total, 0);
        assert!(l.lock().keys.is_empty(), "no key is remembered once idle");
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_given_up_leaves_nothing_behind() {
        let l = FairLimiter::new(1);
        let held = l.acquire("a").await;
        let gave_up = tokio::time::timeout(Duration::from_millis(10), l.acquire("b")).await;
        assert!(gave_up.is_err());
        assert!(!l.lock().keys.contains_key("b"), "a timed-out waiter is not counted as active");
        drop(held);
        let _b = l.acquire("b").await;
    }
}
