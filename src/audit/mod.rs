//! The audit log: one JSON line per decision — a call decided before it runs (`pre`), a result
//! decided on its way back (`post`), an ask a human decided (`approval`) — to stdout or a file
//! rotated by size. Arguments and results are never written raw: a digest (SHA-256 of the
//! canonical JSON, 16 bytes hex) and a short preview in which every secret the local detectors
//! find is masked. Refusal reasons are written exactly as the agent read them.
//!
//! Writing is a dedicated thread behind a bounded queue: the proxy never waits on the disk. When
//! the queue is full a line is dropped and counted (`audit_dropped_total`), never blocked on.
//! The last few entries are kept in memory for the operator console (`GET /decisions`).
//!
//! A call's lines carry its decision id ([`crate::decision`]); a refusal's or an ask's pre-call
//! line also carries why ([`why::Why`], masked like a preview), and every pre-call line the
//! policy version. The latest lines with an id are kept for `portcullis explain`
//! ([`Audit::explained`]) — refusals and asks even when no line is written — and each line is
//! handed to the live tap's subscribers ([`tap::Tap`]).

#[cfg(test)]
mod explained_tests;
mod ring;
mod sink;
pub mod tap;
pub mod why;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::checker::detect::{self, Direction};
use crate::decision::DecisionId;
use crate::rules::kinds::canonical_json;
use crate::telemetry::Metrics;

pub use crate::config::audit::{Destination, Settings};

/// Characters of arguments or results shown in a preview.
const PREVIEW: usize = 160;
/// Lines waiting for the writer at most.
const QUEUE: usize = 8_192;

/// Which decision a line records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    Pre,
    Post,
    Approval,
    /// A shadow judgement beside the enforced one (never enforced).
    Shadow,
}

/// One judgement on a `shadow` line: which rubric and model, and what it said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Judged {
    /// `name@version`.
    pub rubric: String,
    pub model: String,
    /// `safe`, `unsafe` or `failed`.
    pub verdict: &'static str,
    /// Why unsafe (the checker's words, shortened), or why no verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Both judgements of a shadowed check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShadowVerdicts {
    pub enforced: Judged,
    pub shadow: Judged,
}

/// One decision, as the code that made it knows it.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    pub phase: Stage,
    pub upstream: &'a str,
    pub tool: &'a str,
    pub session: Option<&'a str>,
    /// The authenticated agent, when agents are configured.
    pub agent: Option<&'a crate::identity::Agent>,
    /// The metrics label of what happened (`forwarded`, `denied`, `blocked`, `allow_once`, …).
    pub outcome: &'a str,
    /// The rule that decided (Layer 1's, `guardrail`, `floor`…), when one did.
    pub rule: Option<&'a str>,
    /// What the agent was told, when it was refused.
    pub reason: Option<&'a str>,
    /// The arguments (pre, approval) or the result (post) this decision was about.
    pub subject: Option<&'a Value>,
    /// `elicitation` or `api` for an approval.
    pub channel: Option<&'a str>,
    pub latency: Duration,
    /// On a `shadow` line: the enforced and the shadow judgement.
    pub verdicts: Option<&'a ShadowVerdicts>,
}

/// A line as written (and as the console shows it).
#[derive(Debug, Clone, Serialize)]
pub struct Record {
    /// The decision's id: every line of one call carries the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<DecisionId>,
    /// Unix milliseconds.
    pub ts: u64,
    pub phase: Stage,
    pub upstream: String,
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The agent's id (`dev`, or `dev>reviewer` for a delegated one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Who delegated to it, nearest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub delegated_by: Vec<String>,
    pub outcome: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    pub latency_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdicts: Option<ShadowVerdicts>,
    /// The version of the policy that decided ([`why::policy_version`]), on pre-call lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<Arc<str>>,
    /// Why a refusal or an ask came out as it did ([`why::Why`], masked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<Value>,
}

