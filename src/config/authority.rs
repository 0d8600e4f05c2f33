//! `authority:`: the evaluator that vets a call once the rule engine has allowed it — `local`
//! (the default), `noop` or `cedar` with an operator's policy file checked against the shipped
//! schema. Operator config only: a permissions file cannot hold this key.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use cedar_policy::{PolicyId, PolicySet, Schema, ValidationMode, ValidationWarning, Validator};
use serde::Deserialize;

use super::Problems;
use crate::rules::jail::{Jail, Relative, Resolve};

/// The schema a Cedar policy is validated against (`config/authority.cedarschema`).
pub const SCHEMA: &str = include_str!("../../config/authority.cedarschema");

/// The section as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    evaluator: Option<String>,
    policy: Option<String>,
    allow_anonymous: Option<bool>,
}

/// Which evaluator decides, chosen once at start.
#[derive(Debug, Clone, Default)]
pub enum Evaluator {
    /// Only what the carried set allows (the rule engine, narrowed by each delegation).
    #[default]
    Local,
    /// Nothing beyond the rule engine; a delegated call, which carries a set to evaluate, is
    /// refused (there is no evaluator for it).
    Noop,
    /// The carried set first, then the operator's Cedar policy, which can only add denials.
    Cedar(Arc<CedarPolicy>),
}

impl Evaluator {
    pub fn as_str(&self) -> &'static str {
        match self {
            Evaluator::Local => "local",
            Evaluator::Noop => "noop",
            Evaluator::Cedar(_) => "cedar",
        }
    }
}

/// Who a Cedar policy may be asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Callers {
    /// Only authenticated agents reach the gate (`agents:` or `auth.jwt` with auth required).
    Verified,
    /// The operator let unauthenticated callers in (`allow_anonymous: true`): they are
    /// `Portcullis::Anonymous`.
    AnonymousToo,
}

/// A parsed, schema-checked policy file.
#[derive(Debug)]
pub struct CedarPolicy {
    pub file: PathBuf,
    /// Each policy under its `@id` annotation, else its position (`policy0` is the first).
    pub policies: PolicySet,
    /// The jail file paths are normalised by (the rule engine's root and resolution).
    pub jail: Jail,
    pub callers: Callers,
}

/// What the rest of the config tells this section.
pub struct Inputs<'a> {
    /// The jail's root, as the engine canonicalised it.
    pub jail_root: Option<&'a Path>,
    /// `jail.resolve` as written (`filesystem` when absent; a bad value is reported there).
    pub resolve: Option<&'a str>,
    /// `jail.relative` as written (`refuse` when absent; a bad value is reported there).
    pub relative: Option<&'a str>,
    /// Whether callers must authenticate.
    pub require_auth: bool,
}

pub(crate) fn compile(raw: Raw, inputs: Inputs<'_>, p: &mut Problems) -> Evaluator {
    let evaluator = raw.evaluator.as_deref().unwrap_or("local");
    if evaluator != "cedar" {
        if raw.policy.is_some() {
            p.add("authority.policy", format!("only evaluator: cedar reads a policy (this is {evaluator})"));
        }
        if raw.allow_anonymous.is_some() {
            p.add("authority.allow_anonymous", "only evaluator: cedar reads allow_anonymous");
        }
    }
    match evaluator {
        "local" => Evaluator::Local,
        "noop" => Evaluator::Noop,
        "cedar" => cedar(raw, inputs, p).map(Evaluator::Cedar).unwrap_or_default(),
        other => {
            p.add("authority.evaluator", format!("{other:?} is not an evaluator (local, noop, cedar)"));
            Evaluator::Local
        }
    }
}

