//! Decision ids: every call the gate decides gets one, written in its audit line and cited in
//! the refusal the agent reads, so "why was this refused?" can be asked after the fact
//! (`portcullis explain ID`).
//!
//! An id is a per-process counter passed through a keyed permutation (a four-round Feistel
//! network over 60 bits whose round function is SipHash under a per-process random key), shown
//! as 12 characters of Crockford base32. Making one is an atomic increment — no syscall, no lock;
//! the permutation runs only when the id is shown (a refusal, an audit line), so an allowed call
//! with no audit line pays for the increment alone. A permutation never repeats within a
//! process, and the random key means neither an id nor the gap between two ids says how many
//! calls were decided.

use std::fmt;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Bits in an id (12 base32 characters).
const BITS: u32 = 60;
const HALF: u32 = BITS / 2;
const HALF_MASK: u64 = (1 << HALF) - 1;
/// Crockford's base32: no I, L, O or U, so an id read aloud or retyped survives.
const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// One decision's id: the counter's value, shown permuted (so `Debug` shows it permuted too).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct DecisionId(u64);

impl fmt::Debug for DecisionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DecisionId({self})")
    }
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// The per-process key (std's randomly keyed SipHash, seeded once from the OS).
fn key() -> &'static std::collections::hash_map::RandomState {
    static KEY: OnceLock<std::collections::hash_map::RandomState> = OnceLock::new();
    KEY.get_or_init(std::collections::hash_map::RandomState::new)
}

fn round(r: u64, half: u64) -> u64 {
    key().hash_one((r, half)) & HALF_MASK
}

impl DecisionId {
    /// A fresh id, never given before in this process.
    pub fn next() -> DecisionId {
        DecisionId(NEXT.fetch_add(1, Ordering::Relaxed) & ((1 << BITS) - 1))
    }

    /// The value shown: the counter, permuted.
    fn shown(self) -> u64 {
        let (mut l, mut r) = (self.0 >> HALF, self.0 & HALF_MASK);
        for i in 0..4 {
            (l, r) = (r, l ^ round(i, r));
        }
        (l << HALF) | r
    }

    /// The counter behind a shown value (the permutation run backwards).
    fn unshown(v: u64) -> DecisionId {
        let (mut l, mut r) = (v >> HALF, v & HALF_MASK);
        for i in (0..4).rev() {
            (l, r) = (r ^ round(i, l), l);
        }
        DecisionId((l << HALF) | r)
    }

    /// The id `text` spells (case-insensitive; Crockford's `O`→0, `I`/`L`→1 read as their digits).
    pub fn parse(text: &str) -> Option<DecisionId> {
        if text.len() != (BITS / 5) as usize {
            return None;
        }
        let mut v = 0u64;
        for c in text.bytes() {
            let c = match c.to_ascii_uppercase() {
                b'O' => b'0',
                b'I' | b'L' => b'1',
                c => c,
            };
            let digit = ALPHABET.iter().position(|&a| a == c)?;
            v = (v << 5) | digit as u64;
        }
        Some(DecisionId::unshown(v))
    }

    /// The sentence that ends a refusal: where to ask why.
    pub fn cite(self) -> String {
        format!(" (decision {self}; `portcullis explain {self}`)")
    }
}

impl fmt::Display for DecisionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = self.shown();
        let mut out = [0u8; (BITS / 5) as usize];
        for (i, slot) in out.iter_mut().enumerate() {
            let shift = BITS - 5 * (i as u32 + 1);
            *slot = ALPHABET[((shown >> shift) & 31) as usize];
        }
        f.write_str(std::str::from_utf8(&out).map_err(|_| fmt::Error)?)
    }
}

impl serde::Serialize for DecisionId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for DecisionId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        DecisionId::parse(&text).ok_or_else(|| serde::de::Error::custom("not a decision id"))
    }
}

/// `text` with every cited id spelt `ID`: what tests compare when ids are random.
#[cfg(test)]
pub(crate) fn ids_masked(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) =
        ["decision ", "explain "].iter().filter_map(|w| rest.find(w).map(|i| i + w.len())).min()
    {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let id = rest.get(..12).filter(|w| DecisionId::parse(w).is_some());
        if id.is_some() {
            out.push_str("ID");
            rest = &rest[12..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_twelve_crockford_characters_that_parse_back_and_never_repeat() {
        let ids: Vec<DecisionId> = (0..10_000).map(|_| DecisionId::next()).collect();
        let distinct: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
        for id in &ids[..100] {
            let text = id.to_string();
            assert_eq!(text.len(), 12, "{text}");
            assert!(text.bytes().all(|c| ALPHABET.contains(&c)), "{text}");
            assert_eq!(DecisionId::parse(&text), Some(*id));
            assert_eq!(DecisionId::parse(&text.to_ascii_lowercase()), Some(*id));
        }
    }

    #[test]
    fn consecutive_ids_do_not_count_calls() {
        let (a, b) = (DecisionId::next(), DecisionId::next());
        // A counter would differ by one; a permutation scatters them.
        assert!(a.shown().abs_diff(b.shown()) > 1 << 20, "{a} {b}");
        assert_eq!(
            format!("{a:?}"),
            format!("DecisionId({a})"),
            "Debug shows the permuted id, not the count"
        );
    }

    #[test]
    fn anything_but_an_id_is_refused() {
        for bad in ["", "0123456789A", "0123456789ABC", "0123456789A!", "0123456789AU", "ééééééé"] {
            assert_eq!(DecisionId::parse(bad), None, "{bad:?}");
        }
        assert_eq!(DecisionId::parse("OOOOOOOOOOOO"), DecisionId::parse("000000000000"));
    }

    #[test]
    fn a_citation_names_the_id_and_the_command_to_ask() {
        let id = DecisionId::next();
        assert_eq!(id.cite(), format!(" (decision {id}; `portcullis explain {id}`)"));
        assert_eq!(ids_masked(&format!("no.{}", id.cite())), "no. (decision ID; `portcullis explain ID`)");
    }
}
