//! `portcullis eval`: measures the guardrail rules and rubrics of a config on labelled rows.
//!
//! Every row goes through the Layer 2 pipeline the proxy runs — [`Guardrails::pre_job`] and
//! [`Guardrails::pre`] for calls (the read-only pre-filter computed by Layer 1 exactly as the
//! proxy computes it), the `redact` list then [`Guardrails::post_keyed`] for results — and the
//! verdicts are scored against the labels: recall and false-positive rate per guardrail rule and
//! rubric, which tier decided each row, the model's latency, and the rows it got wrong.
//!
//! Layer 1's own allow/ask/deny is reported but not scored: eval measures the checker, so every
//! row reaches Layer 2 as if Layer 1 had allowed it. A row is *flagged* when its verdict is
//! unsafe, whatever the rule's mode does with that. `--compare` runs two rubric directories on
//! the same rows and lists the rows whose verdict flipped.
//!
//! [`Guardrails::pre_job`]: crate::guardrails::Guardrails::pre_job
//! [`Guardrails::pre`]: crate::guardrails::Guardrails::pre
//! [`Guardrails::post_keyed`]: crate::guardrails::Guardrails::post_keyed

pub mod data;
mod placed;
pub mod report;
pub mod stats;
pub mod traces;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde::Serialize;

use self::data::{DataError, Row};
use self::placed::Placed;
use self::stats::{percentile, Rate};
use crate::checker::rubric::Rubrics;
use crate::checker::{openai, Phase};
use crate::config::{Backend, Config, GuardrailsConfig};
use crate::guardrails::Tier;

/// What `portcullis eval` was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    pub data: PathBuf,
    /// `None`: inferred from the rows (results are post, calls and commands pre).
    pub phase: Option<Phase>,
    /// Rubrics in place of the config's.
    pub rubrics: Option<PathBuf>,
    /// Rows in flight at once; `None` is the checker's `max_concurrency`.
    pub concurrency: Option<usize>,
    /// Only this many rows, evenly spaced ([`data::sample`]).
    pub sample: Option<usize>,
    /// An OpenAI-compatible checker in place of the config's.
    pub checker: Option<CheckerOverride>,
    /// The tool rows that name none are put on (results, commands).
    pub tool: Option<String>,
    /// The upstream that qualifies a row's bare tool name (`mcp__{upstream}__{tool}`).
    pub upstream: String,
    /// Progress lines on stderr.
    pub progress: bool,
}

/// `--checker-url URL --checker-model M [--context-tokens N]`.
#[derive(Debug, Clone)]
pub struct CheckerOverride {
    pub url: String,
    pub model: String,
    pub context_tokens: Option<u32>,
}

/// How long an overriding checker may take per window: local CPU models take 15–45 s, more
/// while the server queues the rows eval sends it at once.
pub const OVERRIDE_TIMEOUT: Duration = Duration::from_secs(300);

/// Why an evaluation cannot run.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Data(#[from] DataError),
    #[error("the config has no `guardrails:` section: there is no rule or rubric to measure")]
    NoGuardrails,
    #[error("--rubrics {dir}: {problems}")]
    Rubrics { dir: String, problems: String },
    #[error("--rubrics {dir}: guardrail rule {rule} names rubric {rubric:?}, which is not there")]
    MissingRubric { dir: String, rule: String, rubric: String },
    #[error("--checker-url {0:?} must be an absolute http:// or https:// URL")]
    CheckerUrl(String),
    #[error("--context-tokens {0}: no room for content after the reply and the longest rubric")]
    ContextTokens(u32),
    #[error("the rows mix results (`text`) with calls (`tool`, commands): pass --phase")]
    MixedRows,
    #[error("{0}")]
    Placement(#[from] placed::PlacementError),
    #[error("the checker cannot start")]
    Checker(#[source] crate::runtime::StartError),
}

/// Which stage decided a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decider {
    /// No guardrail rule covers the tool in this phase: nothing judged it.
    Uncovered,
    /// A proven read-only shell command: the checker was skipped.
    Prefilter,
    Local,
    Model,
    Cache,
    /// No verdict (model failed, timed out, breaker open).
    Failed,
}

