//! Text as the flow index sees it: normalised (letters and digits only, lowercased), then
//! hashed in rolling windows — every window when checking, a winnowed sample when recording.
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

const BASE: u64 = 0x100_0000_01b3;

/// Appends the normalised form of `text` to `out`: ASCII letters and digits lowercased, other
/// alphanumeric characters lowercased as UTF-8, everything else dropped.
pub fn normalise_into(text: &str, out: &mut Vec<u8>) {
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase() as u8);
        } else if !c.is_ascii() && c.is_alphanumeric() {
            let mut buf = [0u8; 4];
            for l in c.to_lowercase() {
                out.extend_from_slice(l.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
}

/// [`normalise_into`] over bytes that may not be UTF-8 (a decoded blob): ASCII only.
pub fn normalise_bytes_into(bytes: &[u8], out: &mut Vec<u8>) {
    match std::str::from_utf8(bytes) {
        Ok(text) => normalise_into(text, out),
        Err(_) => {
            out.extend(bytes.iter().filter(|b| b.is_ascii_alphanumeric()).map(|b| b.to_ascii_lowercase()))
        }
    }
}

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
    let mut all = Vec::with_capacity(text.len().saturating_sub(SHINGLE - 1));
    windows(text, SHINGLE, |_, h| {
        all.push(h);
        std::ops::ControlFlow::Continue(())
    });
    if all.len() <= WINNOW {
        return all;
    }
    let mut kept: Vec<u64> = Vec::with_capacity(2 * all.len() / (WINNOW + 1) + 1);
    let mut last = usize::MAX;
    for start in 0..=all.len() - WINNOW {
        let window = &all[start..start + WINNOW];
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

    fn norm(s: &str) -> Vec<u8> {
        let mut v = Vec::new();
        normalise_into(s, &mut v);
        v
    }

    #[test]
    fn normalising_drops_case_spacing_and_punctuation() {
        let cases = [
            ("Hello, World!", "helloworld"),
            ("  a\tb\nC  ", "abc"),
            ("Grüße ÄÖ", "grüßeäö"),
            ("x-1_2.3", "x123"),
            ("", ""),
        ];
        for (input, want) in cases {
            assert_eq!(norm(input), want.as_bytes(), "{input:?}");
        }
    }

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
