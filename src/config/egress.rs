//! `egress:` (top level, per upstream, per agent): where arguments may send a tool — `allow`,
//! `ask` and `deny` entries over hosts, domains, address ranges, categories, e-mail domains and
//! IBAN-like accounts, and the `sinks` (tools with outward reach whatever their kind).

use serde::Deserialize;

use super::Problems;
use crate::rules::egress::{Egress, EgressRule, Sink, Target};
use crate::rules::{Effect, Scope};

/// As written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub ask: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
    /// Globs over qualified tool names (`mcp__mail__send`, `http__hooks__*`).
    #[serde(default)]
    pub sinks: Vec<String>,
}

/// One `egress:` block compiled; `path` is where it sits (`egress`, `upstreams.web.egress`,
/// `agents.dev.egress`), `upstream` limits it to that upstream's calls.
pub(crate) fn compile(
    raw: Raw,
    path: &str,
    scope: Scope,
    upstream: Option<&str>,
    p: &mut Problems,
) -> Egress {
    let mut out = Egress::default();
    for (effect, list) in [(Effect::Allow, raw.allow), (Effect::Ask, raw.ask), (Effect::Deny, raw.deny)] {
        let key = effect.as_str();
        for (i, text) in list.into_iter().enumerate() {
            match Target::parse(&text) {
                Ok(target) => out.rules.push(EgressRule {
                    effect,
                    target,
                    scope,
                    upstream: upstream.map(str::to_owned),
                    source: format!("{path}.{key}: {text}"),
                }),
                Err(why) => p.add(format!("{path}.{key}[{i}]"), why),
            }
        }
    }
    for (i, glob) in raw.sinks.into_iter().enumerate() {
        if glob.trim().is_empty() {
            p.add(format!("{path}.sinks[{i}]"), "an empty glob names no tool");
            continue;
        }
        out.sinks.push(Sink::new(&glob, upstream.map(str::to_owned)));
    }
    out
}

/// A block given as a YAML value (an upstream's or an agent's), decoded then compiled.
pub(crate) fn decode(
    v: serde_json::Value,
    path: &str,
    scope: Scope,
    upstream: Option<&str>,
    p: &mut Problems,
) -> Egress {
    match serde_json::from_value::<Raw>(v) {
        Ok(raw) => compile(raw, path, scope, upstream, p),
        Err(e) => {
            p.add(path, e.to_string());
            Egress::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bad_entry_is_reported_with_its_path() {
        let mut p = Problems::default();
        let raw = Raw {
            allow: vec!["localhost".into(), "http://x/".into()],
            ask: vec!["iban".into()],
            deny: vec!["10.0.0.0/40".into()],
            sinks: vec!["".into(), "mcp__mail__*".into()],
        };
        let e = compile(raw, "upstreams.web.egress", Scope::Config, Some("web"), &mut p);
        let paths: Vec<&str> = p.problems.iter().map(|x| x.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "upstreams.web.egress.allow[1]",
                "upstreams.web.egress.deny[0]",
                "upstreams.web.egress.sinks[0]"
            ]
        );
        assert_eq!(e.rules.len(), 2);
        assert_eq!(e.rules[0].source, "upstreams.web.egress.allow: localhost");
        assert_eq!(e.sinks.len(), 1);
    }

    #[test]
    fn an_unknown_key_is_refused() {
        let mut p = Problems::default();
        decode(serde_json::json!({"alow": ["x.example"]}), "egress", Scope::Config, None, &mut p);
        assert_eq!(p.problems.len(), 1, "{:?}", p.problems);
    }
}
