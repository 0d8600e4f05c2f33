//! The expressions the dashboards and alert rules hold, and what is wrong with each against
//! what a running proxy exports.

use super::*;

/// One expression to check, and where it lives.
pub(super) struct Source {
    pub(super) what: String,
    pub(super) expr: String,
    /// `Some(label)` for a Grafana `label_values(selector, label)` variable query.
    pub(super) label_values: Option<String>,
}

pub(super) fn dashboard_sources(d: &Value) -> Vec<Source> {
    let mut out = Vec::new();
    fn panels<'a>(list: &'a Value, out: &mut Vec<&'a Value>) {
        for p in list.as_array().into_iter().flatten() {
            out.push(p);
            panels(&p["panels"], out);
        }
    }
    let mut all = Vec::new();
    panels(&d["panels"], &mut all);
    for p in all {
        for t in p["targets"].as_array().into_iter().flatten() {
            if let Some(e) = t["expr"].as_str() {
                let what = format!("dashboard panel {:?} target {}", p["title"], t["refId"]);
                out.push(Source { what, expr: e.to_owned(), label_values: None });
            }
        }
    }
    for a in d["annotations"]["list"].as_array().into_iter().flatten() {
        if let Some(e) = a["expr"].as_str() {
            out.push(Source {
                what: format!("dashboard annotation {:?}", a["name"]),
                expr: e.to_owned(),
                label_values: None,
            });
        }
    }
    for v in d["templating"]["list"].as_array().into_iter().flatten().filter(|v| v["type"] == "query") {
        let q = v["query"]["query"].as_str().or(v["query"].as_str()).unwrap_or_default();
        let what = format!("dashboard variable {:?}", v["name"]);
        let inner = q.trim().strip_prefix("label_values(").and_then(|r| r.strip_suffix(')'));
        match inner.and_then(|r| r.rsplit_once(',')) {
            Some((sel, label)) => out.push(Source {
                what,
                expr: sel.trim().to_owned(),
                label_values: Some(label.trim().to_owned()),
            }),
            None => out.push(Source { what, expr: q.to_owned(), label_values: None }),
        }
    }
    out
}

pub(super) fn alert_sources(a: &Value) -> Vec<Source> {
    let mut out = Vec::new();
    for g in a["groups"].as_array().into_iter().flatten() {
        for r in g["rules"].as_array().into_iter().flatten() {
            let name = r["alert"].as_str().or(r["record"].as_str()).unwrap_or("?");
            let expr = r["expr"].as_str().unwrap_or_default().to_owned();
            out.push(Source { what: format!("alert {name}"), expr, label_values: None });
        }
    }
    out
}

/// Everything wrong between the expressions and the scrape; empty when all is well.
pub(super) fn problems(sources: &[Source], exported: &Exported) -> Vec<String> {
    let enums = enum_values();
    let mut out = Vec::new();
    let has_label = |metric: &str, label: &str| {
        TARGET_LABELS.contains(&label)
            || PROMETHEUS_OWN.contains(&metric)
            || exported.get(metric).is_some_and(|l| l.contains_key(label))
    };
    for s in sources {
        let (refs, groups) = match references(&s.expr) {
            Ok(r) => r,
            Err(e) => {
                out.push(format!("{}: cannot read {:?}: {e}", s.what, s.expr));
                continue;
            }
        };
        if refs.is_empty() {
            out.push(format!("{}: no metric found in {:?}", s.what, s.expr));
        }
        for r in &refs {
            if PROMETHEUS_OWN.contains(&r.metric.as_str()) {
                continue;
            }
            let Some(labels) = exported.get(&r.metric) else {
                out.push(format!("{}: metric {} is not exported", s.what, r.metric));
                continue;
            };
            for (label, op, value) in &r.matchers {
                if !has_label(&r.metric, label) {
                    out.push(format!("{}: {} has no label {label}", s.what, r.metric));
                    continue;
                }
                // A value with a Grafana variable, or a real regex, is not a fixed set of values.
                if value.contains('$') || TARGET_LABELS.contains(&label.as_str()) {
                    continue;
                }
                let alternatives: Vec<&str> = match op.as_str() {
                    "=~" | "!~" if value.chars().all(|c| c.is_ascii_alphanumeric() || "_|".contains(c)) => {
                        value.split('|').collect()
                    }
                    "=~" | "!~" => continue,
                    _ => vec![value.as_str()],
                };
                for v in alternatives {
                    let seen = labels.get(label).is_some_and(|vals| vals.contains(v));
                    let possible = enums.get(label.as_str()).is_some_and(|vals| vals.contains(v));
                    if !seen && !possible {
                        out.push(format!(
                            "{}: {}{{{label}{op}{value:?}}}: no such value {v:?}",
                            s.what, r.metric
                        ));
                    }
                }
            }
        }
        for g in &groups {
            let covered: Vec<&Ref> = match g.span {
                Some((open, close)) => refs.iter().filter(|r| r.at > open && r.at < close).collect(),
                None => refs.iter().collect(),
            };
            for l in &g.labels {
                let missing: Vec<&str> = covered
                    .iter()
                    .filter(|r| {
                        exported.contains_key(&r.metric) || PROMETHEUS_OWN.contains(&r.metric.as_str())
                    })
                    .filter(|r| !has_label(&r.metric, l))
                    .map(|r| r.metric.as_str())
                    .collect();
                let fails = match g.span {
                    Some(_) => !missing.is_empty(),
                    None => !covered.is_empty() && missing.len() == covered.len(),
                };
                if fails {
                    out.push(format!(
                        "{}: `{} ({l})` but {} has no label {l}",
                        s.what,
                        g.clause,
                        missing.join(", ")
                    ));
                }
            }
        }
        if let Some(label) = &s.label_values {
            for r in refs.iter().filter(|r| !has_label(&r.metric, label)) {
                out.push(format!(
                    "{}: label_values of {} by {label}, which it does not have",
                    s.what, r.metric
                ));
            }
        }
    }
    out
}

// ---------------------------------------------------------------- the tests
