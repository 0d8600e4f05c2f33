//! The `guardrails:` section: the Layer 2 checker, its rules, bounds, cache and breaker.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::raw::Scalar;
use super::Problems;
use crate::checker::openai;
use crate::checker::rubric::Rubrics;
use crate::checker::rules::{GuardRule, GuardRules, Selector, Shadow};
use crate::checker::{FailureMode, Mode};

/// Which checker judges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// The built-in detectors only: no model, no network.
    Local,
    /// The detectors first, then an OpenAI-compatible model.
    OpenAi(openai::Settings),
}

/// The validated section.
#[derive(Debug, Clone)]
pub struct GuardrailsConfig {
    pub backend: Backend,
    pub rules: GuardRules,
    /// Inbound results shorter than this skip the model (arguments are always inspected, and
    /// the local detectors read everything).
    pub min_content_bytes: usize,
    /// The most the model is shown per call (a window). The local detectors read everything.
    pub max_content_bytes: usize,
    /// `checker.context_tokens`, when configured (windows already fit it); without it the
    /// window is learned from the server ([`crate::checker::fit`]).
    pub context_tokens: Option<u32>,
    /// Model calls (windows) per check; content past them goes through the failure policy.
    pub model_windows: usize,
    /// How often a model checker is probed in the background, so `checker_up` and the breaker
    /// follow it with no traffic (`None`: never; the default is 15 s).
    pub probe: Option<Duration>,
    pub on_checker_down: FailureMode,
    /// What a checker answer that is not a verdict does under a blocking rule.
    pub on_malformed: FailureMode,
    pub rubrics: Rubrics,
    /// Where `rubrics` came from, for reloading; `None` is the built-in set.
    pub rubrics_dir: Option<PathBuf>,
    pub cache_ttl: Duration,
    pub cache_capacity: u64,
    /// Consecutive failures that open the breaker.
    pub breaker_failures: u32,
    /// How long the breaker stays open before a probe.
    pub breaker_cooldown: Duration,
    /// Model calls in flight at once, shared fairly among callers.
    pub max_concurrency: usize,
    /// The longest a check waits for a model slot before it is shed by its failure mode.
    pub queue_timeout: Duration,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    checker: Option<Value>,
    default_mode: Option<String>,
    min_content_bytes: Option<Scalar>,
    max_content_bytes: Option<Scalar>,
    model_windows: Option<u64>,
    on_checker_down: Option<String>,
    on_malformed: Option<String>,
    queue_timeout: Option<Scalar>,
    rubrics: Option<String>,
    cache: Option<RawCache>,
    breaker: Option<RawBreaker>,
    max_concurrency: Option<u64>,
    rules: Option<Vec<Value>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCache {
    ttl: Option<Scalar>,
    capacity: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBreaker {
    failures: Option<u32>,
    cooldown: Option<Scalar>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOpenAi {
    base_url: String,
    model: String,
    api_key_env: Option<String>,
    timeout: Option<Scalar>,
    /// The model's context window in tokens (llama.cpp's `n_ctx`): windows shrink to fit it.
    context_tokens: Option<u32>,
    /// How often the checker is probed in the background (`off` for never: YAML reads a bare
    /// `off` as `false`, so both spellings mean it).
    probe: Option<ProbeEvery>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    #[serde(rename = "match")]
    pattern: String,
    phases: Option<Vec<String>>,
    mode: Option<String>,
    rubric: Option<String>,
    fail_closed: Option<bool>,
    /// A rubric name, or `{ rubric, checker: { base_url, model, api_key_env, timeout } }`.
    shadow: Option<Value>,
}

/// `probe:` as written: a duration, or off (`off` unquoted is YAML's `false`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ProbeEvery {
    Off(bool),
    Every(Scalar),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShadow {
    rubric: String,
    checker: Option<RawShadowChecker>,
}

/// A shadow's own model: the connection settings only (its windows are the enforced ones').
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShadowChecker {
    base_url: String,
    model: String,
    api_key_env: Option<String>,
    timeout: Option<Scalar>,
}

fn env_name_ok(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Compiles the section; `yolo` demotes every rule to advisory.
pub(crate) fn compile(raw: Raw, yolo: bool, p: &mut Problems) -> Option<GuardrailsConfig> {
    let mut context_tokens = None;
    let mut probe = None;
    let backend = match raw.checker {
        None | Some(Value::Null) => {
            p.add(
                "guardrails.checker",
                "missing: `checker: local` (built-in detectors) or `checker: { base_url, model }`",
            );
            None
        }
        Some(Value::String(s)) if s == "local" => Some(Backend::Local),
        Some(Value::String(s)) => {
            p.add("guardrails.checker", format!("{s:?}: the named checker is `local`; a model is an object {{ base_url, model, api_key_env, timeout }}"));
            None
        }
        Some(v) => match serde_json::from_value::<RawOpenAi>(v) {
            Err(e) => {
                p.add("guardrails.checker", e.to_string());
                None
            }
            Ok(o) => {
                context_tokens = o.context_tokens;
                probe = match o.probe {
                    Some(ProbeEvery::Off(false)) => None,
                    Some(ProbeEvery::Every(Scalar::Text(t))) if t == "off" => None,
                    Some(ProbeEvery::Off(true)) => {
                        p.add("guardrails.checker.probe", "a duration, or off");
                        None
                    }
                    given => {
                        let given = given.and_then(|g| match g {
                            ProbeEvery::Every(s) => Some(s),
                            ProbeEvery::Off(_) => None,
                        });
                        let every = p.duration("guardrails.checker.probe", given, Duration::from_secs(15));
                        if every < Duration::from_millis(100) {
                            p.add("guardrails.checker.probe", "at least 100ms (or off)");
                        }
                        Some(every)
                    }
                };
                let raw = RawShadowChecker {
                    base_url: o.base_url,
                    model: o.model,
                    api_key_env: o.api_key_env,
                    timeout: o.timeout,
                };
                Some(Backend::OpenAi(settings("guardrails.checker", raw, p)))
            }
        },
    };
    let default_mode = match raw.default_mode.as_deref().map(|m| (m, Mode::parse(m))) {
        None => Mode::Block,
        Some((_, Some(m))) => m,
        Some((m, None)) => {
            p.add("guardrails.default_mode", format!("{m:?}: one of block, sanitize, advisory"));
            Mode::Block
        }
    };
    let on_checker_down = match raw.on_checker_down.as_deref() {
        None | Some("open") => FailureMode::Open,
        Some("closed") => FailureMode::Closed,
        Some(o) => {
            p.add("guardrails.on_checker_down", format!("{o:?}: open or closed"));
            FailureMode::Open
        }
    };
    let on_malformed = match raw.on_malformed.as_deref() {
        None | Some("closed") => FailureMode::Closed,
        Some("open") => FailureMode::Open,
        Some(o) => {
            p.add("guardrails.on_malformed", format!("{o:?}: closed or open"));
            FailureMode::Closed
        }
    };
    let (rubrics, rubrics_dir) = match &raw.rubrics {
        None => (Rubrics::embedded(), None),
        Some(dir) => {
            let dir = PathBuf::from(dir);
            match Rubrics::load_dir(&dir) {
                Ok(r) => (r, Some(dir)),
                Err(errs) => {
                    for e in errs {
                        p.add("guardrails.rubrics", e);
                    }
                    (Rubrics::embedded(), Some(dir))
                }
            }
        }
    };
    let has_model = matches!(backend, Some(Backend::OpenAi(_)));
    let mut rules = match raw.rules {
        None => GuardRules::defaults(default_mode),
        Some(list) => GuardRules(
            list.into_iter()
                .enumerate()
                .filter_map(|(i, v)| rule(i, v, default_mode, &rubrics, has_model, p))
                .collect(),
        ),
    };
    if yolo {
        rules.demote_to_advisory();
    }
    let cache = raw.cache.unwrap_or_default();
    let breaker = raw.breaker.unwrap_or_default();
    let mut max_content_bytes = p.size("guardrails.max_content_bytes", raw.max_content_bytes, 256 << 10);
    if let Some(ctx) = context_tokens {
        let longest = rubrics.names().filter_map(|n| rubrics.get(n)).map(|r| r.text.len()).max().unwrap_or(0);
        match crate::checker::window::window_bytes(ctx, crate::checker::openai::MAX_TOKENS, longest) {
            None => p.add(
                "guardrails.checker.context_tokens",
                format!("{ctx} tokens leave no room for content after the reply and the longest rubric"),
            ),
            Some(fits) if fits < max_content_bytes => {
                p.warn(
                    "guardrails.checker.context_tokens",
                    format!("windows shrink from {max_content_bytes} to {fits} bytes to fit a {ctx}-token context"),
                );
                max_content_bytes = fits;
            }
            Some(_) => {}
        }
    }
    let out = GuardrailsConfig {
        backend: backend?,
        rules,
        min_content_bytes: p.size("guardrails.min_content_bytes", raw.min_content_bytes, 16),
        max_content_bytes,
        context_tokens,
        probe,
        model_windows: raw.model_windows.map(|n| n as usize).unwrap_or(4),
        on_checker_down,
        on_malformed,
        rubrics,
        rubrics_dir,
        cache_ttl: p.duration("guardrails.cache.ttl", cache.ttl, Duration::from_secs(600)),
        cache_capacity: cache.capacity.unwrap_or(10_000),
        breaker_failures: breaker.failures.unwrap_or(5),
        breaker_cooldown: p.duration(
            "guardrails.breaker.cooldown",
            breaker.cooldown,
            Duration::from_secs(30),
        ),
        max_concurrency: raw.max_concurrency.map(|n| n as usize).unwrap_or(16),
        queue_timeout: p.duration("guardrails.queue_timeout", raw.queue_timeout, Duration::from_secs(5)),
    };
    if !(1..=64).contains(&out.model_windows) {
        p.add("guardrails.model_windows", "must be between 1 and 64");
    }
    if out.breaker_failures == 0 {
        p.add("guardrails.breaker.failures", "must be at least 1");
    }
    if out.max_concurrency == 0 {
        p.add("guardrails.max_concurrency", "must be at least 1");
    }
    if out.max_content_bytes == 0 {
        p.add("guardrails.max_content_bytes", "must be at least 1 byte");
    }
    Some(out)
}

/// An OpenAI-compatible checker's connection settings, validated under `path`.
fn settings(path: &str, o: RawShadowChecker, p: &mut Problems) -> openai::Settings {
    let timeout = p.duration(&format!("{path}.timeout"), o.timeout, Duration::from_secs(10));
    match o.base_url.parse::<http::Uri>() {
        Ok(u) if matches!(u.scheme_str(), Some("http" | "https")) && u.authority().is_some() => {}
        _ => p.add(
            format!("{path}.base_url"),
            format!("{:?} must be an absolute http:// or https:// URL", o.base_url),
        ),
    }
    if o.model.trim().is_empty() {
        p.add(format!("{path}.model"), "empty model name");
    }
    if let Some(env) = &o.api_key_env {
        if !env_name_ok(env) {
            p.add(
                format!("{path}.api_key_env"),
                format!(
                    "{env:?} is not an environment variable name (the key itself never goes in the file)"
                ),
            );
        }
    }
    openai::Settings {
        base_url: o.base_url.trim_end_matches('/').to_owned(),
        model: o.model,
        api_key_env: o.api_key_env,
        timeout,
    }
}

/// A rule's `shadow:`: a rubric name, or a rubric with its own checker.
fn shadow(
    path: &str,
    v: Value,
    rule: &RawRule,
    rubrics: &Rubrics,
    has_model: bool,
    p: &mut Problems,
) -> Option<Shadow> {
    let raw = match v {
        Value::String(rubric) => RawShadow { rubric, checker: None },
        other => match serde_json::from_value::<RawShadow>(other) {
            Ok(r) => r,
            Err(e) => {
                p.add(path, format!("{e}: a rubric name, or {{ rubric, checker: {{ base_url, model }} }}"));
                return None;
            }
        },
    };
    if rubrics.get(&raw.rubric).is_none() {
        let known: Vec<&str> = rubrics.names().collect();
        p.add(format!("{path}.rubric"), format!("no rubric {:?} (known: {})", raw.rubric, known.join(", ")));
    }
    let model = raw.checker.map(|c| settings(&format!("{path}.checker"), c, p));
    if model.is_none() && !has_model {
        p.add(
            path,
            "a shadow is a model's judgement: give it `checker: { base_url, model }` or configure guardrails.checker as a model",
        );
    }
    if model.is_none() && rule.rubric.as_deref() == Some(raw.rubric.as_str()) {
        p.add(
            path,
            format!("shadows the rule with its own rubric {:?} and model: nothing could differ", raw.rubric),
        );
    }
    Some(Shadow { rubric: raw.rubric, model })
}

fn rule(
    i: usize,
    v: Value,
    default_mode: Mode,
    rubrics: &Rubrics,
    has_model: bool,
    p: &mut Problems,
) -> Option<GuardRule> {
    let path = format!("guardrails.rules[{i}]");
    let r: RawRule = match serde_json::from_value(v) {
        Ok(r) => r,
        Err(e) => {
            p.add(&path, e.to_string());
            return None;
        }
    };
    let target = Selector::parse(&r.pattern).map_err(|e| p.add(format!("{path}.match"), e)).ok();
    let (mut pre, mut post, mut tools) = (false, false, false);
    for ph in r.phases.as_deref().unwrap_or(&["pre".to_owned(), "post".to_owned()]) {
        match ph.as_str() {
            "pre" => pre = true,
            "post" => post = true,
            // Tool definitions in `tools/list` results (see docs/tool-pinning.md).
            "tools" => tools = true,
            other => p.add(format!("{path}.phases"), format!("{other:?}: pre, post or tools")),
        }
    }
    if !pre && !post && !tools {
        p.add(format!("{path}.phases"), "names no phase (pre, post, tools)");
    }
    let mode = match r.mode.as_deref() {
        None => default_mode,
        Some(m) => Mode::parse(m).unwrap_or_else(|| {
            p.add(format!("{path}.mode"), format!("{m:?}: one of block, sanitize, advisory"));
            default_mode
        }),
    };
    if let Some(name) = &r.rubric {
        if rubrics.get(name).is_none() {
            let known: Vec<&str> = rubrics.names().collect();
            p.add(format!("{path}.rubric"), format!("no rubric {name:?} (known: {})", known.join(", ")));
        }
    }
    let shadow = match r.shadow.clone() {
        None => None,
        Some(v) => Some(shadow(&format!("{path}.shadow"), v, &r, rubrics, has_model, p)?),
    };
    Some(GuardRule {
        target: target?,
        label: r.pattern,
        pre,
        post,
        tools,
        mode,
        rubric: r.rubric,
        fail_closed: r.fail_closed,
        shadow,
    })
}

#[cfg(test)]
#[path = "guardrails_tests.rs"]
mod tests;
