//! What one source adds to a session's index — its shingles, fine grams and token hashes —
//! computed once from normalised text, then added to this process's index and, when replicas
//! share a store, written there as is ([`super::shared`]). No recorded text is kept: hashes only.

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceKind {
    /// The result of a tool `flows.private` names.
    Private,
    /// A span a local detector marks as a secret (the detector's name).
    Secret(Arc<str>),
    /// A `redact` entry the result held.
    Redacted,
}

/// An exact token as the index holds it: the hash of its first [`HEAD`] normalised bytes, its
/// length and the hash of the whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenPrint {
    pub head: u64,
    pub len: u32,
    pub hash: u64,
}

impl TokenPrint {
    /// `None` for a token shorter than [`HEAD`] (too short to tell from ordinary text).
    pub fn of(normalised: &[u8]) -> Option<TokenPrint> {
        let len = u32::try_from(normalised.len()).ok()?;
        (normalised.len() >= HEAD).then(|| TokenPrint {
            head: shingle::hash_of(&normalised[..HEAD]),
            len,
            hash: shingle::hash_of(normalised),
        })
    }
}

/// What one source adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Print {
    pub source: Source,
    pub shingles: Vec<u64>,
    pub fine: Vec<u64>,
    pub tokens: Vec<TokenPrint>,
}

impl Print {
    fn new(tool: &Arc<str>, upstream: &Arc<str>, kind: SourceKind, bytes: usize) -> Print {
        Print {
            source: Source { tool: tool.clone(), upstream: upstream.clone(), kind, bytes },
            shingles: Vec::new(),
            fine: Vec::new(),
            tokens: Vec::new(),
        }
    }

    /// A private text (normalised; `bytes` as the agent saw it): its winnowed shingles and fine
    /// grams, or the whole as a token when it is shorter than a shingle.
    pub fn text(tool: &Arc<str>, upstream: &Arc<str>, normalised: &[u8], bytes: usize) -> Print {
        let mut p = Print::new(tool, upstream, SourceKind::Private, bytes);
        match normalised.len() < SHINGLE {
            true => p.tokens.extend(TokenPrint::of(normalised)),
            false => {
                p.shingles = shingle::winnowed(normalised);
                p.fine = shingle::fine(normalised);
            }
        }
        p
    }

    /// Exact tokens of one kind (normalised).
    pub fn tokens<'t>(
        tool: &Arc<str>,
        upstream: &Arc<str>,
        kind: SourceKind,
        tokens: impl IntoIterator<Item = (&'t [u8], usize)>,
    ) -> Print {
        let mut p = Print::new(tool, upstream, kind, 0);
        for (t, bytes) in tokens {
            if let Some(tp) = TokenPrint::of(t) {
                if !p.tokens.contains(&tp) {
                    p.tokens.push(tp);
                    p.source.bytes += bytes;
                }
            }
        }
        p
    }

    pub fn is_empty(&self) -> bool {
        self.shingles.is_empty() && self.fine.is_empty() && self.tokens.is_empty()
    }

    /// Fingerprints it holds.
    pub fn len(&self) -> usize {
        self.shingles.len() + self.fine.len() + self.tokens.len()
    }
}
