//! The SHA-256 of a bearer token that was accepted, remembered per worker thread, so an agent's
//! calls do not digest the same token on every request.
//!
//! One agent's calls follow each other on a connection, which one worker thread serves. A static
//! token and a delegated one are looked up by their digest; the digest is a pure function of the
//! token, so remembering it changes no answer: the lookup after it (every configured digest
//! compared in constant time, a delegation's grant and expiry) runs on every call as before, and
//! a reload that changes the tokens is seen at once.
//!
//! Only tokens that were accepted are remembered ([`keep`]): a stream of guesses neither evicts
//! an agent's entry nor leaves the guesses in memory. The presented token is compared with each
//! remembered one in constant time ([`same`]: a length mismatch ends early, lengths are not
//! secret), so how long the comparison takes does not say how much of a guess matched; a hit
//! means the guess *is* a token accepted on this thread, which its acceptance says anyway.

use std::cell::RefCell;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// How many accepted tokens each worker thread remembers (a new one replaces the oldest).
const REMEMBERED: usize = 4;

/// A token's bytes and their SHA-256.
type Seen = (Box<[u8]>, [u8; 32]);

#[derive(Default)]
struct Memo {
    seen: [Option<Seen>; REMEMBERED],
    next: usize,
}

thread_local! {
    static MEMO: RefCell<Memo> = RefCell::new(Memo::default());
}

/// SHA-256 of `token`, and whether it was remembered (this thread accepted it lately) rather
/// than computed.
pub fn digest(token: &str) -> ([u8; 32], bool) {
    let bytes = token.as_bytes();
    let hit = MEMO.with(|memo| {
        let memo = memo.borrow();
        // Every slot is compared, hit or not: the loop's length does not depend on which matched.
        let mut hit = None;
        for (t, d) in memo.seen.iter().flatten() {
            if same(t, bytes) {
                hit = Some(*d);
            }
        }
        hit
    });
    match hit {
        Some(d) => (d, true),
        None => (Sha256::digest(bytes).into(), false),
    }
}

/// Remembers `digest` as `token`'s: call it once `token` was accepted and [`digest`] computed it.
pub fn keep(token: &str, digest: &[u8; 32]) {
    MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        let at = memo.next;
        memo.seen[at] = Some((token.as_bytes().into(), *digest));
        memo.next = (at + 1) % REMEMBERED;
    });
}

/// `a == b` in time that depends on their lengths only: every byte is read, the differences
/// are folded eight bytes at a time with no branch on them, and the fold is compared with
/// [`subtle`]. A length mismatch answers at once (lengths are not secret).
pub fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (a8, a1) = a.as_chunks::<8>();
    let (b8, b1) = b.as_chunks::<8>();
    let mut diff = 0u64;
    for (x, y) in a8.iter().zip(b8) {
        diff |= u64::from_ne_bytes(*x) ^ u64::from_ne_bytes(*y);
    }
    for (x, y) in a1.iter().zip(b1) {
        diff |= u64::from(x ^ y);
    }
    bool::from(diff.ct_eq(&0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha(s: &str) -> [u8; 32] {
        Sha256::digest(s.as_bytes()).into()
    }

    #[test]
    fn the_digest_is_the_tokens_whatever_was_kept_before() {
        let tokens: Vec<String> =
            (0..2 * REMEMBERED + 1).map(|i| format!("token-{i}-0123456789abcdef")).collect();
        for round in 0..3 {
            for (i, t) in tokens.iter().enumerate() {
                for t in [t, &tokens[(i + round) % tokens.len()], t] {
                    let (d, remembered) = digest(t);
                    assert_eq!(d, sha(t), "{t} in round {round}");
                    if !remembered {
                        keep(t, &d);
                    }
                }
            }
        }
        // A prefix or an extension of a kept token is another token.
        keep("Bearer-abcdef-0123456789", &sha("Bearer-abcdef-0123456789"));
        assert_eq!(digest("Bearer-abcdef-012345678"), (sha("Bearer-abcdef-012345678"), false));
        assert_eq!(digest("Bearer-abcdef-01234567890"), (sha("Bearer-abcdef-01234567890"), false));
        assert!(digest("Bearer-abcdef-0123456789").1);
    }

    #[test]
    fn only_a_kept_token_is_remembered_and_what_is_kept_is_what_is_answered() {
        let t = "kept-token-0123456789abcdef";
        // Nothing kept: computed.
        assert_eq!(digest(t), (sha(t), false));
        // Kept with a digest no one would compute: the memo answers it, proving the memo is read.
        let marker = [7u8; 32];
        keep(t, &marker);
        assert_eq!(digest(t), (marker, true));
        // Another thread keeps its own memo.
        let other = std::thread::spawn(move || digest(t)).join().unwrap();
        assert_eq!(other, (sha(t), false));
        // Enough other tokens kept push it out.
        for i in 0..REMEMBERED {
            let o = format!("other-token-{i}-0123456789");
            keep(&o, &sha(&o));
        }
        assert_eq!(digest(t), (sha(t), false));
    }

    #[test]
    fn same_is_byte_equality_at_every_length_and_position() {
        for len in 0..40 {
            let a: Vec<u8> = (0..len).map(|i| i as u8 ^ 0x5a).collect();
            assert!(same(&a, &a.clone()), "{len}");
            for at in 0..len {
                for bit in [0x01, 0x80] {
                    let mut b = a.clone();
                    b[at] ^= bit;
                    assert!(!same(&a, &b), "{len} {at} {bit}");
                }
            }
            let mut longer = a.clone();
            longer.push(0);
            assert!(!same(&a, &longer) && !same(&longer, &a), "{len}");
        }
    }
}
