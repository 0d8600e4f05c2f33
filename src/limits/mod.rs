//! `limits.per_agent`: calls a minute, calls at once and calls a UTC day, per agent and tool
//! pattern, checked at the one door ([`crate::gate::pre::judge`]) after everything else has let a
//! call through — so a call refused for any other reason spends no budget.
//!
//! Who is counted: a configured agent by its name (a delegated agent by its root's: minting
//! children does not multiply a budget), an anonymous caller by its digest. Calls a minute and a
//! day are counted in the state store when one is configured, so replicas share them; a store
//! that does not answer within `state.timeout` (or is known down) leaves each replica enforcing
//! the limits on its own counters — never open, never closed for everyone — counted in
//! `portcullis_rate_limit_store_fallbacks_total` and logged once per outage. Calls at once are
//! this replica's: a place is held by a [`Permit`] that rides with the call until it is done.

pub mod local;
mod shared;
pub mod window;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use prometheus::IntCounter;

use crate::call::ToolCall;
use crate::config::per_agent_limits::{AgentSelector, PerAgentLimit};
use crate::telemetry::Metrics;
pub use local::Permit;
use local::Subjects;
use shared::{SharedWindows, Window};
use window::Span;

/// Which bound refused a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    PerMinute,
    Concurrent,
    PerDay,
}

impl Bound {
    pub const ALL: [Bound; 3] = [Bound::PerMinute, Bound::Concurrent, Bound::PerDay];

    /// The config key, and the metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            Bound::PerMinute => "per_minute",
            Bound::Concurrent => "concurrent",
            Bound::PerDay => "per_day",
        }
    }

    /// How the refusal says it (`30 calls a minute`).
    pub fn per(self) -> &'static str {
        match self {
            Bound::PerMinute => "a minute",
            Bound::Concurrent => "at once",
            Bound::PerDay => "a day (UTC)",
        }
    }

    fn of(span: Span) -> Bound {
        match span {
            Span::Minute => Bound::PerMinute,
            Span::Day => Bound::PerDay,
        }
    }
}

/// A call a limit refused: which entry and bound, and when to try again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limited {
    /// The entry's index in `limits.per_agent`.
    pub entry: usize,
    pub bound: Bound,
    pub limit: u32,
    /// The entry's `tool` pattern, as configured.
    pub tool: String,
    /// Seconds until a place frees: the rest of the window; 1 for calls at once.
    pub retry_after: u64,
}

/// A call some entries apply to: its places at once taken, its windows still to count.
struct Pending<'c> {
    subject: Arc<local::Subject>,
    key: &'c str,
    permit: Permit,
    windows: Vec<Window>,
}

/// An entry's `tool` pattern, matched without the general matcher when its shape allows (the
/// common `prefix*` and `*`): the allow path then allocates nothing to match.
#[derive(Debug)]
enum ToolMatch {
    Any,
    Prefix(Box<str>),
    Exact(Box<str>),
    Glob(crate::rules::glob::Glob),
}

impl ToolMatch {
    fn of(glob: &crate::rules::glob::Glob) -> ToolMatch {
        let wild = |t: &str| t.contains(['*', '?', '\\']);
        let p = glob.as_str();
        match p.strip_suffix('*') {
            _ if !p.is_empty() && p.chars().all(|c| c == '*') => ToolMatch::Any,
            Some(prefix) if !wild(prefix) => ToolMatch::Prefix(prefix.into()),
            _ if !wild(p) => ToolMatch::Exact(p.into()),
            _ => ToolMatch::Glob(glob.clone()),
        }
    }

    fn matches(&self, name: &str) -> bool {
        match self {
            ToolMatch::Any => true,
            ToolMatch::Prefix(p) => name.starts_with(&**p),
            ToolMatch::Exact(e) => name == &**e,
            ToolMatch::Glob(g) => g.matches(name),
        }
    }
}

