//! A map that every request reads and few write. A reader loads one shard's snapshot — no lock,
//! no allocation; a writer copies that shard, edits the copy and swaps it in, under the shard's
//! own lock so writers never lose each other's edits.
//!
//! For tables on the hot path whose *keys* change rarely: sessions (added on `initialize`),
//! the breaker's streaks (added on a key's first call), metric handles (added on a label's
//! first use). A value that changes often belongs behind an `Arc` of atomics, changed in place:
//! every insert copies a shard, so shards are sized to keep that copy small.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;

type Map<V> = HashMap<Arc<str>, V>;

pub(crate) struct ReadMostly<V> {
    shards: Box<[Shard<V>]>,
    /// Picks a key's shard (keyed per map, so a caller cannot aim every key at one shard).
    hasher: RandomState,
    len: AtomicUsize,
}

struct Shard<V> {
    map: ArcSwap<Map<V>>,
    write: Mutex<()>,
}

impl<V> std::fmt::Debug for ReadMostly<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadMostly").field("len", &self.len.load(Ordering::Relaxed)).finish()
    }
}

impl<V: Clone> Default for ReadMostly<V> {
    fn default() -> Self {
        ReadMostly::new(16)
    }
}

impl<V: Clone> ReadMostly<V> {
    /// A map of `shards` shards (rounded up to a power of two): an insert copies about
    /// `len / shards` entries.
    pub fn new(shards: usize) -> ReadMostly<V> {
        let shards = shards.max(1).next_power_of_two();
        ReadMostly {
            shards: (0..shards)
                .map(|_| Shard { map: ArcSwap::from_pointee(Map::default()), write: Mutex::default() })
                .collect(),
            hasher: RandomState::new(),
            len: AtomicUsize::new(0),
        }
    }

    fn shard(&self, key: &str) -> &Shard<V> {
        let i = self.hasher.hash_one(key) as usize & (self.shards.len() - 1);
        &self.shards[i]
    }

    /// Keys held (exact once writers are done).
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Reads `key`'s value in place.
    pub fn read<R>(&self, key: &str, f: impl FnOnce(Option<&V>) -> R) -> R {
        f(self.shard(key).map.load().get(key))
    }

    pub fn get(&self, key: &str) -> Option<V> {
        self.read(key, |v| v.cloned())
    }

    pub fn contains(&self, key: &str) -> bool {
        self.read(key, |v| v.is_some())
    }

    /// Edits a copy of `key`'s shard and swaps it in; `f` must only touch `key`.
    fn edit<R>(&self, key: &str, f: impl FnOnce(&mut Map<V>) -> R) -> R {
        let shard = self.shard(key);
        let _write = shard.write.lock().unwrap_or_else(|p| p.into_inner());
        let mut map = Map::clone(&shard.map.load());
        let before = map.len();
        let out = f(&mut map);
        let after = map.len();
        shard.map.store(Arc::new(map));
        // Under the shard's lock: each shard's changes are counted in order.
        if after > before {
            self.len.fetch_add(after - before, Ordering::Relaxed);
        } else {
            self.len.fetch_sub(before - after, Ordering::Relaxed);
        }
        out
    }

    /// Sets `key` to `value`, returning the value it replaced.
    pub fn insert(&self, key: &str, value: V) -> Option<V> {
        self.edit(key, |m| m.insert(key.into(), value))
    }

    /// `key`'s value, inserting `make()` first if it has none.
    pub fn get_or_insert_with(&self, key: &str, make: impl FnOnce() -> V) -> V {
        match self.get(key) {
            Some(v) => v,
            // A writer may have inserted it since: `entry` keeps theirs.
            None => self.edit(key, |m| m.entry(key.into()).or_insert_with(make).clone()),
        }
    }

    pub fn remove(&self, key: &str) -> Option<V> {
        if !self.contains(key) {
            return None;
        }
        self.edit(key, |m| m.remove(key))
    }

    /// Keeps the entries `keep` says to; a shard it removes nothing from keeps its snapshot.
    pub fn retain(&self, mut keep: impl FnMut(&str, &V) -> bool) {
        for shard in self.shards.iter() {
            let _write = shard.write.lock().unwrap_or_else(|p| p.into_inner());
            let map = shard.map.load_full();
            let kept: Map<V> =
                map.iter().filter(|(k, v)| keep(k, v)).map(|(k, v)| (k.clone(), v.clone())).collect();
            if kept.len() < map.len() {
                self.len.fetch_sub(map.len() - kept.len(), Ordering::Relaxed);
                shard.map.store(Arc::new(kept));
            }
        }
    }

    /// Visits every entry of a snapshot (one shard at a time: not one instant).
    pub fn for_each(&self, mut f: impl FnMut(&str, &V)) {
        for shard in self.shards.iter() {
            shard.map.load().iter().for_each(|(k, v)| f(k, v));
        }
    }

    /// The first entry `pick` accepts, if any.
    pub fn find(&self, mut pick: impl FnMut(&str, &V) -> bool) -> Option<(Arc<str>, V)> {
        self.shards.iter().find_map(|shard| {
            shard.map.load().iter().find(|(k, v)| pick(k, v)).map(|(k, v)| (k.clone(), v.clone()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_keeps_its_snapshot_while_a_writer_swaps_the_shard() {
        let m: ReadMostly<u32> = ReadMostly::new(4);
        m.insert("a", 1);
        m.read("a", |v| {
            m.insert("a", 2); // a reader holds no lock: the writer is not blocked by it
            assert_eq!(v, Some(&1), "the snapshot read");
        });
        assert_eq!(m.get("a"), Some(2));
    }

    #[test]
    fn len_counts_keys_through_inserts_removals_and_retain() {
        let m: ReadMostly<u32> = ReadMostly::new(3);
        for (i, k) in ["a", "b", "c", "d", "e"].into_iter().enumerate() {
            m.insert(k, i as u32);
        }
        m.insert("a", 9);
        assert_eq!(m.len(), 5);
        assert_eq!(m.get_or_insert_with("a", || 0), 9, "a present key keeps its value");
        assert_eq!(m.get_or_insert_with("f", || 5), 5);
        assert_eq!((m.remove("b"), m.remove("b")), (Some(1), None));
        m.retain(|_, v| v % 2 == 1);
        let mut left = Vec::new();
        m.for_each(|k, v| left.push((k.to_owned(), *v)));
        left.sort();
        assert_eq!(left, [("a".to_owned(), 9), ("d".to_owned(), 3), ("f".to_owned(), 5)]);
        assert_eq!(m.len(), 3);
        assert!(m.find(|k, _| k == "d").is_some() && m.find(|k, _| k == "c").is_none());
    }
}