fn cedar(raw: Raw, inputs: Inputs<'_>, p: &mut Problems) -> Option<Arc<CedarPolicy>> {
    let callers = match raw.allow_anonymous {
        Some(true) => Callers::AnonymousToo,
        _ => Callers::Verified,
    };
    if callers == Callers::Verified && !inputs.require_auth {
        p.add(
            "authority.evaluator",
            "cedar decides on who is calling, but this config lets callers in without a credential \
             (configure agents: or auth.jwt, or say authority: { allow_anonymous: true })",
        );
    }
    let Some(file) = raw.policy.filter(|f| !f.trim().is_empty()) else {
        p.add("authority.policy", "evaluator: cedar needs a policy file");
        return None;
    };
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) => {
            p.add("authority.policy", format!("{file}: {e}"));
            return None;
        }
    };
    let policies = policies(&file, &text, p)?;
    let resolve = match inputs.resolve {
        Some("lexical") => Resolve::Lexical,
        _ => Resolve::Filesystem,
    };
    // The root was canonicalised by the engine's jail already; no names are denied here, since
    // a denied name never reaches the evaluator (the rule engine refused the call).
    let relative = match inputs.relative {
        Some("root") => Relative::Root,
        _ => Relative::Refused,
    };
    let jail = match Jail::new(inputs.jail_root, &[], resolve) {
        Ok(j) => j.with_relative(relative),
        Err(e) => {
            p.add("authority.policy", format!("the jail's root cannot be resolved: {e}"));
            return None;
        }
    };
    Some(Arc::new(CedarPolicy { file: PathBuf::from(file), policies, jail, callers }))
}

/// The file's policies, each renamed to its `@id`, checked against [`SCHEMA`]; every problem
/// is reported.
pub(crate) fn policies(file: &str, text: &str, p: &mut Problems) -> Option<PolicySet> {
    let parsed = match PolicySet::from_str(text) {
        Ok(s) => s,
        Err(e) => {
            p.add("authority.policy", format!("{file}: {}", super::Chain(&e)));
            return None;
        }
    };
    if parsed.templates().next().is_some() {
        p.add("authority.policy", format!("{file}: templates (?principal, ?resource) are not supported"));
        return None;
    }
    let mut named = PolicySet::new();
    let mut ok = true;
    let mut all: Vec<_> = parsed.policies().collect();
    all.sort_by_key(|p| position(p.id()));
    for policy in all {
        let id = policy.annotation("id").map(PolicyId::new).unwrap_or_else(|| policy.id().clone());
        if let Err(e) = named.add(policy.new_id(id.clone())) {
            p.add("authority.policy", format!("{file}: policy {id}: {e}"));
            ok = false;
        }
    }
    let schema = schema();
    let result = Validator::new(schema).validate(&named, ValidationMode::Strict);
    for e in result.validation_errors() {
        if !on_args(e, text) {
            p.add("authority.policy", format!("{file}: {e}"));
            ok = false;
        }
    }
    for w in result.validation_warnings() {
        // `context.args has x` is false under the schema's empty record, but not when called.
        let reads_args = |id: &PolicyId| named.policy(id).is_some_and(|p| spells_args(&p.to_string()));
        if !(matches!(w, ValidationWarning::ImpossiblePolicy(_)) && reads_args(w.policy_id())) {
            p.warn("authority.policy", format!("{file}: {w}"));
        }
    }
    ok.then_some(named)
}

/// The embedded schema (checked by a test).
pub fn schema() -> Schema {
    Schema::from_cedarschema_str(SCHEMA)
        .map(|(s, _)| s)
        .expect("the shipped schema parses (a test checks it)")
}

/// Cedar's positional id (`policy7` → 7), so policies keep their order in the file.
fn position(id: &PolicyId) -> usize {
    id.to_string().strip_prefix("policy").and_then(|n| n.parse().ok()).unwrap_or(usize::MAX)
}

/// How an access below `context.args` may be spelt (whitespace removed).
const ARGS: &[&str] = &["context.args.", "context.args[", "context[\"args\"].", "context[\"args\"]["];

/// Whether `text` (a policy) reads the call's arguments.
fn spells_args(text: &str) -> bool {
    let bare: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    ARGS.iter().any(|a| bare.contains(a))
        || bare.contains("context.argshas")
        || bare.contains("context[\"args\"]has")
}

/// Whether a validation error is only about an access below `context.args`, which the schema
/// cannot type (each tool's arguments differ): such an access is checked when the call is made,
/// where an error denies. Only the spellings listed are recognised; any other error stands.
fn on_args(e: &cedar_policy::ValidationError, text: &str) -> bool {
    use miette::Diagnostic;
    let Some(labels) = e.labels() else { return false };
    let mut spans = labels.peekable();
    spans.peek().is_some()
        && spans.all(|l| {
            let at: String = text
                .get(l.offset()..l.offset() + l.len())
                .unwrap_or_default()
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            ARGS.iter().any(|a| at.starts_with(a))
        })
}

#[cfg(test)]
#[path = "authority_tests.rs"]
mod tests;
