//! Fixed-window counting in one atomic word: the window's number in the high 32 bits, the calls
//! counted in it in the low 32. A take is a compare-and-swap loop — no lock, no allocation — and a
//! word left over from an earlier window reads as empty.

use std::sync::atomic::{AtomicU64, Ordering};

/// Which fixed window a bound counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    /// Sixty seconds, aligned to the Unix minute.
    Minute,
    /// A UTC day (midnight to midnight).
    Day,
}

impl Span {
    pub fn seconds(self) -> u64 {
        match self {
            Span::Minute => 60,
            Span::Day => 86_400,
        }
    }

    /// The number of the window holding `now` (Unix seconds).
    pub fn window(self, now: u64) -> u32 {
        // Minutes since 1970 pass u32::MAX in the year 10136.
        (now / self.seconds()) as u32
    }

    /// Whole seconds from `now` until the window holding it ends (at least 1).
    pub fn retry_after(self, now: u64) -> u64 {
        (self.seconds() - now % self.seconds()).max(1)
    }
}

fn pack(window: u32, count: u32) -> u64 {
    (u64::from(window) << 32) | u64::from(count)
}

fn unpack(word: u64) -> (u32, u32) {
    ((word >> 32) as u32, word as u32)
}

/// The calls counted in `window` (none when the word holds an earlier window).
pub fn count(word: &AtomicU64, window: u32) -> u32 {
    match unpack(word.load(Ordering::Relaxed)) {
        (w, c) if w == window => c,
        _ => 0,
    }
}

/// Counts one call in `window` if fewer than `limit` are counted there; `false` when full.
pub fn take(word: &AtomicU64, window: u32, limit: u32) -> bool {
    let mut current = word.load(Ordering::Relaxed);
    loop {
        let (w, c) = unpack(current);
        let used = if w == window { c } else { 0 };
        // A word from a later window (a clock stepped back) is counted as this one's: never
        // more room than the limit.
        let used = if w > window { c } else { used };
        if used >= limit {
            return false;
        }
        match word.compare_exchange_weak(
            current,
            pack(window.max(w), used + 1),
            Ordering::AcqRel,
            Ordering::Relaxed,
        ) {
            Ok(_) => return true,
            Err(now) => current = now,
        }
    }
}

/// Counts one call in `window` whatever the limit (the shared store already admitted it; the
/// local word stays this replica's share, for when the store is away).
pub fn add(word: &AtomicU64, window: u32) {
    let mut current = word.load(Ordering::Relaxed);
    loop {
        let (w, c) = unpack(current);
        let next = if w >= window { pack(w, c.saturating_add(1)) } else { pack(window, 1) };
        match word.compare_exchange_weak(current, next, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(_) => return,
            Err(now) => current = now,
        }
    }
}

/// Takes back one call counted in `window` (a call another bound refused); nothing if the
/// window has moved on.
pub fn give_back(word: &AtomicU64, window: u32) {
    let mut current = word.load(Ordering::Relaxed);
    loop {
        let (w, c) = unpack(current);
        if w != window || c == 0 {
            return;
        }
        match word.compare_exchange_weak(current, pack(w, c - 1), Ordering::AcqRel, Ordering::Relaxed) {
            Ok(_) => return,
            Err(now) => current = now,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_admits_up_to_its_limit_and_the_next_window_starts_empty() {
        let w = AtomicU64::new(0);
        assert!((0..3).all(|_| take(&w, 7, 3)), "three fit");
        assert!(!take(&w, 7, 3), "the fourth does not");
        assert_eq!(count(&w, 7), 3);
        assert_eq!(count(&w, 8), 0, "a later window reads empty");
        assert!(take(&w, 8, 3), "and admits again");
        assert_eq!(count(&w, 8), 1);
    }

    #[test]
    fn a_call_given_back_frees_its_place_only_in_its_own_window() {
        let w = AtomicU64::new(0);
        assert!(take(&w, 1, 1));
        give_back(&w, 1);
        assert!(take(&w, 1, 1), "the place was freed");
        give_back(&w, 0);
        assert!(!take(&w, 1, 1), "a give-back for an old window frees nothing");
    }

    #[test]
    fn a_clock_stepped_back_never_gives_more_room_than_the_limit() {
        let w = AtomicU64::new(0);
        assert!(take(&w, 9, 2) && take(&w, 9, 2));
        assert!(!take(&w, 8, 2), "window 8 after window 9 reads window 9's count");
    }

    #[test]
    fn the_retry_hint_is_the_rest_of_the_window() {
        assert_eq!(Span::Minute.retry_after(120), 60);
        assert_eq!(Span::Minute.retry_after(179), 1);
        assert_eq!(Span::Day.retry_after(86_400 + 3_600), 82_800);
        assert_eq!(Span::Minute.window(119), 1);
    }

    #[test]
    fn concurrent_takers_never_admit_more_than_the_limit() {
        let w = std::sync::Arc::new(AtomicU64::new(0));
        let admitted: u32 = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| {
                    let w = w.clone();
                    s.spawn(move || (0..1000).filter(|_| take(&w, 3, 2500)).count() as u32)
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(admitted, 2500);
        assert_eq!(count(&w, 3), 2500);
    }

    proptest::proptest! {
        /// Whatever order takes, give-backs and windows come in (a clock that jumps either way
        /// included), no window ever holds more than the limit, and a take is refused only when
        /// the window it reads is full.
        #[test]
        fn no_sequence_admits_more_than_the_limit_in_a_window(
            limit in 1u32..6,
            ops in proptest::collection::vec((0u32..4, proptest::bool::ANY), 0..64),
        ) {
            let w = AtomicU64::new(0);
            for (window, give) in ops {
                if give {
                    give_back(&w, window);
                } else {
                    let before = unpack(w.load(Ordering::Relaxed));
                    let took = take(&w, window, limit);
                    let read = if before.0 >= window { before.1 } else { 0 };
                    proptest::prop_assert_eq!(took, read < limit);
                }
                proptest::prop_assert!(unpack(w.load(Ordering::Relaxed)).1 <= limit);
            }
        }
    }
}