impl Decider {
    pub const ALL: [Decider; 6] = [
        Decider::Prefilter,
        Decider::Local,
        Decider::Model,
        Decider::Cache,
        Decider::Failed,
        Decider::Uncovered,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Decider::Uncovered => "uncovered",
            Decider::Prefilter => "prefilter",
            Decider::Local => "local",
            Decider::Model => "model",
            Decider::Cache => "cache",
            Decider::Failed => "failed",
        }
    }
}

impl From<Tier> for Decider {
    fn from(t: Tier) -> Decider {
        match t {
            Tier::Local => Decider::Local,
            Tier::Model => Decider::Model,
            Tier::Cache => Decider::Cache,
            Tier::Failed => Decider::Failed,
        }
    }
}

/// One row's fate.
#[derive(Debug, Clone, Serialize)]
pub struct Judged {
    pub line: usize,
    pub label: String,
    pub positive: bool,
    pub source: String,
    pub tool: String,
    /// The start of what was judged, on one line.
    pub excerpt: String,
    /// The guardrail rule's `match`, when one covers the row.
    pub rule: Option<String>,
    /// `name@version`.
    pub rubric: Option<String>,
    pub decided_by: Decider,
    /// The verdict (`safe`, `unsafe`, `failed`, `skipped`); `None` when nothing judged the row.
    pub verdict: Option<&'static str>,
    /// The verdict was unsafe.
    pub flagged: bool,
    #[serde(skip)]
    pub model_latency: Option<Duration>,
    /// Layer 1's effect (pre only): reported, not scored.
    pub layer1: Option<&'static str>,
}

impl Judged {
    pub fn wrong(&self) -> bool {
        self.flagged != self.positive
    }
}

/// Recall and false-positive rate over some rows.
#[derive(Debug, Clone, Serialize)]
pub struct Scores {
    pub rows: usize,
    pub recall: Rate,
    pub false_positive_rate: Rate,
}

impl Scores {
    fn of<'a>(rows: impl Iterator<Item = &'a Judged>) -> Scores {
        let (mut n, mut tp, mut pos, mut fp, mut neg) = (0, 0, 0, 0, 0);
        for r in rows {
            n += 1;
            match r.positive {
                true => (pos, tp) = (pos + 1, tp + usize::from(r.flagged)),
                false => (neg, fp) = (neg + 1, fp + usize::from(r.flagged)),
            }
        }
        Scores { rows: n, recall: Rate::new(tp, pos), false_positive_rate: Rate::new(fp, neg) }
    }
}

/// The scores of one guardrail rule with one rubric.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub rule: String,
    pub rubric: String,
    #[serde(flatten)]
    pub scores: Scores,
}

/// Model latency over the rows the model decided.
#[derive(Debug, Clone, Serialize)]
pub struct Latency {
    pub samples: usize,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
}

/// One run of the rows under one rubric set.
#[derive(Debug, Clone, Serialize)]
pub struct Measured {
    pub data: String,
    pub phase: &'static str,
    /// The rubric directory, or `built-in`.
    pub rubrics: String,
    /// `local`, or the model's name.
    pub checker: String,
    pub overall: Scores,
    pub groups: Vec<Group>,
    pub decided_by: BTreeMap<Decider, usize>,
    pub model_latency: Latency,
    /// Layer 1's effects (pre only): reported, not scored.
    pub layer1: BTreeMap<&'static str, usize>,
    pub rows: Vec<Judged>,
}

