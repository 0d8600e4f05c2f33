//! The pre phase's side of the index: a call with outward reach (a configured sink, a fetch
//! tool, a shell line that connects) from a session that read something private is scanned for
//! it — every argument string as written, decoded ([`super::decode`]), reversed, and all of them
//! joined (a copy split across arguments) — and a copy bound for a destination no egress rule
//! allows is a [`Flow::Refuse`], before any model.

use std::ops::ControlFlow;

use serde_json::Value;

use super::decide::Watched;
use super::index::{SessionIndex, Source, SourceKind};
use super::pieces::Sending;
use super::shingle::{normalise_bytes_into, normalise_into};
use super::store::Lookup;
use super::Judged;
use super::{decode, Flows};
use crate::call::ToolCall;
use crate::config::flows::TaskNames;
use crate::intent::named::Named;
use crate::rules::destination::HostMatch;
use crate::rules::egress::scan::{self, Found, What};
use crate::rules::egress::{Egress, Outward, Reach};
use crate::rules::{Effect, Engine};

/// Bytes of argument text (as written and decoded) scanned per call; a call past it from a
/// session that read something private is refused as unscannable.
pub const SCAN_BUDGET: usize = 4 << 20;

/// What the flow check makes of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flow {
    /// Nothing private read, no outward reach, every destination allowed, or no copy found.
    Clear,
    /// Refused (or asked, by `flows.mode`, or because the user's words ask for the send and
    /// `flows.task` is `ask`): the reason names the source, the argument and the destination.
    Refuse { judged: Judged, rule: String, reason: String, ask: bool },
    /// The session forgot part of what it read: the model rule judges the call.
    ToModel { reason: String },
}

/// How a copy was found, for the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spelling {
    AsWritten,
    Decoded,
    Reversed,
    Joined,
    /// Joined to what the same argument sent in the session's earlier calls.
    Pieces,
}

impl Flows {
    /// The flow check of `call` with `args` (its session as [`Flows::watch`] found it), under
    /// `engine`'s egress rules and tool kinds.
    pub fn check(&self, watched: Watched, call: &ToolCall, args: &Value, engine: &Engine) -> Flow {
        let (ix, evicted) = match watched.0 {
            Lookup::Nothing => return Flow::Clear,
            Lookup::Held(ix) => (Some(ix), false),
            Lookup::Evicted => (None, true),
        };
        let egress = engine.egress();
        let reach = Reach::of(engine.kinds(), egress, &call.upstream, &call.qualified, args, None);
        if !matches!(reach, Reach::Outward(_)) {
            return Flow::Clear;
        }
        // The user's own task (never the agent's: `call.task`) may name where a send goes — in
        // a session that was shown no credential (a detector's secret, a `redact` hit). Once it
        // was, the excuse is withdrawn and every destination is judged as if nobody named it: an
        // injection can aim at the very recipient the user named, and a credential matched only
        // whole (split across arguments or calls, filler inserted) would otherwise leave by the
        // excuse where the full scan below refuses it (red team R9-1, R9-2, R9-4). An evicted
        // session may have been shown one.
        // Asked only when there is a user's task: the index is locked once more, not on every call.
        let shown_credential = || {
            evicted
                || ix
                    .as_ref()
                    .is_some_and(|ix| ix.lock().unwrap_or_else(|p| p.into_inner()).shown_credential())
        };
        // A front's list always excuses; what the prompts' words ask for, as `flows.task` says:
        // excused (`allow`), or a refusal becomes an ask that says so (`ask`: the words are read
        // by a reader of free text, which a pasted message can still fool — a person confirms).
        let task = call.user_task.as_deref().filter(|t| !(t.named.is_empty() && t.listed.is_empty()));
        let task = task.filter(|_| !shown_credential());
        let listed = task.map(|t| &t.listed).filter(|n| !n.is_empty());
        let words = task.map(|t| &t.named).filter(|n| !n.is_empty() && self.settings.task != TaskNames::Off);
        let both = [listed, words];
        let excusing: &[Option<&Named>] = match self.settings.task {
            TaskNames::Allow => &both,
            _ => &both[..1],
        };
        let Some(bound_for) = unallowed(egress, &call.upstream, args, &reach, excusing) else {
            return Flow::Clear;
        };
        // Under `ask`, a refusal the words would have excused is asked instead.
        let asked = self.settings.task == TaskNames::Ask
            && words.is_some()
            && unallowed(egress, &call.upstream, args, &reach, &both).is_none();
        let refuse = |judged: Judged, rule: String, reason: String| Flow::Refuse {
            judged,
            rule,
            reason: match asked {
                true => format!("{reason}; the user's own task asks for a send there, so a person confirms"),
                false => reason,
            },
            ask: asked,
        };
        let mut ix = ix.as_ref().map(|ix| ix.lock().unwrap_or_else(|p| p.into_inner()));
        let overflowed = evicted || ix.as_ref().is_some_and(|ix| ix.overflowed);
        let unreachable = ix.as_ref().is_some_and(|ix| ix.unreachable);
        if let Some(ix) = ix.as_deref_mut().filter(|ix| !ix.is_empty()) {
            let (scan, sending) = scan_args(ix, args);
            match scan {
                Scan::Found(source, pointer, spelling) => {
                    self.metrics.judged(Judged::Leak);
                    let rule = format!("flows: {}", source.tool);
                    let reason = leak_reason(&source, &pointer, spelling, &call.qualified, &bound_for);
                    return refuse(Judged::Leak, rule, reason);
                }
                Scan::TooLarge => {
                    self.metrics.judged(Judged::Unscanned);
                    let reason = format!(
                        "its arguments are too large to scan for the private text this session read \
                         (past {} MiB), and {} sends them to {bound_for}",
                        SCAN_BUDGET >> 20,
                        call.qualified
                    );
                    return refuse(Judged::Unscanned, "flows: unscanned".into(), reason);
                }
                Scan::Clean => {}
            }
            if let Some((n, src)) = ix.sent.too_many(&sending) {
                let tool = ix.source_at(src).map_or("a private tool", |s| &s.tool).to_owned();
                self.metrics.judged(Judged::Leak);
                let reason = format!(
                    "pieces of text from {tool} leave in {}: with this call, {n} distinct runs of \
                     the private text this session read would have gone to destinations no egress \
                     rule allows (at most {} may); this one is to {bound_for}",
                    call.qualified,
                    super::pieces::PIECES - 1,
                );
                return refuse(Judged::Leak, format!("flows: pieces of {tool}"), reason);
            }
            ix.sent.went(sending);
        }
        if let Some(ix) = ix.as_deref() {
            // An address is the user's, not a stranger's, where what excuses names it (a front's
            // list; the words' requests under `flows.task: allow`) — never because the task text
            // merely mentions it (red team R11-1); under `ask` such a refusal is asked.
            let named = |a: &str| excusing.iter().flatten().any(|n| n.names_mailbox(a));
            if let Some((address, tool)) = ix.learned.from_strangers(&args.to_string(), named) {
                self.metrics.judged(Judged::Leak);
                let reason = format!(
                    "{} sends to {address}, an address this session learned only from the result of \
                     {tool} (content that is not the user's own: its author chose the destination), \
                     bound for {bound_for}, which no egress rule allows",
                    call.qualified
                );
                return refuse(Judged::Leak, format!("flows: destination from {tool}"), reason);
            }
        }
        if unreachable {
            self.metrics.judged(Judged::Overflowed);
            let reason = format!(
                "the state store that shares the flow index between replicas cannot be read, so a \
                 copy of private text this caller read through another replica in {} to {bound_for} \
                 cannot be ruled out",
                call.qualified
            );
            return Flow::ToModel { reason };
        }
        if overflowed {
            self.metrics.judged(Judged::Overflowed);
            let reason = format!(
                "this session read more private text than the flow index holds, so a copy of it in \
                 {} to {bound_for} cannot be ruled out",
                call.qualified
            );
            return Flow::ToModel { reason };
        }
        Flow::Clear
    }
}

