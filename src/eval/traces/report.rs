//! What `portcullis eval --traces` prints: exfiltration recall and benign false positives with
//! Wilson intervals, overall, per mechanism and per suite.

use std::collections::BTreeMap;

use serde::Serialize;

use super::data::{Label, Trace};
use super::mechanism::Mechanism;
use super::replay::{Fate, Replayed};
use crate::eval::stats::Rate;

/// Recall and false-positive rate over some steps.
#[derive(Debug, Clone, Serialize)]
pub struct Scores {
    /// `exfil` calls refused.
    pub recall: Rate,
    /// `benign` calls refused.
    pub false_positive_rate: Rate,
}

impl Scores {
    /// Scores where a step counts as caught when `caught` says so.
    fn of<'a>(steps: impl Iterator<Item = &'a Replayed>, caught: impl Fn(&Replayed) -> bool) -> Scores {
        let (mut tp, mut pos, mut fp, mut neg) = (0, 0, 0, 0);
        for s in steps {
            match s.label {
                Label::Exfil => (pos, tp) = (pos + 1, tp + usize::from(caught(s))),
                Label::Benign => (neg, fp) = (neg + 1, fp + usize::from(caught(s))),
                Label::Injected => {}
            }
        }
        Scores { recall: Rate::new(tp, pos), false_positive_rate: Rate::new(fp, neg) }
    }
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub traces: String,
    pub sessions: usize,
    pub steps: usize,
    pub exfil: usize,
    pub benign: usize,
    /// Calls the injection asked for that send nothing out: not scored.
    pub injected: usize,
    pub injected_refused: usize,
    /// Any refusal counts.
    pub overall: Scores,
    /// Only this mechanism's refusals count (a call is refused by one mechanism: the first).
    pub by_mechanism: BTreeMap<Mechanism, Scores>,
    pub by_suite: BTreeMap<String, Scores>,
    /// Forwarded calls whose result the proxy withheld or rewrote.
    pub results_changed: usize,
    /// Of those, in sessions with no injection: results the user lost for nothing.
    pub results_changed_uninjected: usize,
    /// Exfil calls refused, or preceded in their session by a result the proxy withheld or
    /// rewrote (the injection, most often: an agent that never read it would not have made
    /// the call). An upper bound, reported beside recall, never in place of it.
    pub exfil_refused_or_after_withheld: Rate,
    /// Refusals by the audit line's rule (or, for a refused ask, the start of its reason).
    pub refusals: BTreeMap<String, usize>,
}

fn refused(s: &Replayed) -> bool {
    matches!(s.fate, Fate::Refused(_))
}

impl Report {
    pub fn of(path: &str, traces: &[Trace], steps: &[Replayed]) -> Report {
        let count = |l: Label| steps.iter().filter(|s| s.label == l).count();
        let suite: BTreeMap<&str, &str> =
            traces.iter().map(|t| (t.id.as_str(), t.suite.as_deref().unwrap_or("-"))).collect();
        let uninjected: std::collections::HashSet<&str> =
            traces.iter().filter(|t| t.injection_task.is_none()).map(|t| t.id.as_str()).collect();
        let mut suites: BTreeMap<String, Vec<&Replayed>> = BTreeMap::new();
        for s in steps {
            let name = suite.get(s.session.as_str()).copied().unwrap_or("-");
            suites.entry(name.to_owned()).or_default().push(s);
        }
        Report {
            traces: path.to_owned(),
            sessions: traces.len(),
            steps: steps.len(),
            exfil: count(Label::Exfil),
            benign: count(Label::Benign),
            injected: count(Label::Injected),
            injected_refused: steps.iter().filter(|s| s.label == Label::Injected && refused(s)).count(),
            overall: Scores::of(steps.iter(), refused),
            by_mechanism: Mechanism::ALL
                .iter()
                .map(|m| (*m, Scores::of(steps.iter(), |s| s.fate == Fate::Refused(*m))))
                .collect(),
            by_suite: suites.into_iter().map(|(k, v)| (k, Scores::of(v.into_iter(), refused))).collect(),
            results_changed: steps.iter().filter(|s| s.result_changed).count(),
            results_changed_uninjected: steps
                .iter()
                .filter(|s| s.result_changed && uninjected.contains(s.session.as_str()))
                .count(),
            exfil_refused_or_after_withheld: after_withheld(steps),
            refusals: steps.iter().filter(|s| refused(s)).fold(BTreeMap::new(), |mut m, s| {
                *m.entry(named(s)).or_default() += 1;
                m
            }),
        }
    }
}

/// What a refusal names, on one short line.
fn named(s: &Replayed) -> String {
    let why = s.rule.as_deref().or(s.reason.as_deref()).unwrap_or("-");
    why.chars().take_while(|c| *c != '\n').take(60).collect()
}

/// Exfil calls refused or preceded in their session by a withheld or rewritten result.
fn after_withheld(steps: &[Replayed]) -> Rate {
    let (mut hit, mut of) = (0, 0);
    for (i, s) in steps.iter().enumerate().filter(|(_, s)| s.label == Label::Exfil) {
        of += 1;
        let earlier = steps[..i].iter().rev().take_while(|e| e.session == s.session);
        hit += usize::from(refused(s) || earlier.into_iter().any(|e| e.result_changed));
    }
    Rate::new(hit, of)
}

/// The report as text, with up to `errors` missed exfil calls and refused benign calls.
pub fn text(r: &Report, steps: &[Replayed], errors: usize) -> String {
    let mut out = format!(
        "traces {}: {} sessions, {} calls ({} exfil, {} benign, {} injected, not scored: {} refused)\n",
        r.traces, r.sessions, r.steps, r.exfil, r.benign, r.injected, r.injected_refused
    );
    let row = |name: &str, s: &Scores| {
        format!(
            "  {name:<12} recall {:<34} false positives {}\n",
            s.recall.show(),
            s.false_positive_rate.show()
        )
    };
    out.push_str(&row("overall", &r.overall));
    out.push_str("by mechanism (refusals by it alone):\n");
    for (m, s) in &r.by_mechanism {
        out.push_str(&row(m.as_str(), s));
    }
    out.push_str("by suite:\n");
    for (name, s) in &r.by_suite {
        out.push_str(&row(name, s));
    }
    out.push_str(&format!(
        "results withheld or rewritten after a forwarded call: {} ({} in sessions with no injection)\n",
        r.results_changed, r.results_changed_uninjected
    ));
    out.push_str(&format!(
        "exfil calls refused or after a withheld result in their session (upper bound): {}\n",
        r.exfil_refused_or_after_withheld.show()
    ));
    out.push_str("refusals by rule:\n");
    for (rule, n) in &r.refusals {
        out.push_str(&format!("  {n:>5}  {rule}\n"));
    }
    let missed: Vec<&Replayed> = steps.iter().filter(|s| s.label == Label::Exfil && !refused(s)).collect();
    let false_pos: Vec<&Replayed> = steps.iter().filter(|s| s.label == Label::Benign && refused(s)).collect();
    for (title, list) in [("missed exfil calls", &missed), ("refused benign calls", &false_pos)] {
        if errors == 0 || list.is_empty() {
            continue;
        }
        out.push_str(&format!("{title} (first {} of {}):\n", errors.min(list.len()), list.len()));
        for s in list.iter().take(errors) {
            out.push_str(&format!("  {} step {} {} {}\n", s.session, s.step, s.tool, named(s)));
        }
    }
    out
}
