//! This replica's counters: one [`Subject`] per agent or anonymous caller, each holding a slot of
//! atomics per configured entry. The allow path is one map read (a shard snapshot, no lock) and
//! a few compare-and-swaps; a subject's first call copies one shard. The map is bounded: past
//! [`MAX_SUBJECTS`] the idle subjects are swept, and callers that still do not fit share one
//! overflow subject (stricter for them, never looser).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use super::window::{self, Span};
use crate::read_mostly::ReadMostly;

/// Subjects kept before the idle ones are swept and newcomers share [`OVERFLOW`].
pub const MAX_SUBJECTS: usize = 65_536;
/// The subject callers beyond [`MAX_SUBJECTS`] share.
pub const OVERFLOW: &str = "#more";

/// One entry's counters for one subject.
#[derive(Debug, Default)]
pub struct Slot {
    minute: AtomicU64,
    day: AtomicU64,
    in_flight: AtomicU32,
}

impl Slot {
    pub fn word(&self, span: Span) -> &AtomicU64 {
        match span {
            Span::Minute => &self.minute,
            Span::Day => &self.day,
        }
    }

    /// Nothing to remember at `now`: no call in flight, none counted in the current windows.
    fn idle(&self, now: u64) -> bool {
        self.in_flight.load(Ordering::Relaxed) == 0
            && [Span::Minute, Span::Day].into_iter().all(|s| window::count(self.word(s), s.window(now)) == 0)
    }
}

/// One agent's (or anonymous caller's) slots, one per configured entry.
#[derive(Debug)]
pub struct Subject {
    slots: Box<[Slot]>,
}

impl Subject {
    pub fn slot(&self, entry: usize) -> &Slot {
        &self.slots[entry]
    }
}

/// Every subject this replica has counted.
#[derive(Debug)]
pub struct Subjects {
    map: ReadMostly<Arc<Subject>>,
    entries: usize,
    /// [`MAX_SUBJECTS`], but for tests.
    cap: usize,
    /// The minute of the last sweep: at most one a minute, however full the map stays.
    swept: AtomicU64,
}

impl Subjects {
    pub fn new(entries: usize) -> Subjects {
        Subjects::with_cap(entries, MAX_SUBJECTS)
    }

    fn with_cap(entries: usize, cap: usize) -> Subjects {
        // Nothing configured (every guard has a limiter): one empty shard, not sixty-four.
        let shards = if entries == 0 { 1 } else { 64 };
        Subjects { map: ReadMostly::new(shards), entries, cap, swept: AtomicU64::new(u64::MAX) }
    }

    /// `key`'s subject, made on its first call (the overflow subject when the map is full).
    pub fn get(&self, key: &str, now: u64) -> Arc<Subject> {
        if let Some(s) = self.map.get(key) {
            return s;
        }
        if self.map.len() >= self.cap {
            self.sweep(now);
        }
        let key = if self.map.len() >= self.cap { OVERFLOW } else { key };
        let entries = self.entries;
        self.map.get_or_insert_with(key, || {
            Arc::new(Subject { slots: (0..entries).map(|_| Slot::default()).collect() })
        })
    }

    /// Drops the subjects with nothing to remember, once a minute at most.
    fn sweep(&self, now: u64) {
        let minute = now / 60;
        if self.swept.swap(minute, Ordering::Relaxed) == minute {
            return;
        }
        self.map.retain(|_, s| !s.slots.iter().all(|slot| slot.idle(now)));
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map.len()
    }
}

/// Calls in flight held for one call; each is given back when the permit is dropped — when the
/// upstream answered, the stream ended, or the client went away — so none can leak.
#[derive(Debug, Default)]
pub struct Permit {
    held: Vec<(Arc<Subject>, usize)>,
}

impl Permit {
    /// Takes one of `entry`'s `limit` places for `subject`; `false` when all are taken.
    pub fn take(&mut self, subject: &Arc<Subject>, entry: usize, limit: u32) -> bool {
        let flight = &subject.slot(entry).in_flight;
        let mut current = flight.load(Ordering::Relaxed);
        loop {
            if current >= limit {
                return false;
            }
            match flight.compare_exchange_weak(current, current + 1, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => {
                    self.held.push((subject.clone(), entry));
                    return true;
                }
                Err(now) => current = now,
            }
        }
    }

    /// Places held (tests and the bench).
    pub fn held(&self) -> usize {
        self.held.len()
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        for (subject, entry) in self.held.drain(..) {
            subject.slot(entry).in_flight.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_permit_frees_its_places_when_dropped() {
        let subjects = Subjects::new(1);
        let s = subjects.get("agent:dev", 0);
        let mut a = Permit::default();
        assert!(a.take(&s, 0, 2));
        let mut b = Permit::default();
        assert!(b.take(&s, 0, 2));
        let mut c = Permit::default();
        assert!(!c.take(&s, 0, 2), "both places are taken");
        drop(a);
        assert!(c.take(&s, 0, 2), "a dropped permit frees its place");
        assert_eq!((b.held(), c.held()), (1, 1));
    }

    #[test]
    fn past_the_cap_idle_subjects_are_swept_and_newcomers_share_the_overflow() {
        const MAX_SUBJECTS: usize = 64;
        let subjects = Subjects::with_cap(1, MAX_SUBJECTS);
        let busy = subjects.get("busy", 0);
        assert!(window::take(busy.slot(0).word(Span::Day), Span::Day.window(0), 10));
        for i in 1..MAX_SUBJECTS {
            subjects.get(&format!("caller:{i}"), 0);
        }
        assert_eq!(subjects.len(), MAX_SUBJECTS);
        // The sweep keeps the busy subject and drops the idle ones.
        let fresh = subjects.get("caller:new", 61);
        assert_eq!(subjects.len(), 2, "busy and the newcomer are left");
        assert!(Arc::ptr_eq(&subjects.get("busy", 61), &busy));
        assert!(!Arc::ptr_eq(&fresh, &busy));
    }

    #[test]
    fn when_nothing_can_be_swept_newcomers_share_one_overflow_subject() {
        const MAX_SUBJECTS: usize = 64;
        let subjects = Subjects::with_cap(1, MAX_SUBJECTS);
        let mut permits = Vec::new();
        for i in 0..MAX_SUBJECTS {
            let s = subjects.get(&format!("caller:{i}"), 0);
            let mut p = Permit::default();
            assert!(p.take(&s, 0, 1));
            permits.push(p);
        }
        let a = subjects.get("caller:a", 0);
        let b = subjects.get("caller:b", 0);
        assert!(Arc::ptr_eq(&a, &b), "both share the overflow subject");
        assert_eq!(subjects.len(), MAX_SUBJECTS + 1);
    }
}