/// The first destination of the call that no egress `allow` surely names (or that a deny or
/// ask may name), described; `None` when every one is allowed. A destination the user's own
/// task names ([`Named`]) counts as allowed unless a deny or ask may name it. A call with
/// outward reach that names no destination sends wherever the tool sends, which no rule allows.
fn unallowed(
    egress: &Egress,
    upstream: &str,
    args: &Value,
    reach: &Reach,
    named: &[Option<&Named>],
) -> Option<String> {
    let mine = |r: &&crate::rules::egress::EgressRule| r.upstream.as_deref().is_none_or(|u| u == upstream);
    let allowed = |found: &Found, within: &str| {
        let rules = || egress.rules.iter().filter(mine);
        let refused =
            || rules().any(|r| r.effect > Effect::Allow && r.target.matches(&found.what) != HostMatch::No);
        let excused = named.iter().flatten().any(|n| n.names(found, within));
        (excused
            || rules().any(|r| r.effect == Effect::Allow && r.target.matches(&found.what) == HostMatch::Yes))
            && !refused()
    };
    let mut any = false;
    let mut first: Option<String> = None;
    let mut judge = |found: Found, within: &str| {
        any = true;
        match allowed(&found, within) {
            true => ControlFlow::Continue(()),
            false => {
                first = Some(destination(&found));
                ControlFlow::Break(())
            }
        }
    };
    if let Reach::Outward(Outward::Shell(dests)) = reach {
        for d in dests {
            if judge(d.clone(), "").is_break() {
                return first;
            }
        }
    }
    // Every string (keys too), each with the string a destination was found in. No budget of
    // its own, as egress's walk has none: linear in the arguments, which the body limit bounds.
    let mut stopped = false;
    super::record::strings(args, usize::MAX, &mut |s| {
        if !stopped {
            stopped = scan::text(s, &String::new, &mut |f: Found| judge(f, s)).is_break();
        }
    });
    match (first, any) {
        (Some(d), _) => Some(d),
        (None, true) => None,
        (None, false) => {
            Some("wherever it sends (no destination in its arguments that egress allows)".into())
        }
    }
}

