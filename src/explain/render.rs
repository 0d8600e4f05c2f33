//! The words `portcullis explain` prints for one decision, from its audit lines as JSON (the
//! admin listener's answer and an audit file's lines are the same records): what was called,
//! what was decided and told, Layer 1's rule and every rule the call met with its scope, the
//! checker's judgement, the waiver lookup, the policy version. Reads values, never trusts them:
//! a field missing or of another type is left out, and every string is printed [`inert`]: no
//! control, escape sequence, line break or bidi override the agent put in it reaches the terminal.

use std::fmt::Write as _;

use std::borrow::Cow;

use serde_json::Value;

use crate::inert::inert;

/// The explanation of the decision whose audit `lines` these are (oldest first).
pub fn render(id: &str, lines: &[Value]) -> String {
    let mut out = format!("decision {}\n", inert(id));
    for line in lines {
        out.push('\n');
        line_words(&mut out, line);
    }
    out
}

/// A string field as a terminal may print it ([`inert`]): every field holds text the agent may
/// have chosen (a tool's name, a reason quoting it, a preview of its arguments).
fn s<'a>(v: &'a Value, key: &str) -> Option<Cow<'a, str>> {
    v.get(key).and_then(Value::as_str).map(inert)
}

fn line_words(out: &mut String, l: &Value) {
    let phase = match s(l, "phase").as_deref() {
        Some("pre") => "before the call",
        Some("post") => "on its result",
        Some("approval") => "a human's answer",
        Some("shadow") => "a shadow judgement",
        _ => "a decision",
    };
    let when = l.get("ts").and_then(Value::as_u64).map(utc).unwrap_or_default();
    let _ = writeln!(out, "{phase}, {when}: {}", s(l, "outcome").unwrap_or(Cow::Borrowed("?")));
    let _ = writeln!(
        out,
        "  tool:      {} (upstream {})",
        s(l, "tool").unwrap_or(Cow::Borrowed("?")),
        s(l, "upstream").unwrap_or(Cow::Borrowed("?"))
    );
    let who: Vec<String> = [("agent", "agent"), ("session", "session")]
        .iter()
        .filter_map(|(k, name)| s(l, k).map(|v| format!("{name} {v}")))
        .collect();
    if !who.is_empty() {
        let _ = writeln!(out, "  caller:    {}", who.join(", "));
    }
    if let Some(p) = s(l, "preview") {
        let digest = s(l, "digest").map(|d| format!(" (digest {d})")).unwrap_or_default();
        let _ = writeln!(out, "  subject:   {p}{digest}");
    }
    if let Some(rule) = s(l, "rule") {
        let _ = writeln!(out, "  rule:      {rule}");
    }
    if let Some(reason) = s(l, "reason") {
        let _ = writeln!(out, "  told:      {reason}");
    }
    if let Some(p) = s(l, "policy") {
        let _ = writeln!(out, "  policy:    version {p}");
    }
    if let Some(why) = l.get("why") {
        why_words(out, why);
    }
}

fn why_words(out: &mut String, why: &Value) {
    if let Some(d) = why.get("layer1") {
        let _ = writeln!(
            out,
            "  layer 1:   {} by {} (scope {}): {}",
            s(d, "effect").unwrap_or(Cow::Borrowed("?")),
            s(d, "rule").unwrap_or(Cow::Borrowed("?")),
            s(d, "scope").unwrap_or(Cow::Borrowed("?")),
            s(d, "reason").unwrap_or(Cow::Borrowed(""))
        );
    }
    match why.get("matched").and_then(Value::as_array) {
        Some(rules) if !rules.is_empty() => {
            let _ = writeln!(out, "  rules the call met (strongest first):");
            for m in rules {
                let seen = s(m, "effect_seen").map(|e| format!(": {e}")).unwrap_or_default();
                let maybe = match m.get("possibly").and_then(Value::as_bool) {
                    Some(true) => " (may match, so asked)",
                    _ => "",
                };
                let _ = writeln!(
                    out,
                    "    {:<5} {}  scope {}  on {}{seen}{maybe}",
                    s(m, "effect").unwrap_or(Cow::Borrowed("?")),
                    s(m, "rule").unwrap_or(Cow::Borrowed("?")),
                    s(m, "scope").unwrap_or(Cow::Borrowed("?")),
                    s(m, "unit").unwrap_or(Cow::Borrowed("?"))
                );
            }
        }
        _ => {
            let _ = writeln!(out, "  rules the call met: none configured (the built-in floor decided)");
        }
    }
    if let Some(c) = why.get("checker") {
        let latency =
            c.get("latency_ms").and_then(Value::as_f64).map(|l| format!(" in {l} ms")).unwrap_or_default();
        let cached = match c.get("cache_hit").and_then(Value::as_bool) {
            Some(true) => ", from the verdict cache",
            _ => "",
        };
        let _ = writeln!(
            out,
            "  checker:   {} under guardrail rule {} with rubric {} (mode {}), answered by {}{latency}{cached}",
            s(c, "verdict").unwrap_or(Cow::Borrowed("?")),
            s(c, "rule").unwrap_or(Cow::Borrowed("?")),
            s(c, "rubric").unwrap_or(Cow::Borrowed("?")),
            s(c, "mode").unwrap_or(Cow::Borrowed("?")),
            s(c, "tier").unwrap_or(Cow::Borrowed("?")),
        );
    }
    if let Some(w) = why.get("waiver") {
        let found = w.get("found").and_then(Value::as_bool).unwrap_or(false);
        let _ = writeln!(
            out,
            "  waiver:    a session waiver was looked up: {}",
            if found { "found" } else { "none for this exact call" }
        );
    }
}

/// Unix milliseconds as `YYYY-MM-DD HH:MM:SS UTC` (the civil calendar from a day count).
fn utc(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Days since 1970-01-01 to a proleptic Gregorian date, by 400-year eras.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn times_are_utc_calendar_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_796_429_045_000), "2026-12-05 00:04:05 UTC");
    }

    #[test]
    fn a_refusal_reads_with_its_rule_scope_effect_and_policy() {
        let line = json!({
            "id": "0123456789AB", "ts": 0, "phase": "pre", "upstream": "fs", "tool": "mcp__fs__write_file",
            "outcome": "denied", "rule": "Write(/etc/**)", "reason": "portcullis denied it.",
            "preview": "{\"path\":\"/etc/passwd\"}", "digest": "ab", "latency_ms": 0.1, "policy": "3f2a9c1b7d0e",
            "why": {
                "layer1": {"effect": "deny", "rule": "Write(/etc/**)", "scope": "config", "reason": "write /etc/passwd is denied"},
                "matched": [{"effect": "deny", "rule": "Write(/etc/**)", "scope": "config", "unit": "write /etc/passwd"}],
                "waiver": {"consulted": true, "found": false}
            }
        });
        let text = render("0123456789AB", &[line]);
        for want in [
            "decision 0123456789AB",
            "before the call, 1970-01-01 00:00:00 UTC: denied",
            "layer 1:   deny by Write(/etc/**) (scope config)",
            "deny  Write(/etc/**)  scope config  on write /etc/passwd",
            "policy:    version 3f2a9c1b7d0e",
            "none for this exact call",
        ] {
            assert!(text.contains(want), "{want:?} in\n{text}");
        }
    }

    #[test]
    fn fields_of_the_wrong_type_are_left_out_never_a_panic() {
        let text = render("X", &[json!({"ts": "late", "why": {"matched": 3, "checker": []}}), json!(null)]);
        assert!(text.starts_with("decision X"), "{text}");
    }
}