#[derive(Debug)]
struct Entry {
    spec: PerAgentLimit,
    tool: ToolMatch,
    /// Refusals by [`Bound`], for the bounds the entry sets.
    refused: [Option<IntCounter>; 3],
}

/// The limiter: built once at start (limits are not reloaded), shared by every transport.
#[derive(Debug)]
pub struct Limiter {
    entries: Vec<Entry>,
    /// The `agent: "*"` entries.
    each: Vec<usize>,
    /// Each named agent's own entries (which replace the `"*"` ones for it).
    named: HashMap<Arc<str>, Vec<usize>>,
    agents: Subjects,
    callers: Subjects,
    shared: Option<SharedWindows>,
    metrics: Option<Arc<Metrics>>,
    /// Set while checks fall back to this replica's counters (logged once per outage).
    fell_back: AtomicBool,
}

impl Default for Limiter {
    fn default() -> Self {
        Limiter::new(&[], None, None)
    }
}

/// The subject of an anonymous call with no caller (one stdio client).
const ANONYMOUS: &str = "anonymous";

impl Limiter {
    /// The limiter for `limits`, sharing windows through `store` when given.
    pub fn new(
        limits: &[PerAgentLimit],
        store: Option<Arc<crate::state::RedisStore>>,
        metrics: Option<Arc<Metrics>>,
    ) -> Limiter {
        let mut each = Vec::new();
        let mut named: HashMap<Arc<str>, Vec<usize>> = HashMap::new();
        let entries: Vec<Entry> = limits
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                match &spec.agent {
                    AgentSelector::Each => each.push(i),
                    AgentSelector::Named(n) => named.entry(n.clone()).or_default().push(i),
                }
                let set = [spec.per_minute, spec.concurrent, spec.per_day];
                let refused = std::array::from_fn(|b| {
                    let (m, bound) = (metrics.as_ref()?, Bound::ALL[b]);
                    set[b].map(|_| m.limits.refused(spec.agent.as_str(), spec.tool.as_str(), bound.as_str()))
                });
                Entry { spec: spec.clone(), tool: ToolMatch::of(&spec.tool), refused }
            })
            .collect();
        let shared = store.filter(|_| !entries.is_empty()).map(|s| {
            let keys = entries.iter().map(|e| shared::entry_key(e.spec.agent.as_str(), e.spec.tool.as_str()));
            SharedWindows::new(s, keys.collect())
        });
        Limiter {
            agents: Subjects::new(entries.len()),
            callers: Subjects::new(entries.len()),
            entries,
            each,
            named,
            shared,
            metrics,
            fell_back: AtomicBool::new(false),
        }
    }

    /// Whether any entry bounds calls at once (a transport relaying an answer as it streams then
    /// holds the call until the answer is through).
    pub fn holds_places(&self) -> bool {
        self.entries.iter().any(|e| e.spec.concurrent.is_some())
    }

    /// Admits `call` under every entry that applies to it — the calling agent's own entries, else
    /// the `"*"` ones, whose pattern matches its name — counting it in each, or says which
    /// bound refused it (and counts nothing).
    pub async fn admit(&self, call: &ToolCall) -> Result<Permit, Limited> {
        if self.entries.is_empty() {
            return Ok(Permit::default());
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        self.admit_at(call, now).await
    }

    async fn admit_at(&self, call: &ToolCall, now: u64) -> Result<Permit, Limited> {
        let Pending { subject, key, permit, windows } = match self.places(call, now)? {
            Some(p) => p,
            None => return Ok(Permit::default()),
        };
        if windows.is_empty() {
            return Ok(permit);
        }
        let full = match &self.shared {
            // Boxed: the store's future is large, and the local path should not carry it.
            Some(_) => Box::pin(self.shared_take(call, key, &windows)).await,
            None => None,
        };
        let full = match full {
            Some(full) => {
                if full.is_none() {
                    // This replica's share, for when the store is away.
                    windows.iter().for_each(|w| window::add(subject.slot(w.entry).word(w.span), w.number));
                }
                full
            }
            None => local_take(&subject, &windows),
        };
        match full {
            None => Ok(permit),
            Some(w) => {
                let w = windows[w];
                Err(self.refused(w.entry, Bound::of(w.span), w.limit, w.span.retry_after(now)))
            }
        }
    }

    /// The entries that apply to `call` (`None`: none does), with their places at once taken
    /// and the windows the call is to be counted in.
    fn places<'c>(&self, call: &'c ToolCall, now: u64) -> Result<Option<Pending<'c>>, Limited> {
        let set = match &call.agent {
            Some(a) => self.named.get(&a.name).unwrap_or(&self.each),
            None => &self.each,
        };
        let mut hits =
            set.iter().copied().filter(|&i| self.entries[i].tool.matches(&call.qualified)).peekable();
        if hits.peek().is_none() {
            return Ok(None);
        }
        let (subjects, key) = match (&call.agent, call.caller.as_deref()) {
            (Some(a), _) => (&self.agents, &*a.name),
            (None, caller) => (&self.callers, caller.unwrap_or(ANONYMOUS)),
        };
        let subject = subjects.get(key, now);
        let mut permit = Permit::default();
        let mut windows = Vec::new();
        for i in hits {
            let spec = &self.entries[i].spec;
            if let Some(limit) = spec.concurrent {
                if !permit.take(&subject, i, limit.get()) {
                    return Err(self.refused(i, Bound::Concurrent, limit.get(), 1));
                }
            }
            for (span, limit) in [(Span::Minute, spec.per_minute), (Span::Day, spec.per_day)] {
                if let Some(l) = limit {
                    windows.push(Window { entry: i, span, number: span.window(now), limit: l.get() });
                }
            }
        }
        Ok(Some(Pending { subject, key, permit, windows }))
    }

    /// The shared store's answer (`Some(None)`: counted; `Some(Some(i))`: window `i` is full), or
    /// `None` when there is no store or it did not answer (decide locally).
    async fn shared_take(&self, call: &ToolCall, key: &str, windows: &[Window]) -> Option<Option<usize>> {
        let shared = self.shared.as_ref()?;
        let answer = match shared.up() {
            // Known down: not waited on; the health check notices its return.
            false => Err(crate::state::StoreError::Unavailable("known down".into())),
            true => {
                let subject = match call.agent {
                    Some(_) => format!("agent:{key}"),
                    None => key.to_owned(),
                };
                shared.take(&subject, windows).await
            }
        };
        match answer {
            Ok(full) => {
                if self.fell_back.swap(false, Ordering::Relaxed) {
                    tracing::info!("rate limits are shared through the state store again");
                }
                Some(full)
            }
            Err(e) => {
                if let Some(m) = &self.metrics {
                    m.limits.fallback();
                }
                if !self.fell_back.swap(true, Ordering::Relaxed) {
                    tracing::warn!(error = %e, "rate limits fall back to this replica's own counters until the state store answers");
                }
                None
            }
        }
    }

    fn refused(&self, entry: usize, bound: Bound, limit: u32, retry_after: u64) -> Limited {
        let e = &self.entries[entry];
        if let Some(c) = &e.refused[bound as usize] {
            c.inc();
        }
        Limited { entry, bound, limit, tool: e.spec.tool.as_str().to_owned(), retry_after }
    }
}

/// Counts the call in every window on this replica's counters, or in none: the index of the
/// first full one.
fn local_take(subject: &local::Subject, windows: &[Window]) -> Option<usize> {
    for (i, w) in windows.iter().enumerate() {
        if !window::take(subject.slot(w.entry).word(w.span), w.number, w.limit) {
            windows[..i].iter().for_each(|t| window::give_back(subject.slot(t.entry).word(t.span), t.number));
            return Some(i);
        }
    }
    None
}

#[cfg(test)]
mod tests;