pub struct Audit {
    queue: Option<SyncSender<String>>,
    recent: Mutex<VecDeque<Record>>,
    keep_recent: usize,
    dropped: AtomicU64,
    metrics: Option<Arc<Metrics>>,
    /// The policy's held secrets: arguments are written with their values masked (a call that
    /// carried one is refused, and its line must not carry it either).
    secrets: arc_swap::ArcSwapOption<crate::secrets::Held>,
    /// The latest lines with an id, for `portcullis explain`.
    explained: ring::Ring,
    notes: why::Notes,
    tap: tap::Tap,
}

impl std::fmt::Debug for Audit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Audit").field("on", &self.queue.is_some()).finish_non_exhaustive()
    }
}

impl Default for Audit {
    fn default() -> Self {
        Audit::off()
    }
}

/// `bytes` in lower hex.
fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    bytes
        .iter()
        .flat_map(|b| [char::from(HEX[usize::from(b >> 4)]), char::from(HEX[usize::from(b & 0xf)])])
        .collect()
}

/// The digest and masked preview of a value.
pub fn describe(v: &Value) -> (String, String) {
    let text = match v {
        Value::String(s) => s.clone(),
        other => canonical_json(other),
    };
    let d: [u8; 32] = Sha256::digest(text.as_bytes()).into();
    let digest = hex(&d[..16]);
    // Masked over the whole text first, so a secret cut in half by the preview is still masked.
    let findings = detect::scan_masked(&text);
    let masked = if findings.is_empty() { text } else { detect::mask(&text, &findings) };
    let mut preview: String = masked.chars().take(PREVIEW).collect();
    if masked.chars().count() > PREVIEW {
        preview.push('…');
    }
    (digest, preview)
}

impl Audit {
    /// Records nothing (and keeps nothing).
    pub fn off() -> Audit {
        Audit {
            queue: None,
            recent: Mutex::default(),
            keep_recent: 0,
            dropped: AtomicU64::new(0),
            metrics: None,
            secrets: Default::default(),
            explained: ring::Ring::default(),
            notes: why::Notes::default(),
            tap: tap::Tap::default(),
        }
    }

    /// Starts the writer for `settings` (nothing when the target is off).
    pub fn start(settings: &Settings, metrics: Arc<Metrics>) -> std::io::Result<Audit> {
        let queue = match &settings.target {
            Destination::Off => None,
            target => {
                let mut writer = sink::Writer::open(target, settings.max_size, settings.keep)?;
                let (tx, rx) = sync_channel::<String>(QUEUE);
                std::thread::Builder::new().name("portcullis-audit".into()).spawn(move || {
                    while let Ok(line) = rx.recv() {
                        if let Err(e) = writer.write(&line) {
                            eprintln!("portcullis: the audit log cannot be written: {e}");
                        }
                    }
                })?;
                Some(tx)
            }
        };
        Ok(Audit {
            queue,
            recent: Mutex::default(),
            keep_recent: settings.recent,
            dropped: AtomicU64::new(0),
            metrics: Some(metrics),
            secrets: Default::default(),
            explained: ring::Ring::new(settings.explain),
            notes: why::Notes::default(),
            tap: tap::Tap::default(),
        })
    }

    /// Masks held values in the arguments it writes from now on (a policy's, set by its guard).
    pub fn mask_with(&self, secrets: Option<Arc<crate::secrets::Held>>) {
        self.secrets.store(secrets);
    }

    pub fn is_on(&self) -> bool {
        self.queue.is_some() || self.keep_recent > 0
    }

    /// Whether a decision is recorded anywhere: lines, the console's list, the tap; and, for a
    /// refusal or an ask (`refused`), what `portcullis explain` keeps.
    pub fn wants(&self, refused: bool) -> bool {
        self.is_on() || self.tap.is_live() || (refused && self.explained.is_on())
    }

    /// Writes one decision.
    pub fn record(&self, e: Entry<'_>) {
        if !self.is_on() && !self.tap.is_live() {
            return;
        }
        self.write(e, Explained::default());
    }

