//! Private text sent a little at a time (red team R6-3b): what one session already sent to
//! destinations no egress rule allows, kept so a copy split across calls is still a copy.
//!
//! Two rules, both over every unallowed destination of the session together (an attacker owns
//! as many hosts as he likes, so counting per destination would only ask him to use more):
//! - **Distinct fine grams.** A piece of at least 19 letters and digits of a private text holds
//!   one of its kept fine grams ([`super::shingle::FINE`]); the session may send at most
//!   [`PIECES`]` - 1` distinct ones in all its calls, the call that would send the
//!   [`PIECES`]th is refused. Order, noise between the pieces and the calls' spacing do not matter.
//! - **In order.** Each argument (by its JSON pointer) keeps the last `SHINGLE - 1` letters and
//!   digits it sent; the next value of that argument is checked joined to them, so a copy cut
//!   into pieces of any size and sent in order meets its shingles at the call where they end.
//!
//! Not caught: pieces under 19 letters and digits sent out of order or in different arguments,
//! and a copy paraphrased (see docs/checker.md).

use super::shingle::{ByHash, SHINGLE};

/// Distinct fine grams of private text a session's calls to unallowed destinations may carry in
/// all: the call that would carry this many is refused. Three 12-byte runs: two short quotes
/// (a name, a date) pass, a text cut into three pieces does not.
pub const PIECES: usize = 3;

/// Arguments whose tails are kept per session.
const TAILS: usize = 16;

/// What a session already sent to unallowed destinations.
#[derive(Debug, Default)]
pub struct Sent {
    grams: ByHash<()>,
    /// (argument pointer's hash, its last `SHINGLE - 1` normalised bytes), oldest first.
    tails: Vec<(u64, Vec<u8>)>,
}

/// What one call would add to [`Sent`], applied only when the call goes.
#[derive(Debug, Default)]
pub struct Sending {
    pub grams: ByHash<u16>,
    tails: Vec<(u64, Vec<u8>)>,
}

fn key(pointer: &str) -> u64 {
    super::shingle::hash_of(pointer.as_bytes())
}

impl Sent {
    /// The tail argument `pointer` last sent, joined to `normalised` (this call's value).
    pub fn joined(&self, pointer: &str, normalised: &[u8]) -> Vec<u8> {
        let k = key(pointer);
        let tail = self.tails.iter().find(|(p, _)| *p == k).map(|(_, t)| t.as_slice()).unwrap_or(&[]);
        let mut v = Vec::with_capacity(tail.len() + normalised.len());
        v.extend_from_slice(tail);
        v.extend_from_slice(normalised);
        v
    }

    /// Distinct grams the session would have sent with `sending`'s: the refusal's count when it
    /// reaches [`PIECES`], with a source of one of the new ones.
    pub fn too_many(&self, sending: &Sending) -> Option<(usize, u16)> {
        let new: Vec<(&u64, &u16)> =
            sending.grams.iter().filter(|(h, _)| !self.grams.contains_key(h)).collect();
        let total = self.grams.len() + new.len();
        match (total >= PIECES, new.first()) {
            (true, Some((_, &src))) => Some((total, src)),
            _ => None,
        }
    }

    /// Records a call that goes.
    pub fn went(&mut self, sending: Sending) {
        self.grams.extend(sending.grams.into_keys().map(|h| (h, ())));
        for (k, tail) in sending.tails {
            self.tails.retain(|(p, _)| *p != k);
            if self.tails.len() >= TAILS {
                self.tails.remove(0);
            }
            self.tails.push((k, tail));
        }
    }
}

impl Sending {
    /// Keeps the last `SHINGLE - 1` bytes of `joined` as argument `pointer`'s tail.
    pub fn tail(&mut self, pointer: &str, joined: &[u8]) {
        let from = joined.len().saturating_sub(SHINGLE - 1);
        self.tails.push((key(pointer), joined[from..].to_vec()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sending(grams: &[u64]) -> Sending {
        Sending { grams: grams.iter().map(|&g| (g, 0)).collect(), tails: Vec::new() }
    }

    #[test]
    fn the_third_distinct_gram_is_refused_whatever_the_order_and_repeats() {
        let mut s = Sent::default();
        assert!(s.too_many(&sending(&[7])).is_none());
        s.went(sending(&[7]));
        assert!(s.too_many(&sending(&[7])).is_none(), "the same run again is no new piece");
        s.went(sending(&[7]));
        assert!(s.too_many(&sending(&[9])).is_none());
        s.went(sending(&[9]));
        assert_eq!(s.too_many(&sending(&[3])).map(|(n, _)| n), Some(3));
        assert_eq!(s.too_many(&sending(&[3, 4, 5])).map(|(n, _)| n), Some(5));
    }

    #[test]
    fn an_argument_is_joined_to_what_it_sent_last_and_only_its_tail_is_kept() {
        let mut s = Sent::default();
        let mut go = Sending::default();
        let long = [b'x'; 100];
        go.tail("/body", &long);
        s.went(go);
        assert_eq!(s.joined("/body", b"ab").len(), SHINGLE - 1 + 2);
        assert_eq!(s.joined("/url", b"ab"), b"ab");
        for i in 0..40 {
            let mut go = Sending::default();
            go.tail(&format!("/{i}"), b"abc");
            s.went(go);
        }
        assert!(s.tails.len() <= TAILS, "tails are bounded");
    }
}
