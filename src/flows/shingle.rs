//! Text as the flow index sees it: normalised ([`super::fold`]: look-alikes folded, letters and
//! digits only, lowercased), then hashed in rolling windows — every window when checking, a winnowed sample when recording.
//!
//! Dropping everything but letters and digits means re-wrapping, re-punctuating, re-casing or
//! splitting a copy at a space does not hide it; the price is that two texts sharing a long run
//! of letters and digits match even if their punctuation differs, which is what a copy is.

/// Window of a shingle, in normalised bytes: copies of at least this many letters and digits
/// of a short private text are caught; of a long one, see [`WINNOW`].
pub const SHINGLE: usize = 32;

/// Winnowing window: of every `WINNOW` consecutive shingles of a recorded text one is kept, so
/// any copy of at least `SHINGLE + WINNOW - 1` (47) normalised bytes of it holds a kept one.
pub const WINNOW: usize = 16;

/// Length of an exact token's head (secrets are matched by their first `HEAD` normalised bytes,
/// then compared whole): the shortest secret the index keeps.
pub const HEAD: usize = 12;

/// Window of a fine gram, in normalised bytes: a piece of private text too short for a
/// shingle is recognised by these, and counted across calls.
pub const FINE: usize = 12;

/// Winnowing window of fine grams: any piece of at least `FINE + FINE_WINNOW - 1` (19)
/// normalised bytes of a recorded text holds a kept one.
pub const FINE_WINNOW: usize = 8;

const BASE: u64 = 0x100_0000_01b3;

pub use super::fold::{normalise_bytes_into, normalise_into};

/// The hashes are already mixed: hashing them again would be wasted work.
#[derive(Default)]
pub struct Identity(u64);

impl std::hash::Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = bytes.iter().fold(self.0, |h, &b| h.rotate_left(8) ^ u64::from(b));
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A map keyed by a fingerprint.
pub type ByHash<V> = std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<Identity>>;

/// A 64-bit mix (splitmix64's finaliser): rolling hashes differ in low bits only, and both the
/// winnowing minimum and the map want every bit spread.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Calls `each(position, hash)` for every window of `k` bytes of `text` (none when shorter).
pub fn windows(text: &[u8], k: usize, mut each: impl FnMut(usize, u64) -> std::ops::ControlFlow<()>) {
    if k == 0 || text.len() < k {
        return;
    }
    let top = (1..k).fold(1u64, |p, _| p.wrapping_mul(BASE));
    let mut h = text[..k].iter().fold(0u64, |h, &b| h.wrapping_mul(BASE).wrapping_add(u64::from(b) + 1));
    if each(0, mix(h)).is_break() {
        return;
    }
    for i in k..text.len() {
        let out = u64::from(text[i - k]) + 1;
        h = h.wrapping_sub(out.wrapping_mul(top)).wrapping_mul(BASE).wrapping_add(u64::from(text[i]) + 1);
        if each(i + 1 - k, mix(h)).is_break() {
            return;
        }
    }
}

/// The hash of exactly `bytes` (a token's head), the same as [`windows`] gives for it.
pub fn hash_of(bytes: &[u8]) -> u64 {
    mix(bytes.iter().fold(0u64, |h, &b| h.wrapping_mul(BASE).wrapping_add(u64::from(b) + 1)))
}

/// The fingerprints kept for a recorded text: every shingle of a short text (fewer than
/// [`WINNOW`] of them), else the rightmost minimum of each window of [`WINNOW`] shingles.
pub fn winnowed(text: &[u8]) -> Vec<u64> {
    winnow(text, SHINGLE, WINNOW)
}

/// The fine grams kept for a recorded text ([`FINE`] bytes, one of each [`FINE_WINNOW`]): what
/// pieces too short for a shingle are counted by (see `super::pieces`).
pub fn fine(text: &[u8]) -> Vec<u64> {
    winnow(text, FINE, FINE_WINNOW)
}

/// Windows of `k` bytes, winnowed one of each `w`.
fn winnow(text: &[u8], k: usize, w: usize) -> Vec<u64> {
    let mut all = Vec::with_capacity(text.len().saturating_sub(k - 1));
    windows(text, k, |_, h| {
        all.push(h);
        std::ops::ControlFlow::Continue(())
    });
    if all.len() <= w {
        return all;
    }
    let mut kept: Vec<u64> = Vec::with_capacity(2 * all.len() / (w + 1) + 1);
    let mut last = usize::MAX;
    for start in 0..=all.len() - w {
        let window = &all[start..start + w];
        let mut at = 0;
        for (i, h) in window.iter().enumerate() {
            if *h <= window[at] {
                at = i;
            }
        }
        if start + at != last {
            last = start + at;
            kept.push(all[last]);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ops::ControlFlow;

    #[test]
    fn a_rolling_window_hashes_as_its_bytes_hashed_whole() {
        let text = b"the quick brown fox jumps over the lazy dog again and again";
        for k in [1, 5, 12, 32] {
            windows(text, k, |at, h| {
                assert_eq!(h, hash_of(&text[at..at + k]), "k={k} at={at}");
                ControlFlow::Continue(())
            });
        }
    }

    #[test]
    fn every_long_enough_copy_holds_a_winnowed_fingerprint() {
        let text: Vec<u8> = (0..2000u32)
            .map(|i| b"abcdefghijklmnopqrstuvwxyz0123456789"[(i * i % 37 % 36) as usize])
            .collect();
        let kept: std::collections::HashSet<u64> = winnowed(&text).into_iter().collect();
        assert!(kept.len() < text.len() / 4, "winnowing keeps a sample, not all: {}", kept.len());
        let need = SHINGLE + WINNOW - 1;
        for start in (0..text.len() - need).step_by(7) {
            let copy = &text[start..start + need];
            let mut hit = false;
            windows(copy, SHINGLE, |_, h| {
                hit |= kept.contains(&h);
                ControlFlow::Continue(())
            });
            assert!(hit, "a copy at {start} was missed");
        }
    }

    #[test]
    fn a_short_text_keeps_every_shingle_and_a_shorter_one_none() {
        assert_eq!(winnowed(&[b'a'; SHINGLE + 3]).len(), 4);
        assert!(winnowed(&[b'a'; SHINGLE - 1]).is_empty());
    }
}