    fn write(&self, e: Entry<'_>, x: Explained) {
        let (digest, preview) = match e.subject.map(describe) {
            Some((d, p)) => (Some(d), Some(p)),
            None => (None, None),
        };
        let r = Record {
            ts: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64),
            phase: e.phase,
            upstream: e.upstream.to_owned(),
            tool: e.tool.to_owned(),
            session: e.session.map(str::to_owned),
            agent: e.agent.map(|a| a.id.to_string()),
            delegated_by: e
                .agent
                .map(|a| a.delegated_by.iter().map(|d| d.to_string()).collect())
                .unwrap_or_default(),
            outcome: e.outcome.to_owned(),
            rule: e.rule.map(str::to_owned),
            reason: e.reason.map(str::to_owned),
            digest,
            preview,
            channel: e.channel.map(str::to_owned),
            latency_ms: (e.latency.as_secs_f64() * 1e6).round() / 1e3,
            verdicts: e.verdicts.cloned(),
            id: x.id,
            policy: x.policy,
            why: x.why.map(|w| self.masked(w)),
        };
        let line = match (&self.queue, self.tap.is_live()) {
            (None, false) => None,
            _ => Some(serde_json::to_string(&r).unwrap_or_default()),
        };
        if let Some(line) = line.as_deref().filter(|_| self.tap.is_live()) {
            self.tap.send(&Arc::from(line));
        }
        self.explained.keep(&r);
        if let (Some(q), Some(line)) = (&self.queue, line) {
            match q.try_send(line) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                    if self.dropped.fetch_add(1, Ordering::Relaxed) == 0 {
                        tracing::warn!(
                            "the audit log cannot keep up: lines are being dropped (audit_dropped_total)"
                        );
                    }
                    if let Some(m) = &self.metrics {
                        m.audit_dropped();
                    }
                }
            }
        }
        if self.keep_recent > 0 {
            let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
            if recent.len() >= self.keep_recent {
                recent.pop_front();
            }
            recent.push_back(r);
        }
    }

    /// Records a decision about `call`; `subject` is its arguments unless given (a result).
    #[allow(clippy::too_many_arguments)]
    pub fn call(
        &self,
        phase: Stage,
        call: &crate::call::ToolCall,
        outcome: crate::outcome::Recorded,
        rule: Option<&str>,
        reason: Option<&str>,
        subject: Option<&Value>,
        latency: Duration,
    ) {
        let x = Explained { id: Some(call.decision), ..Explained::default() };
        self.call_explained(phase, call, (outcome, rule, reason), subject, latency, x)
    }

    /// [`Self::call`], with the policy version and, for a refusal or an ask, why (with the notes
    /// the gate left for this decision laid in: [`Self::note`], [`Self::take_notes`]).
    pub fn call_explained(
        &self,
        phase: Stage,
        call: &crate::call::ToolCall,
        (outcome, rule, reason): (crate::outcome::Recorded, Option<&str>, Option<&str>),
        subject: Option<&Value>,
        latency: Duration,
        x: Explained,
    ) {
        use crate::outcome::{CallOutcome, Recorded};
        let refused = !matches!(outcome, Recorded::Outcome(CallOutcome::Forwarded | CallOutcome::Rewritten));
        if !self.wants(refused) {
            return;
        }
        let args;
        let subject = match (phase, subject) {
            (_, Some(v)) => Some(v),
            (Stage::Pre | Stage::Approval, None) => {
                let held = self.secrets.load();
                args = call.args.as_deref().map(|a| {
                    let mut v = serde_json::from_str::<Value>(a.get())
                        .unwrap_or_else(|_| Value::String(a.get().to_owned()));
                    if let Some(h) = held.as_deref() {
                        h.mask_value(&mut v);
                    }
                    v
                });
                args.as_ref()
            }
            (Stage::Post | Stage::Shadow, None) => None,
        };
        let entry = Entry {
            phase,
            upstream: &call.upstream,
            tool: &call.qualified,
            session: call.session.as_deref(),
            agent: call.agent.as_deref(),
            outcome: outcome.as_str(),
            rule,
            reason,
            subject,
            channel: None,
            latency,
            verdicts: None,
        };
        // A refusal is kept for `explain` even when no line is written; an allow only when one is.
        if refused || self.is_on() || self.tap.is_live() {
            self.write(entry, x);
        }
    }

    /// Keeps `note` for decision `id`'s line (the checker's verdict on a refused call, a waiver
    /// lookup), when that line will be kept anywhere.
    pub fn note(&self, id: DecisionId, note: why::Note) {
        if self.wants(true) {
            self.notes.add(id, note);
        }
    }

    /// Lays the notes left for decision `id` into `why` (forgetting them).
    pub fn take_notes(&self, id: DecisionId, why: &mut why::Why) {
        self.notes.take_into(id, why);
    }

    /// Every kept line of decision `id`, oldest first (empty when none is kept).
    pub fn explained(&self, id: DecisionId) -> Vec<Record> {
        self.explained.find(id)
    }

    /// The live tap: every line as it is recorded.
    pub fn tap(&self) -> &tap::Tap {
        &self.tap
    }

    /// `why` as a line carries it: every string masked as a preview is ([`describe`]), held
    /// secrets included.
    fn masked(&self, why: why::Why) -> Value {
        let mut v = serde_json::to_value(why).unwrap_or(Value::Null);
        mask_strings(&mut v);
        if let Some(h) = self.secrets.load().as_deref() {
            h.mask_value(&mut v);
        }
        v
    }

    /// The latest entries, newest last.
    pub fn recent(&self) -> Vec<Record> {
        self.recent.lock().unwrap_or_else(|p| p.into_inner()).iter().cloned().collect()
    }
}

