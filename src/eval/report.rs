//! What `portcullis eval` prints: a text report for people, or one JSON document.

use std::fmt::Write as _;

use serde::Serialize;

use super::{flips, Decider, Flip, Measured, Scores};

/// `--json`: one run, or two and their difference.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Document {
    One {
        #[serde(flatten)]
        run: Box<Summary>,
    },
    Compare {
        a: Box<Summary>,
        b: Box<Summary>,
        /// B's figures minus A's (percentage points, as fractions).
        recall_delta: Option<f64>,
        false_positive_rate_delta: Option<f64>,
        flipped: Vec<Flip>,
    },
}

/// A run without its rows; the wrong ones, at most `--errors`.
#[derive(Debug, Serialize)]
pub struct Summary {
    #[serde(flatten)]
    pub head: Head,
    pub false_negatives: usize,
    pub false_positives: usize,
    pub errors: Vec<super::Judged>,
}

/// Everything in [`Measured`] but its rows.
#[derive(Debug, Serialize)]
pub struct Head {
    pub data: String,
    pub phase: &'static str,
    pub rubrics: String,
    pub checker: String,
    pub overall: Scores,
    pub groups: Vec<super::Group>,
    pub decided_by: std::collections::BTreeMap<Decider, usize>,
    pub model_latency: super::Latency,
    pub layer1: std::collections::BTreeMap<&'static str, usize>,
}

impl Summary {
    pub fn of(m: &Measured, errors: usize) -> Summary {
        let wrong = m.rows.iter().filter(|r| r.wrong());
        Summary {
            false_negatives: wrong.clone().filter(|r| r.positive).count(),
            false_positives: wrong.clone().filter(|r| !r.positive).count(),
            errors: wrong.take(errors).cloned().collect(),
            head: Head {
                data: m.data.clone(),
                phase: m.phase,
                rubrics: m.rubrics.clone(),
                checker: m.checker.clone(),
                overall: m.overall.clone(),
                groups: m.groups.clone(),
                decided_by: m.decided_by.clone(),
                model_latency: m.model_latency.clone(),
                layer1: m.layer1.clone(),
            },
        }
    }
}

impl Document {
    pub fn compare(a: &Measured, b: &Measured, errors: usize) -> Document {
        let delta = |x: Option<f64>, y: Option<f64>| x.zip(y).map(|(x, y)| y - x);
        Document::Compare {
            recall_delta: delta(a.overall.recall.value, b.overall.recall.value),
            false_positive_rate_delta: delta(
                a.overall.false_positive_rate.value,
                b.overall.false_positive_rate.value,
            ),
            flipped: flips(a, b),
            a: Box::new(Summary::of(a, errors)),
            b: Box::new(Summary::of(b, errors)),
        }
    }
}

fn ms(v: Option<f64>) -> String {
    v.map_or("n/a".to_owned(), |v| format!("{:.0} ms", v))
}

/// The text report of one run.
pub fn text(m: &Measured, errors: usize) -> String {
    let s = Summary::of(m, errors);
    let h = &s.head;
    let mut out = String::new();
    let pos = m.rows.iter().filter(|r| r.positive).count();
    let _ = writeln!(
        out,
        "{}: {} rows ({pos} positive, {} negative), phase {}, rubrics {}, checker {}",
        h.data,
        h.overall.rows,
        h.overall.rows - pos,
        h.phase,
        h.rubrics,
        h.checker
    );
    let _ = writeln!(
        out,
        "  overall: recall {}  FPR {}",
        h.overall.recall.show(),
        h.overall.false_positive_rate.show()
    );
    for g in &h.groups {
        let _ = writeln!(
            out,
            "  rule {} rubric {} ({} rows): recall {}  FPR {}",
            g.rule,
            g.rubric,
            g.scores.rows,
            g.scores.recall.show(),
            g.scores.false_positive_rate.show()
        );
    }
    let tiers: Vec<String> =
        Decider::ALL.iter().map(|d| format!("{} {}", d.as_str(), h.decided_by[d])).collect();
    let _ = writeln!(out, "  decided by: {}", tiers.join(", "));
    let _ = writeln!(
        out,
        "  model latency: p50 {}, p95 {} ({} rows)",
        ms(h.model_latency.p50_ms),
        ms(h.model_latency.p95_ms),
        h.model_latency.samples
    );
    if !h.layer1.is_empty() {
        let l1: Vec<String> = h.layer1.iter().map(|(e, n)| format!("{e} {n}")).collect();
        let _ = writeln!(out, "  layer 1 (reported, not scored): {}", l1.join(", "));
    }
    let _ = writeln!(
        out,
        "  wrong: {} false negative(s), {} false positive(s){}",
        s.false_negatives,
        s.false_positives,
        match s.errors.len() {
            0 => String::new(),
            n => format!("; the first {n}:"),
        }
    );
    for r in &s.errors {
        let _ = writeln!(
            out,
            "    line {}: {} judged {} by {}: {}",
            r.line,
            r.label,
            r.verdict.unwrap_or("nothing"),
            r.decided_by.as_str(),
            r.excerpt
        );
    }
    out
}

/// The text report of a comparison.
pub fn compare_text(a: &Measured, b: &Measured, errors: usize) -> String {
    let mut out = format!("A: {}", text(a, errors));
    let _ = write!(out, "B: {}", text(b, errors));
    let pp = |x: Option<f64>, y: Option<f64>| {
        x.zip(y).map_or("n/a".to_owned(), |(x, y)| format!("{:+.1} pp", (y - x) * 100.0))
    };
    let _ = writeln!(
        out,
        "B - A: recall {}, FPR {}",
        pp(a.overall.recall.value, b.overall.recall.value),
        pp(a.overall.false_positive_rate.value, b.overall.false_positive_rate.value)
    );
    let flipped = flips(a, b);
    let _ = writeln!(out, "flipped: {} row(s)", flipped.len());
    for f in &flipped {
        let _ = writeln!(
            out,
            "  line {} ({}): A {} -> B {} ({}): {}",
            f.line,
            f.label,
            f.a.unwrap_or("nothing"),
            f.b.unwrap_or("nothing"),
            if f.fixed { "fixed" } else { "broken" },
            f.excerpt
        );
    }
    out
}