impl Measured {
    fn new(data: String, phase: Phase, rubrics: String, checker: String, rows: Vec<Judged>) -> Measured {
        let mut groups: BTreeMap<(String, String), Vec<&Judged>> = BTreeMap::new();
        let mut decided_by: BTreeMap<Decider, usize> = Decider::ALL.iter().map(|d| (*d, 0)).collect();
        let mut layer1 = BTreeMap::new();
        for r in &rows {
            if let (Some(rule), Some(rubric)) = (&r.rule, &r.rubric) {
                groups.entry((rule.clone(), rubric.clone())).or_default().push(r);
            }
            *decided_by.entry(r.decided_by).or_default() += 1;
            if let Some(e) = r.layer1 {
                *layer1.entry(e).or_default() += 1;
            }
        }
        let latencies: Vec<Duration> = rows.iter().filter_map(|r| r.model_latency).collect();
        let ms = |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1000.0);
        Measured {
            data,
            phase: phase.as_str(),
            rubrics,
            checker,
            overall: Scores::of(rows.iter()),
            groups: groups
                .into_iter()
                .map(|((rule, rubric), rs)| Group { rule, rubric, scores: Scores::of(rs.into_iter()) })
                .collect(),
            decided_by,
            model_latency: Latency {
                samples: latencies.len(),
                p50_ms: ms(percentile(&latencies, 0.5)),
                p95_ms: ms(percentile(&latencies, 0.95)),
            },
            layer1,
            rows,
        }
    }
}

/// A row whose verdict differs between two rubric sets.
#[derive(Debug, Clone, Serialize)]
pub struct Flip {
    pub line: usize,
    pub label: String,
    pub excerpt: String,
    pub a: Option<&'static str>,
    pub b: Option<&'static str>,
    /// B is right where A was wrong.
    pub fixed: bool,
}

/// The rows whose flag differs between `a` and `b` (the same rows, in the same order).
pub fn flips(a: &Measured, b: &Measured) -> Vec<Flip> {
    a.rows
        .iter()
        .zip(&b.rows)
        .filter(|(x, y)| x.flagged != y.flagged)
        .map(|(x, y)| Flip {
            line: x.line,
            label: x.label.clone(),
            excerpt: x.excerpt.clone(),
            a: x.verdict,
            b: y.verdict,
            fixed: !y.wrong(),
        })
        .collect()
}

/// The phase the rows are judged in: `--phase`, else results post and calls pre.
pub fn phase_of(rows: &[Row], asked: Option<Phase>) -> Result<Phase, EvalError> {
    if let Some(p) = asked {
        return Ok(p);
    }
    let text = rows.iter().filter(|r| matches!(r.payload, data::Payload::Text(_))).count();
    match text {
        0 => Ok(Phase::Pre),
        n if n == rows.len() => Ok(Phase::Post),
        _ => Err(EvalError::MixedRows),
    }
}

/// `config`'s guardrails with eval's overrides: `rubrics` in place of the config's, a model
/// checker in place of its checker, no background probe, and no shedding for load (eval
/// measures verdicts; it sends more at once than the checker's slots on purpose).
pub fn prepare(
    config: &Config,
    rubrics: Option<&std::path::Path>,
    checker: Option<&CheckerOverride>,
) -> Result<Config, EvalError> {
    let mut config = config.clone();
    let g: &mut GuardrailsConfig = config.policy.guardrails.as_mut().ok_or(EvalError::NoGuardrails)?;
    g.probe = None;
    g.queue_timeout = Duration::from_secs(24 * 3600);
    if let Some(dir) = rubrics {
        let shown = dir.display().to_string();
        g.rubrics = Rubrics::load_dir(dir)
            .map_err(|problems| EvalError::Rubrics { dir: shown.clone(), problems: problems.join("; ") })?;
        for rule in &g.rules.0 {
            if let Some(name) = rule.rubric.as_ref().filter(|n| g.rubrics.get(n).is_none()) {
                return Err(EvalError::MissingRubric {
                    dir: shown,
                    rule: rule.label.clone(),
                    rubric: name.clone(),
                });
            }
        }
        g.rubrics_dir = Some(dir.to_owned());
    }
    if let Some(c) = checker {
        match c.url.parse::<http::Uri>() {
            Ok(u) if matches!(u.scheme_str(), Some("http" | "https")) && u.authority().is_some() => {}
            _ => return Err(EvalError::CheckerUrl(c.url.clone())),
        }
        g.backend = Backend::OpenAi(openai::Settings {
            base_url: c.url.trim_end_matches('/').to_owned(),
            model: c.model.clone(),
            api_key_env: None,
            timeout: OVERRIDE_TIMEOUT,
        });
    }
    if let Some(ctx) = checker.and_then(|c| c.context_tokens) {
        let longest =
            g.rubrics.names().filter_map(|n| g.rubrics.get(n)).map(|r| r.text.len()).max().unwrap_or(0);
        let fits = crate::checker::window::window_bytes(ctx, openai::MAX_TOKENS, longest)
            .ok_or(EvalError::ContextTokens(ctx))?;
        g.max_content_bytes = g.max_content_bytes.min(fits);
    }
    Ok(config)
}