/// What a line of a call adds to its [`Entry`]: the call's id, the policy's version, why.
#[derive(Debug, Default)]
pub struct Explained {
    pub id: Option<DecisionId>,
    pub policy: Option<Arc<str>>,
    pub why: Option<why::Why>,
}

/// Characters of one string in a line's `why` (a reason names the command, which may be long).
const WHY_STRING: usize = 1024;

/// `s` cut to `max` characters (marked `…`), on a character boundary.
pub(crate) fn clip(s: &mut String, max: usize) {
    if let Some((at, _)) = s.char_indices().nth(max) {
        s.truncate(at);
        s.push('…');
    }
}

/// Masks every secret the local detectors find in each string of `v` (masked whole, then cut:
/// a secret cut in half is still masked), and cuts each to [`WHY_STRING`] characters.
fn mask_strings(v: &mut Value) {
    match v {
        Value::String(s) => {
            let findings = detect::scan(s, Direction::Outbound);
            if !findings.is_empty() {
                *s = detect::mask(s, &findings);
            }
            clip(s, WHY_STRING);
        }
        Value::Array(items) => items.iter_mut().for_each(mask_strings),
        Value::Object(map) => map.values_mut().for_each(mask_strings),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn previews_mask_secrets_and_digests_do_not_depend_on_key_order() {
        // A GitHub token shape with mixed-case random-looking body (not a documented example).
        let key = "ghp_".to_owned() + "R7q2ZkX9vLw3Tn8YbC5mPd1HsGf6Ja4Ue0Qx";
        let a = json!({"cmd": format!("deploy --key {key}"), "n": 1});
        let b = json!({"n": 1, "cmd": format!("deploy --key {key}")});
        let (da, pa) = describe(&a);
        assert_eq!(da, describe(&b).0);
        assert!(!pa.contains(&key), "{pa}");
        let long = json!("x".repeat(1000));
        assert_eq!(describe(&long).1.chars().count(), PREVIEW + 1);
        // The digest: the first 16 bytes of the SHA-256 of the canonical text, in lower hex.
        let d: [u8; 32] = Sha256::digest(b"plain").into();
        let want: String = d[..16].iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(describe(&json!("plain")).0, want);
    }
}
