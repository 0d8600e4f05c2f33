//! One session's index of what it was shown that must not leave: winnowed shingles of private
//! results, and exact tokens (secrets, `redact` hits), each tagged with where it came from.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::ControlFlow;
use std::sync::Arc;

use super::shingle::{self, HEAD, SHINGLE};

/// Where recorded text came from, for the reason a refusal gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The qualified tool whose result held it (`mcp__mail__read_inbox`).
    pub tool: Arc<str>,
    pub upstream: Arc<str>,
    pub kind: SourceKind,
    /// Bytes of text recorded from this tool in this session.
    pub bytes: usize,
}

/// Why text was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// The result of a tool `flows.private` names.
    Private,
    /// A span a local detector marks as a secret (the detector's name).
    Secret(&'static str),
    /// A `redact` entry the result held.
    Redacted,
}

/// What a session may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Fingerprints (shingles and tokens) per session.
    pub per_session: usize,
    /// Distinct sources (tool and kind) per session.
    pub sources: usize,
}

/// The outcome of recording: kept, or the session is past a bound (and judged by the model
/// rule from now on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    Kept(usize),
    Overflowed,
}

/// The hashes are already mixed: hashing them again would be wasted work.
#[derive(Default)]
pub struct Identity(u64);

impl Hasher for Identity {
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

type ByHash<V> = HashMap<u64, V, BuildHasherDefault<Identity>>;

#[derive(Debug, Default)]
pub struct SessionIndex {
    shingles: ByHash<u16>,
    /// A token's head hash → the tokens starting so.
    heads: ByHash<Vec<u16>>,
    tokens: Vec<(Box<[u8]>, u16)>,
    sources: Vec<Source>,
    /// A bound was reached: what is held still refuses, the rest is the model rule's to judge.
    pub overflowed: bool,
    /// For eviction: the store's clock when last used.
    pub last_used: u64,
}

impl SessionIndex {
    /// Fingerprints held.
    pub fn len(&self) -> usize {
        self.shingles.len() + self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn source(
        &mut self,
        tool: &Arc<str>,
        upstream: &Arc<str>,
        kind: SourceKind,
        bytes: usize,
        b: Bounds,
    ) -> Option<u16> {
        if let Some(i) = self.sources.iter().position(|s| s.tool == *tool && s.kind == kind) {
            self.sources[i].bytes += bytes;
            return Some(i as u16);
        }
        if self.sources.len() >= b.sources.min(u16::MAX as usize) {
            return None;
        }
        self.sources.push(Source { tool: tool.clone(), upstream: upstream.clone(), kind, bytes });
        Some((self.sources.len() - 1) as u16)
    }

    /// Records a private text (already normalised; `bytes` as the agent saw it): its winnowed
    /// shingles, or the whole as a token when it is shorter than a shingle. At most `room`
    /// fingerprints are added (the store's total).
    pub fn add_text(
        &mut self,
        (tool, upstream, kind): (&Arc<str>, &Arc<str>, SourceKind),
        normalised: &[u8],
        bytes: usize,
        b: Bounds,
        room: usize,
    ) -> Added {
        if normalised.len() < SHINGLE {
            return self.add_token((tool, upstream, kind), normalised, bytes, b, room);
        }
        let Some(src) = self.source(tool, upstream, kind, bytes, b) else { return self.overflow() };
        let mut added = 0;
        for h in shingle::winnowed(normalised) {
            if self.shingles.contains_key(&h) {
                continue;
            }
            if self.len() >= b.per_session || added >= room {
                self.overflowed = true;
                return Added::Overflowed;
            }
            self.shingles.insert(h, src);
            added += 1;
        }
        Added::Kept(added)
    }

    /// Records an exact token (already normalised); shorter than [`HEAD`] is too short to tell
    /// from ordinary text and is not kept.
    pub fn add_token(
        &mut self,
        (tool, upstream, kind): (&Arc<str>, &Arc<str>, SourceKind),
        normalised: &[u8],
        bytes: usize,
        b: Bounds,
        room: usize,
    ) -> Added {
        if normalised.len() < HEAD || self.tokens.iter().any(|(t, _)| **t == *normalised) {
            return Added::Kept(0);
        }
        if self.len() >= b.per_session || room == 0 {
            return self.overflow();
        }
        let Some(src) = self.source(tool, upstream, kind, bytes, b) else { return self.overflow() };
        let id = self.tokens.len() as u16;
        if self.tokens.len() >= u16::MAX as usize {
            return self.overflow();
        }
        self.heads.entry(shingle::hash_of(&normalised[..HEAD])).or_default().push(id);
        self.tokens.push((normalised.into(), src));
        Added::Kept(1)
    }

    fn overflow(&mut self) -> Added {
        self.overflowed = true;
        Added::Overflowed
    }

    /// The source of the first fingerprint `normalised` holds, if it holds one.
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
                let hit = self.heads.get(&h).into_iter().flatten().find_map(|&id| {
                    let (token, src) = &self.tokens[id as usize];
                    normalised[at..].starts_with(token).then_some(*src)
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
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: Bounds = Bounds { per_session: 10_000, sources: 8 };

    fn norm(s: &str) -> Vec<u8> {
        let mut v = Vec::new();
        shingle::normalise_into(s, &mut v);
        v
    }

    fn tagged(tool: &str) -> (Arc<str>, Arc<str>) {
        (tool.into(), "up".into())
    }

    #[test]
    fn a_recorded_text_is_found_in_a_rewrapped_copy_and_not_in_other_text() {
        let mut ix = SessionIndex::default();
        let (t, u) = tagged("mcp__mail__read_inbox");
        let mail = "Dear Sam, the acquisition of Northwind closes on Friday at 4pm; keep it quiet until the press release.";
        ix.add_text((&t, &u, SourceKind::Private), &norm(mail), mail.len(), B, usize::MAX);
        let copy = "FYI:\n  the ACQUISITION of northwind closes on friday\n at 4pm -- keep it quiet";
        assert_eq!(ix.find(&norm(copy)).map(|s| &*s.tool), Some("mcp__mail__read_inbox"));
        assert!(ix.find(&norm("the weather on friday at 4pm looks fine for a walk in the park")).is_none());
    }

    #[test]
    fn a_token_is_found_inside_longer_text_and_a_short_one_is_not_kept() {
        let mut ix = SessionIndex::default();
        let (t, u) = tagged("mcp__vault__get");
        ix.add_token(
            (&t, &u, SourceKind::Secret("github_token")),
            &norm("ghp_abcdEFGH1234ijkl5678"),
            24,
            B,
            10,
        );
        assert_eq!(
            ix.find(&norm("token=GHP-ABCDefgh1234IJKL5678&x=1")).map(|s| s.kind),
            Some(SourceKind::Secret("github_token"))
        );
        assert!(ix.find(&norm("ghp_abcdEFGH1234ijkl")).is_none(), "a prefix is not the token");
        assert_eq!(ix.add_token((&t, &u, SourceKind::Redacted), b"short", 5, B, 10), Added::Kept(0));
    }

    #[test]
    fn the_per_session_bound_overflows_and_keeps_what_it_holds() {
        let mut ix = SessionIndex::default();
        let (t, u) = tagged("mcp__files__read");
        let small = Bounds { per_session: 3, sources: 8 };
        let text: String = (0..400).map(|i| char::from(b'a' + (i * 7 % 26) as u8)).collect();
        assert_eq!(
            ix.add_text((&t, &u, SourceKind::Private), text.as_bytes(), 400, small, usize::MAX),
            Added::Overflowed
        );
        assert!(ix.overflowed);
        assert_eq!(ix.len(), 3);
    }

    proptest::proptest! {
        #[test]
        fn a_copy_is_found_however_it_is_rewrapped_punctuated_or_cased(
            text in "[a-z0-9]{47,300}",
            seps in proptest::collection::vec(0usize..5, 300),
            upper in proptest::bool::ANY,
        ) {
            let mut ix = SessionIndex::default();
            let (t, u) = tagged("mcp__mail__read");
            ix.add_text((&t, &u, SourceKind::Private), text.as_bytes(), text.len(), B, usize::MAX);
            let mut copy = String::from("see: ");
            for (c, sep) in text.chars().zip(seps.iter().cycle()) {
                copy.push(if upper { c.to_ascii_uppercase() } else { c });
                copy.push_str(["", " ", "\n  ", "-", ", "][*sep]);
            }
            proptest::prop_assert!(ix.find(&norm(&copy)).is_some(), "{copy}");
        }

        #[test]
        fn no_text_makes_recording_or_finding_panic(a in proptest::prelude::any::<String>(), b in proptest::prelude::any::<String>()) {
            let mut ix = SessionIndex::default();
            let (t, u) = tagged("x");
            ix.add_text((&t, &u, SourceKind::Private), &norm(&a), a.len(), B, usize::MAX);
            ix.add_token((&t, &u, SourceKind::Redacted), &norm(&b), b.len(), B, 10);
            let _ = ix.find(&norm(&b));
            let mut budget = 1 << 16;
            for d in super::super::decode::decodings(b.as_bytes(), &mut budget) {
                let mut n = Vec::new();
                shingle::normalise_bytes_into(&d, &mut n);
                let _ = ix.find(&n);
            }
        }
    }

    #[test]
    fn sources_past_their_bound_overflow() {
        let mut ix = SessionIndex::default();
        let one = Bounds { per_session: 100, sources: 1 };
        let (a, u) = tagged("a");
        let (b, _) = tagged("b");
        assert_eq!(
            ix.add_token((&a, &u, SourceKind::Private), b"aaaaaaaaaaaaaaa", 15, one, 10),
            Added::Kept(1)
        );
        assert_eq!(
            ix.add_token((&b, &u, SourceKind::Private), b"bbbbbbbbbbbbbbb", 15, one, 10),
            Added::Overflowed
        );
    }
}