/// Runs `rows` through `config`'s pipeline (already [`prepare`]d) in `phase`.
pub async fn measure(
    config: &Config,
    rows: &[Row],
    phase: Phase,
    opts: &Options,
) -> Result<Measured, EvalError> {
    let g = config.policy.guardrails.as_ref().ok_or(EvalError::NoGuardrails)?;
    let guard = Arc::new(crate::runtime::Runtime::offline(config).map_err(EvalError::Checker)?);
    let placed: Vec<Placed> =
        rows.iter().map(|r| Placed::new(r, phase, &guard, opts)).collect::<Result<_, _>>()?;
    let concurrency = opts.concurrency.unwrap_or(g.max_concurrency).max(1);
    let rubrics = &g.rubrics;
    let mut judged: Vec<(usize, Judged)> = Vec::with_capacity(rows.len());
    let mut stream = futures_util::stream::iter(placed.into_iter().enumerate())
        .map(|(i, p)| {
            let guard = guard.clone();
            async move { (i, p.judge(&guard, phase, rubrics).await) }
        })
        .buffer_unordered(concurrency);
    let mut last = tokio::time::Instant::now();
    while let Some(done) = stream.next().await {
        judged.push(done);
        let n = judged.len();
        if opts.progress && (n == rows.len() || last.elapsed() >= Duration::from_secs(2)) {
            last = tokio::time::Instant::now();
            eprintln!("portcullis eval: {n}/{} rows", rows.len());
        }
    }
    judged.sort_by_key(|(i, _)| *i);
    let checker = match &g.backend {
        Backend::Local => "local".to_owned(),
        Backend::OpenAi(s) => s.model.clone(),
    };
    let rubric_dir = g.rubrics_dir.as_ref().map_or("built-in".to_owned(), |d| d.display().to_string());
    let data = opts.data.display().to_string();
    Ok(Measured::new(data, phase, rubric_dir, checker, judged.into_iter().map(|(_, j)| j).collect()))
}

/// `--compare DIR_A DIR_B`, `--errors`, `--json`: how the result is shown.
#[derive(Debug, Clone)]
pub struct Show {
    pub compare: Option<(PathBuf, PathBuf)>,
    pub errors: usize,
    pub json: bool,
}

/// The whole of `portcullis eval`: reads the rows, runs them (twice with `--compare`), and
/// returns the report to print.
pub async fn run(config: &Config, opts: &Options, show: &Show) -> Result<String, EvalError> {
    let rows = data::load(&opts.data)?;
    let rows = match opts.sample {
        Some(n) => data::sample(rows, n),
        None => rows,
    };
    let phase = phase_of(&rows, opts.phase)?;
    let checker = opts.checker.as_ref();
    let out = match &show.compare {
        None => {
            let m = measure(&prepare(config, opts.rubrics.as_deref(), checker)?, &rows, phase, opts).await?;
            match show.json {
                true => json(&report::Document::One { run: Box::new(report::Summary::of(&m, show.errors)) }),
                false => report::text(&m, show.errors),
            }
        }
        Some((a, b)) => {
            // Prepared both first: a bad directory B is reported before A's (slow) run.
            let (ca, cb) = (prepare(config, Some(a), checker)?, prepare(config, Some(b), checker)?);
            let a = measure(&ca, &rows, phase, opts).await?;
            let b = measure(&cb, &rows, phase, opts).await?;
            match show.json {
                true => json(&report::Document::compare(&a, &b, show.errors)),
                false => report::compare_text(&a, &b, show.errors),
            }
        }
    };
    Ok(out)
}

fn json(doc: &report::Document) -> String {
    serde_json::to_string_pretty(doc).expect("plain data serializes") + "\n"
}
