//! One session's index of what it was shown that must not leave: winnowed shingles and fine
//! grams of private results, and exact tokens (secrets, `redact` hits) kept as hashes, each
//! tagged with where it came from. Past its bound a session forgets bulk text before a token
//! (an attacker who floods the index with filler must not push a secret out), and knows it forgot.

use std::ops::ControlFlow;

pub use super::print::{Print, Source, SourceKind, TokenPrint};
pub use super::shingle::ByHash;
use super::shingle::{self, FINE, HEAD, SHINGLE};

/// What a session may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Fingerprints (shingles, fine grams and tokens) per session.
    pub per_session: usize,
    /// Distinct sources (tool and kind) per session.
    pub sources: usize,
}

/// A token as held: its length and hash (the value itself is never kept), and its source.
#[derive(Debug, Clone, Copy)]
struct Held {
    len: u32,
    hash: u64,
    src: u16,
}

#[derive(Debug, Default)]
pub struct SessionIndex {
    shingles: ByHash<u16>,
    fine: ByHash<u16>,
    /// A token's head hash → the tokens starting so.
    heads: ByHash<Vec<Held>>,
    tokens: usize,
    sources: Vec<Source>,
    /// A bound was reached: what is held still refuses, the rest is the model rule's to judge.
    pub overflowed: bool,
    /// For eviction: the store's clock when last used.
    pub last_used: u64,
    /// What this session already sent to unallowed destinations ([`super::pieces`]).
    pub sent: super::pieces::Sent,
    /// E-mail addresses the session was shown, by whose content ([`super::provenance`]).
    pub learned: super::provenance::Learned,
    /// Entries of the shared store already merged ([`super::shared`]).
    pub merged: usize,
    /// The shared store could not be read at this call: what other replicas recorded cannot be
    /// ruled out (cleared by the next read that succeeds).
    pub unreachable: bool,
}

impl SessionIndex {
    /// Fingerprints held.
    pub fn len(&self) -> usize {
        self.shingles.len() + self.fine.len() + self.tokens
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn source(&mut self, p: &Print, b: Bounds) -> Option<u16> {
        if let Some(i) = self.sources.iter().position(|s| s.tool == p.source.tool && s.kind == p.source.kind)
        {
            self.sources[i].bytes += p.source.bytes;
            return Some(i as u16);
        }
        if self.sources.len() >= b.sources.min(u16::MAX as usize) {
            return None;
        }
        self.sources.push(p.source.clone());
        Some((self.sources.len() - 1) as u16)
    }

    /// Forgets one fingerprint of bulk text (a fine gram first, then a shingle) to make room
    /// for a token; false when there is none. The session then knows it forgot.
    fn forget_bulk(&mut self) -> bool {
        let victim = match self.fine.keys().next() {
            Some(&h) => self.fine.remove(&h),
            None => match self.shingles.keys().next() {
                Some(&h) => self.shingles.remove(&h),
                None => None,
            },
        };
        self.overflowed |= victim.is_some();
        victim.is_some()
    }

    /// Adds what `p` holds; `room` is what the store's total still allows. Tokens go first and
    /// push bulk text out when the session is full; bulk text past the bound is dropped. Either
    /// way a session that dropped anything is marked overflowed.
    pub fn add(&mut self, p: &Print, b: Bounds, mut room: usize) {
        if p.is_empty() {
            return;
        }
        let Some(src) = self.source(p, b) else {
            self.overflowed = true;
            return;
        };
        for t in &p.tokens {
            let known = self.heads.get(&t.head).is_some_and(|v| v.iter().any(|h| h.hash == t.hash));
            if known {
                continue;
            }
            if (self.len() >= b.per_session || room == 0) && !self.forget_bulk() {
                self.overflowed = true;
                break;
            }
            room = room.saturating_sub(1);
            self.heads.entry(t.head).or_default().push(Held { len: t.len, hash: t.hash, src });
            self.tokens += 1;
        }
        let mut held = self.len();
        for (set, prints) in [(&mut self.shingles, &p.shingles), (&mut self.fine, &p.fine)] {
            for &h in prints {
                if set.contains_key(&h) {
                    continue;
                }
                if held >= b.per_session || room == 0 {
                    self.overflowed = true;
                    break;
                }
                room -= 1;
                held += 1;
                set.insert(h, src);
            }
        }
    }

    /// Whether the session was shown a credential: a detector's secret or a `redact` hit.
    pub fn shown_credential(&self) -> bool {
        self.sources.iter().any(|s| matches!(s.kind, SourceKind::Secret(_) | SourceKind::Redacted))
    }

    /// The source of the first shingle or token `normalised` holds, if it holds one.
    pub fn find(&self, normalised: &[u8]) -> Option<&Source> {
        let mut found = None;
        if !self.shingles.is_empty() {
            shingle::windows(normalised, SHINGLE, |_, h| match self.shingles.get(&h) {
                Some(&s) => {
                    found = Some(s);
                    ControlFlow::Break(())
                }
                None => ControlFlow::Continue(()),
            });
        }
        if found.is_none() && !self.heads.is_empty() {
            shingle::windows(normalised, HEAD, |at, h| {
                let hit = self.heads.get(&h).into_iter().flatten().find_map(|t| {
                    let end = at.checked_add(t.len as usize)?;
                    let whole = normalised.get(at..end)?;
                    (shingle::hash_of(whole) == t.hash).then_some(t.src)
                });
                match hit {
                    Some(s) => {
                        found = Some(s);
                        ControlFlow::Break(())
                    }
                    None => ControlFlow::Continue(()),
                }
            });
        }
        found.map(|s| &self.sources[s as usize])
    }

    /// Adds to `hits` every fine gram `normalised` holds, with its source's index.
    pub fn fine_hits(&self, normalised: &[u8], hits: &mut ByHash<u16>) {
        if self.fine.is_empty() {
            return;
        }
        shingle::windows(normalised, FINE, |_, h| {
            if let Some(&s) = self.fine.get(&h) {
                hits.insert(h, s);
            }
            ControlFlow::Continue(())
        });
    }

    /// A source by its index (from [`Self::fine_hits`]).
    pub fn source_at(&self, i: u16) -> Option<&Source> {
        self.sources.get(i as usize)
    }
}

#[cfg(test)]
#[path = "index_tests.rs"]
mod tests;
