//! A map that every request reads and few write. A reader loads one shard's snapshot — no lock,
//! no allocation; a writer copies that shard, edits the copy and swaps it in, under the shard's
//! own lock so writers never lose each other's edits.
//!
//! For tables on the hot path whose *keys* change rarely: sessions (added on `initialize`),
//! the breaker's streaks (added on a key's first call), metric handles (added on a label's
//! first use). A value that changes often belongs behind an `Arc` of atomics, changed in place:
//! every insert copies a shard, so shards are sized to keep that copy small.

use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use hashbrown::HashTable;

/// A shard's entries, placed by the same hash that picked the shard: a key is hashed once per
/// read (a `HashMap` would hash it again inside).
type Map<V> = HashTable<(Arc<str>, V)>;

pub(crate) struct ReadMostly<V> {
    shards: Box<[Shard<V>]>,
    /// Hashes keys, for their shard and their place in it (keyed per map, so a caller can aim
    /// its keys neither at one shard nor at one place).
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

    fn hash(&self, key: &str) -> u64 {
        self.hasher.hash_one(key)
    }

    /// The shard of a key with hash `h`: picked by bits the table inside does not place by (it
    /// uses the low bits for the bucket and the top seven as the tag).
    fn shard(&self, h: u64) -> &Shard<V> {
        &self.shards[(h >> 32) as usize & (self.shards.len() - 1)]
    }

    /// Keys held (exact once writers are done).
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Reads `key`'s value in place.
    pub fn read<R>(&self, key: &str, f: impl FnOnce(Option<&V>) -> R) -> R {
        let h = self.hash(key);
        f(self.shard(h).map.load().find(h, |(k, _)| **k == *key).map(|(_, v)| v))
    }

    pub fn get(&self, key: &str) -> Option<V> {
        self.read(key, |v| v.cloned())
    }

    pub fn contains(&self, key: &str) -> bool {
        self.read(key, |v| v.is_some())
    }

    /// Edits a copy of `key`'s shard and swaps it in; `f` (given the table, the key's hash and
    /// the hasher to place entries with) must only touch `key`.
    fn edit<R>(&self, key: &str, f: impl FnOnce(&mut Map<V>, u64, &dyn Fn(&(Arc<str>, V)) -> u64) -> R) -> R {
        let h = self.hash(key);
        let shard = self.shard(h);
        let _write = shard.write.lock().unwrap_or_else(|p| p.into_inner());
        let mut map = Map::clone(&shard.map.load());
        let before = map.len();
        let out = f(&mut map, h, &|(k, _)| self.hash(k));
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
        self.edit(key, |m, h, place| match m.find_mut(h, |(k, _)| **k == *key) {
            Some((_, v)) => Some(std::mem::replace(v, value)),
            None => {
                m.insert_unique(h, (key.into(), value), place);
                None
            }
        })
    }

    /// `key`'s value, inserting `make()` first if it has none.
    pub fn get_or_insert_with(&self, key: &str, make: impl FnOnce() -> V) -> V {
        match self.get(key) {
            Some(v) => v,
            // A writer may have inserted it since: theirs is kept.
            None => self.edit(key, |m, h, place| match m.find(h, |(k, _)| **k == *key) {
                Some((_, v)) => v.clone(),
                None => {
                    let v = make();
                    m.insert_unique(h, (key.into(), v.clone()), place);
                    v
                }
            }),
        }
    }

    pub fn remove(&self, key: &str) -> Option<V> {
        if !self.contains(key) {
            return None;
        }
        self.edit(key, |m, h, _| m.find_entry(h, |(k, _)| **k == *key).ok().map(|e| e.remove().0 .1))
    }

    /// Keeps the entries `keep` says to; a shard it removes nothing from keeps its snapshot.
    pub fn retain(&self, mut keep: impl FnMut(&str, &V) -> bool) {
        for shard in self.shards.iter() {
            let _write = shard.write.lock().unwrap_or_else(|p| p.into_inner());
            let map = shard.map.load_full();
            let mut kept = Map::clone(&map);
            kept.retain(|(k, v)| keep(k, v));
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

    #[test]
    fn every_key_is_found_where_it_was_put_as_shards_grow() {
        let m: ReadMostly<usize> = ReadMostly::new(4);
        let keys: Vec<String> = (0..2000).map(|i| format!("key-{i}")).collect();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(m.insert(k, i), None);
        }
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(m.get(k), Some(i), "{k}");
            assert!(!m.contains(&format!("{k}x")));
        }
        for k in keys.iter().step_by(2) {
            let before = m.get(k);
            assert_eq!(m.insert(k, 0), before, "a replaced value is returned");
            assert_eq!(m.remove(k), Some(0));
        }
        assert_eq!(m.len(), 1000);
        let mut seen = 0;
        m.for_each(|k, v| {
            assert_eq!(keys[*v], k);
            seen += 1;
        });
        assert_eq!(seen, 1000);
    }
}
