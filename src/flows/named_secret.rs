//! What a destination the user's own task names may still not receive: a credential the session
//! was shown (a detector's secret, a `redact` hit). The user meant their text to go there; an
//! injection can aim at the very recipient the user named, and no task excuses a credential.

use serde_json::Value;

use super::check::Flow;
use super::index::{SessionIndex, SourceKind};
use super::shingle::{normalise_bytes_into, normalise_into};
use super::{decode, Flows, Judged};
use crate::call::ToolCall;

/// The bytes the scan reads at most, decodings included (as the flow scan's budget).
const BUDGET: usize = 4 << 20;

impl Flows {
    /// A refusal when `args`, as written, reversed or decoded, hold a secret or `redact` token the
    /// session's index keeps; `None` otherwise.
    pub(super) fn secret_to_named(&self, ix: &SessionIndex, call: &ToolCall, args: &Value) -> Option<Flow> {
        let credential =
            |s: &super::index::Source| matches!(s.kind, SourceKind::Secret(_) | SourceKind::Redacted);
        let mut budget = BUDGET;
        let mut buf = Vec::new();
        let mut found = None;
        super::record::strings(args, usize::MAX, &mut |s| {
            if found.is_some() {
                return;
            }
            buf.clear();
            normalise_into(s, &mut buf);
            found = ix.find_token(&buf, credential).cloned();
            if found.is_none() {
                let reversed: String = s.chars().rev().collect();
                buf.clear();
                normalise_into(&reversed, &mut buf);
                found = ix.find_token(&buf, credential).cloned();
            }
            for d in decode::decodings(s.as_bytes(), &mut budget) {
                if found.is_some() {
                    break;
                }
                buf.clear();
                normalise_bytes_into(&d, &mut buf);
                found = ix.find_token(&buf, credential).cloned();
            }
        });
        let source = found?;
        self.metrics.judged(Judged::Leak);
        let what = match &source.kind {
            SourceKind::Secret(detector) => format!("a secret ({detector}) shown by {}", source.tool),
            _ => format!("a redacted value held by a result of {}", source.tool),
        };
        let reason = format!(
            "{what} is in the arguments of {}: the user's task names where this goes, which lets the \
             user's own text go there, never a credential the session was shown",
            call.qualified
        );
        Some(Flow::Refuse { judged: Judged::Leak, rule: format!("flows: {}", source.tool), reason })
    }
}
