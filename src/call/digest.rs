//! A principal's SHA-256, computed once per caller per worker thread rather than at each use.
//!
//! An allowed call digests its caller twice — its fair-share key ([`super::ToolCall::with_caller`])
//! and its streak key in the repeated-denial breaker — and one caller's calls follow each other
//! on a connection, which one worker thread serves. A few digests are remembered per thread; the
//! principal they were made from is compared in constant time, since it may hold another
//! caller's credential.

use std::cell::RefCell;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// How many principals each worker thread remembers (a new one replaces the oldest).
const REMEMBERED: usize = 4;

/// A principal's bytes and their SHA-256.
type Seen = (Box<[u8]>, [u8; 32]);

#[derive(Default)]
struct Memo {
    seen: [Option<Seen>; REMEMBERED],
    next: usize,
}

thread_local! {
    static MEMO: RefCell<Memo> = RefCell::new(Memo::default());
}

/// SHA-256 of `principal`.
pub fn principal_digest(principal: &str) -> [u8; 32] {
    let bytes = principal.as_bytes();
    MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        let hit = memo.seen.iter().flatten().find(|(p, _)| bool::from(p.as_ref().ct_eq(bytes)));
        if let Some((_, d)) = hit {
            return *d;
        }
        let d: [u8; 32] = Sha256::digest(bytes).into();
        let at = memo.next;
        memo.seen[at] = Some((bytes.into(), d));
        memo.next = (at + 1) % REMEMBERED;
        d
    })
}

/// `prefix` then the first `n` bytes of `digest` in lower hex, in one allocation (the text is
/// built on the stack when it fits, as a caller key does).
pub fn hex_key(prefix: &str, digest: &[u8; 32], n: usize) -> std::sync::Arc<str> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = &digest[..n.min(32)];
    let mut buf = [0u8; 96];
    let len = prefix.len() + 2 * digest.len();
    if len > buf.len() {
        use std::fmt::Write;
        let mut key = String::with_capacity(len);
        key.push_str(prefix);
        digest.iter().for_each(|b| {
            let _ = write!(key, "{b:02x}");
        });
        return key.into();
    }
    buf[..prefix.len()].copy_from_slice(prefix.as_bytes());
    for (i, b) in digest.iter().enumerate() {
        buf[prefix.len() + 2 * i] = HEX[usize::from(b >> 4)];
        buf[prefix.len() + 2 * i + 1] = HEX[usize::from(b & 0xf)];
    }
    // The prefix is a str and the rest is ASCII: always UTF-8.
    std::str::from_utf8(&buf[..len]).map_or_else(|_| prefix.into(), std::sync::Arc::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remembered_digest_is_the_digest_of_each_principal_however_they_interleave() {
        let principals: Vec<String> = (0..2 * REMEMBERED + 1).map(|i| format!("peer:10.0.0.{i}")).collect();
        for round in 0..3 {
            for (i, p) in principals.iter().enumerate() {
                // Revisit some at once (hits) and walk the rest (evictions).
                for p in [p, &principals[(i + round) % principals.len()], p] {
                    let want: [u8; 32] = Sha256::digest(p.as_bytes()).into();
                    assert_eq!(principal_digest(p), want, "{p} in round {round}");
                }
            }
        }
        // A prefix or an extension of a remembered principal is another principal.
        let _ = principal_digest("Bearer abc");
        let want: [u8; 32] = Sha256::digest(b"Bearer ab").into();
        assert_eq!(principal_digest("Bearer ab"), want);
        let want: [u8; 32] = Sha256::digest(b"Bearer abcd").into();
        assert_eq!(principal_digest("Bearer abcd"), want);
    }

    #[test]
    fn a_hex_key_is_the_prefix_and_the_leading_bytes_in_lower_hex() {
        let mut d = [0u8; 32];
        d[..3].copy_from_slice(&[0x0f, 0xa0, 0xff]);
        assert_eq!(&*hex_key("caller:", &d, 3), "caller:0fa0ff");
        assert_eq!(&*hex_key("", &d, 1), "0f");
        let long = "p".repeat(90);
        assert_eq!(&*hex_key(&long, &d, 3), format!("{long}0fa0ff"), "past the stack buffer");
    }
}