fn destination(found: &Found) -> String {
    match &found.what {
        What::Url { text, reading } => match reading.destinations().first() {
            Some(d) => d.host.to_string(),
            None => text.chars().take(80).collect(),
        },
        What::Host(h) | What::Email(h) => h.to_string(),
        What::Iban(_) => "a bank account".into(),
    }
}

enum Scan {
    Clean,
    Found(Source, String, Spelling),
    TooLarge,
}

/// The scan's state: the index, the bytes it may still read, every string normalised and
/// joined (for a copy split across arguments), and what the call would add to what the session
/// sent ([`super::pieces`]).
struct Scanner<'a> {
    ix: &'a SessionIndex,
    budget: usize,
    joined: Vec<u8>,
    buf: Vec<u8>,
    sending: Sending,
}

impl Scanner<'_> {
    /// One normalised spelling of the string at `at`: a shingle or token, else its fine grams.
    fn spelling(&mut self, at: &str, spelling: Spelling) -> Option<(Source, String, Spelling)> {
        if let Some(src) = self.ix.find(&self.buf) {
            return Some((src.clone(), at.to_owned(), spelling));
        }
        self.ix.fine_hits(&self.buf, &mut self.sending.grams);
        None
    }

    /// One string: joined to what its argument sent last, as written, reversed, then each
    /// decoding.
    fn one(&mut self, s: &str, at: &str) -> Option<(Source, String, Spelling)> {
        self.budget = self.budget.saturating_sub(s.len());
        self.buf.clear();
        normalise_into(s, &mut self.buf);
        self.joined.extend_from_slice(&self.buf);
        if let Some(found) = self.spelling(at, Spelling::AsWritten) {
            return Some(found);
        }
        let pieces = self.ix.sent.joined(at, &self.buf);
        self.sending.tail(at, &pieces);
        if pieces.len() > self.buf.len() {
            self.buf = pieces;
            if let Some(found) = self.spelling(at, Spelling::Pieces) {
                return Some(found);
            }
        }
        let reversed: String = s.chars().rev().collect();
        self.buf.clear();
        normalise_into(&reversed, &mut self.buf);
        if let Some(found) = self.spelling(at, Spelling::Reversed) {
            return Some(found);
        }
        for d in decode::decodings(s.as_bytes(), &mut self.budget) {
            self.buf.clear();
            normalise_bytes_into(&d, &mut self.buf);
            if let Some(found) = self.spelling(at, Spelling::Decoded) {
                return Some(found);
            }
        }
        None
    }
}

/// Every string of `args` (keys too), as written, decoded and reversed; then all of them joined.
fn scan_args(ix: &SessionIndex, args: &Value) -> (Scan, Sending) {
    let mut sc =
        Scanner { ix, budget: SCAN_BUDGET, joined: Vec::new(), buf: Vec::new(), sending: Sending::default() };
    let mut stack: Vec<(&Value, String)> = vec![(args, String::new())];
    while let Some((v, at)) = stack.pop() {
        let found = match v {
            Value::String(s) => sc.one(s, &at),
            Value::Array(a) => {
                stack.extend(a.iter().enumerate().rev().map(|(i, v)| (v, format!("{at}/{i}"))));
                None
            }
            Value::Object(o) => {
                let mut f = None;
                for (k, v) in o.iter().rev() {
                    let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                    if f.is_none() {
                        f = sc.one(k, &here);
                    }
                    stack.push((v, here));
                }
                f
            }
            _ => None,
        };
        if let Some((src, at, sp)) = found {
            return (Scan::Found(src, at, sp), sc.sending);
        }
        if sc.budget == 0 {
            return (Scan::TooLarge, sc.sending);
        }
    }
    let found = ix.find(&sc.joined).or_else(|| {
        sc.joined.reverse();
        ix.find(&sc.joined)
    });
    match found {
        Some(src) => (Scan::Found(src.clone(), String::new(), Spelling::Joined), sc.sending),
        None => (Scan::Clean, sc.sending),
    }
}

fn leak_reason(source: &Source, pointer: &str, spelling: Spelling, sink: &str, bound_for: &str) -> String {
    let what = match &source.kind {
        SourceKind::Private => {
            format!("text from {}, {} bytes read this session,", source.tool, source.bytes)
        }
        SourceKind::Secret(detector) => format!("a secret ({detector}) shown by {}", source.tool),
        SourceKind::Redacted => format!("a redacted value held by a result of {}", source.tool),
    };
    let place = match (pointer, spelling) {
        (_, Spelling::Joined) => "split across the arguments".to_owned(),
        ("", _) => "in the arguments".to_owned(),
        (p, Spelling::AsWritten) => format!("in argument {p}"),
        (p, Spelling::Decoded) => format!("encoded in argument {p}"),
        (p, Spelling::Reversed) => format!("reversed in argument {p}"),
        (p, Spelling::Pieces) => format!("in pieces across calls, ending in argument {p}"),
    };
    format!(
        "{what} is {place} of {sink} to {bound_for}, which no egress rule allows; private results \
         leave only for destinations `egress: {{allow: [...]}}` names"
    )
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
