//! Every session's index, bounded in sessions and in fingerprints in total. A session pushed out
//! to make room is remembered as evicted (a bounded list of keys), and an evicted or overflowed
//! session fails safe: its sinks are judged by the model rule, never passed unjudged.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use super::index::{Bounds, SessionIndex};

/// A session as the index keys it: a digest of the agent and the session (or the caller when
/// the transport has no session), under a per-process random key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionKey(u64);

/// What the store knows of a session.
pub enum Lookup {
    /// Nothing recorded: sinks pass as before.
    Nothing,
    Held(Arc<Mutex<SessionIndex>>),
    /// Pushed out to make room: what it read is forgotten, so its sinks go to the model rule.
    Evicted,
}

/// The store's bounds (`flows.limits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreBounds {
    pub session: Bounds,
    pub sessions: usize,
    /// Fingerprints over every session.
    pub total: usize,
    /// Evicted sessions remembered (a 64-bit key each).
    pub evicted: usize,
}

#[derive(Debug)]
pub struct Store {
    keys: std::collections::hash_map::RandomState,
    sessions: RwLock<HashMap<SessionKey, Arc<Mutex<SessionIndex>>>>,
    evicted: Mutex<(VecDeque<SessionKey>, HashSet<SessionKey>)>,
    /// Evicted sessions pushed out of `evicted` (red team R6-5: a flood of sessions must not
    /// turn a forgotten session into a clean one): a bit per key hash, never cleared. A fresh
    /// session whose bit is set by another's is judged by the model rule: the safe side.
    forgotten: Mutex<Vec<u64>>,
    /// Sessions held or evicted: zero means no lookup at all.
    watched: AtomicUsize,
    total: AtomicUsize,
    clock: AtomicU64,
    pub bounds: StoreBounds,
    /// The state store replicas share the index through, once the runtime connects one.
    pub shared: std::sync::OnceLock<super::shared::SharedFlows>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Store {
    pub fn new(bounds: StoreBounds) -> Store {
        Store {
            keys: Default::default(),
            sessions: Default::default(),
            evicted: Default::default(),
            forgotten: Mutex::new(Vec::new()),
            watched: AtomicUsize::new(0),
            total: AtomicUsize::new(0),
            clock: AtomicU64::new(0),
            bounds,
            shared: std::sync::OnceLock::new(),
        }
    }

    pub fn key(&self, agent: Option<&str>, session: Option<&str>) -> SessionKey {
        SessionKey(self.keys.hash_one((agent, session)))
    }

    /// Fingerprints held over every session.
    pub fn total(&self) -> usize {
        self.total.load(Ordering::Relaxed)
    }

    /// Room left in the total.
    pub fn room(&self) -> usize {
        self.bounds.total.saturating_sub(self.total())
    }

    /// Accounts fingerprints added to a session.
    pub fn added(&self, n: usize) {
        self.total.fetch_add(n, Ordering::Relaxed);
    }

    /// Whether any session is held or evicted (one atomic load): when none is, a call's
    /// session is not even hashed.
    pub fn watching(&self) -> bool {
        self.watched.load(Ordering::Relaxed) != 0
    }

    pub fn lookup(&self, key: SessionKey) -> Lookup {
        if !self.watching() {
            return Lookup::Nothing;
        }
        let held = self.sessions.read().unwrap_or_else(|p| p.into_inner()).get(&key).cloned();
        match held {
            Some(ix) => {
                lock(&ix).last_used = self.clock.fetch_add(1, Ordering::Relaxed);
                Lookup::Held(ix)
            }
            None if lock(&self.evicted).1.contains(&key) || self.was_forgotten(key) => Lookup::Evicted,
            None => Lookup::Nothing,
        }
    }

    /// The session's index, made (and room made for it) if it has none.
    pub fn entry(&self, key: SessionKey) -> Arc<Mutex<SessionIndex>> {
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        let mut map = self.sessions.write().unwrap_or_else(|p| p.into_inner());
        if let Some(ix) = map.get(&key) {
            lock(ix).last_used = now;
            return ix.clone();
        }
        if map.len() >= self.bounds.sessions.max(1) {
            self.evict_oldest(&mut map);
        }
        let mut fresh = SessionIndex::default();
        fresh.last_used = now;
        // A session evicted before comes back knowing it forgot.
        fresh.overflowed = lock(&self.evicted).1.contains(&key) || self.was_forgotten(key);
        let ix = Arc::new(Mutex::new(fresh));
        map.insert(key, ix.clone());
        self.watched.fetch_add(1, Ordering::Relaxed);
        ix
    }

    /// Bits in the forgotten-sessions map (128 KiB).
    const FORGOTTEN_BITS: u64 = 1 << 20;

    fn bit(key: SessionKey) -> (usize, u64) {
        let b = key.0 % Self::FORGOTTEN_BITS;
        ((b / 64) as usize, 1 << (b % 64))
    }

    fn forget(&self, key: SessionKey) {
        let mut bits = lock(&self.forgotten);
        if bits.is_empty() {
            bits.resize((Self::FORGOTTEN_BITS / 64) as usize, 0);
        }
        let (word, mask) = Self::bit(key);
        bits[word] |= mask;
    }

    fn was_forgotten(&self, key: SessionKey) -> bool {
        let (word, mask) = Self::bit(key);
        lock(&self.forgotten).get(word).is_some_and(|w| w & mask != 0)
    }

    fn evict_oldest(&self, map: &mut HashMap<SessionKey, Arc<Mutex<SessionIndex>>>) {
        let Some(oldest) = map.iter().min_by_key(|(_, ix)| lock(ix).last_used).map(|(k, _)| *k) else {
            return;
        };
        let Some(ix) = map.remove(&oldest) else { return };
        let (held, empty) = {
            let ix = lock(&ix);
            (ix.len(), ix.is_empty() && !ix.overflowed)
        };
        self.total.fetch_sub(held.min(self.total()), Ordering::Relaxed);
        self.watched.fetch_sub(1, Ordering::Relaxed);
        if empty {
            return;
        }
        let mut ev = lock(&self.evicted);
        if ev.0.len() >= self.bounds.evicted.max(1) {
            if let Some(old) = ev.0.pop_front() {
                ev.1.remove(&old);
                self.forget(old);
            }
        }
        if ev.1.insert(oldest) {
            ev.0.push_back(oldest);
            self.watched.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::index::{Print, SourceKind};
    use super::*;

    fn store(sessions: usize) -> Store {
        Store::new(StoreBounds {
            session: Bounds { per_session: 100, sources: 4 },
            sessions,
            total: 1000,
            evicted: 8,
        })
    }

    fn record(s: &Store, key: SessionKey) {
        let ix = s.entry(key);
        let (t, u): (Arc<str>, Arc<str>) = ("mcp__mail__read".into(), "mail".into());
        let p = Print::tokens(&t, &u, SourceKind::Private, [(&b"abcdefghijklmnop"[..], 16)]);
        let before = lock(&ix).len();
        lock(&ix).add(&p, s.bounds.session, s.room());
        s.added(lock(&ix).len() - before);
    }

    #[test]
    fn an_empty_store_answers_nothing_without_a_map_lookup() {
        let s = store(2);
        assert!(matches!(s.lookup(s.key(None, Some("a"))), Lookup::Nothing));
    }

    #[test]
    fn the_oldest_session_is_evicted_and_then_fails_safe() {
        let s = store(2);
        let (a, b, c) = (s.key(None, Some("a")), s.key(None, Some("b")), s.key(Some("dev"), Some("a")));
        record(&s, a);
        record(&s, b);
        assert_eq!(s.total(), 2);
        let _ = s.lookup(a); // b is now the oldest
        record(&s, c);
        assert!(matches!(s.lookup(b), Lookup::Evicted));
        assert!(matches!(s.lookup(a), Lookup::Held(_)));
        assert_eq!(s.total(), 2, "the evicted session's fingerprints are released");
        assert!(lock(&s.entry(b)).overflowed, "a returning evicted session knows it forgot");
    }

    /// Red team R6-5: a flood of sessions pushes the victim out of the index and out of the
    /// bounded list of evicted sessions; it is still judged by the model rule, never clean.
    #[test]
    fn a_session_flooded_out_of_the_evicted_list_still_fails_safe() {
        let s = Store::new(StoreBounds {
            session: Bounds { per_session: 100, sources: 4 },
            sessions: 1,
            total: 1000,
            evicted: 2,
        });
        let victim = s.key(None, Some("victim"));
        record(&s, victim);
        for i in 0..10 {
            record(&s, s.key(None, Some(&format!("flood{i}"))));
        }
        assert!(matches!(s.lookup(victim), Lookup::Evicted));
        assert!(lock(&s.entry(victim)).overflowed);
    }

    #[test]
    fn the_same_session_of_another_agent_is_another_index() {
        let s = store(4);
        record(&s, s.key(Some("dev"), Some("x")));
        assert!(matches!(s.lookup(s.key(Some("ci"), Some("x"))), Lookup::Nothing));
        assert!(matches!(s.lookup(s.key(Some("dev"), Some("x"))), Lookup::Held(_)));
    }
}
