//! The post phase's side of the index: what a result showed the agent that must not leave —
//! the whole text of a private tool's result, the spans the local detectors mark as secrets in
//! any result, and the `redact` entries a result held — recorded under the call's session.

use std::sync::Arc;

use serde_json::Value;

use super::index::{Print, SourceKind};
use super::shingle::normalise_into;
use super::store::SessionKey;
use super::Flows;
use crate::call::ToolCall;
use crate::checker::detect;

/// Text of one result read for recording; past it the session is marked overflowed (what was
/// not read cannot be recognised later, so its sinks go to the model rule).
pub const RECORD_BUDGET: usize = 4 << 20;

/// The strings of a value, depth first, keys included, until `budget` bytes; false when the
/// budget ran out first.
pub(super) fn strings<'v>(v: &'v Value, budget: usize, each: &mut dyn FnMut(&'v str)) -> bool {
    let mut left = budget;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        let mut take = |s: &'v str| match s.len() <= left {
            true => {
                left -= s.len();
                each(s);
                true
            }
            false => false,
        };
        match v {
            Value::String(s) if !take(s) => return false,
            Value::Array(a) => stack.extend(a.iter().rev()),
            Value::Object(o) => {
                for (k, v) in o.iter().rev() {
                    if !take(k) {
                        return false;
                    }
                    stack.push(v);
                }
            }
            _ => {}
        }
    }
    true
}

/// What one result added to its session's index.
#[derive(Debug, Default)]
pub struct Recorded {
    pub prints: Vec<Print>,
    /// Part of the result was past the read budget and not recorded.
    pub forgot: bool,
}

impl Flows {
    /// Records what `result` (of `call`) showed the agent, and returns it (for the replicas,
    /// [`Flows::share`]). Nothing is stored for a result with nothing private in it.
    pub fn record(&self, call: &ToolCall, result: &Value, redact: &[String]) -> Recorded {
        let private = self.settings.is_private(&call.qualified);
        let mut text = Vec::new();
        let mut bytes = 0;
        let mut tokens: Vec<(Vec<u8>, usize, SourceKind)> = Vec::new();
        let mut addressed: Vec<&str> = Vec::new();
        let complete = strings(result, RECORD_BUDGET, &mut |s| {
            if s.contains('@') {
                addressed.push(s);
            }
            if private {
                normalise_into(s, &mut text);
                bytes += s.len();
            }
            // The secret detectors only: the others' findings are not kept here.
            for f in detect::scan_secrets(s) {
                if let Some(span) = s.get(f.span.clone()) {
                    let mut t = Vec::new();
                    normalise_into(span, &mut t);
                    tokens.push((t, span.len(), SourceKind::Secret(f.detector.into())));
                }
            }
            for r in redact.iter().filter(|r| s.contains(r.as_str())) {
                let mut t = Vec::new();
                normalise_into(r, &mut t);
                tokens.push((t, r.len(), SourceKind::Redacted));
            }
        });
        let tool: Arc<str> = call.qualified.as_str().into();
        if !addressed.is_empty() {
            let ix = self.store.entry(self.key(call));
            let mut ix = ix.lock().unwrap_or_else(|p| p.into_inner());
            for s in addressed {
                ix.learned.saw(s, &tool, private);
            }
        }
        if text.is_empty() && tokens.is_empty() && complete {
            return Recorded::default();
        }
        // Tokens first: a secret is worth more than bulk text, and pushes it out when full.
        let mut prints: Vec<Print> = Vec::new();
        let mut kinds: Vec<SourceKind> = Vec::new();
        for (_, _, k) in &tokens {
            if !kinds.contains(k) {
                kinds.push(k.clone());
            }
        }
        for kind in kinds {
            let of_kind = tokens.iter().filter(|(_, _, k)| *k == kind).map(|(t, n, _)| (&t[..], *n));
            prints.push(Print::tokens(&tool, &call.upstream, kind.clone(), of_kind));
        }
        if !text.is_empty() {
            prints.push(Print::text(&tool, &call.upstream, &text, bytes));
        }
        prints.retain(|p| !p.is_empty());
        self.add(self.key(call), &prints, !complete);
        Recorded { prints, forgot: !complete }
    }

    /// Adds `prints` to the session `key` (marked overflowed when `forgot`), keeping the
    /// store's total and the held gauge.
    pub(super) fn add(&self, key: SessionKey, prints: &[Print], forgot: bool) {
        if prints.is_empty() && !forgot {
            return;
        }
        let ix = self.store.entry(key);
        let mut ix = ix.lock().unwrap_or_else(|p| p.into_inner());
        let before = ix.len();
        for p in prints {
            let room = self.store.room().saturating_sub(ix.len().saturating_sub(before));
            ix.add(p, self.store.bounds.session, room);
        }
        ix.overflowed |= forgot;
        let after = ix.len();
        drop(ix);
        self.store.added(after.saturating_sub(before));
        self.metrics.held.set(i64::try_from(self.store.total()).unwrap_or(i64::MAX));
    }
}
