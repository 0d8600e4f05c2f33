//! `portcullis check`: offline decisions for JSONL tool calls, through the same engine the proxy
//! uses. One output line per input line, always — a bad line gets an `error` line — so outputs
//! can be zipped with inputs for evaluation.

use std::io::{BufRead, Write};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, value::RawValue, Value};

use crate::call::ToolCall;
use crate::config::Config;
use crate::gate::Guard;
use crate::mcp::era::Era;
use crate::rules::Effect;
use crate::telemetry::Metrics;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    tool: String,
    #[serde(default)]
    args: Option<Box<RawValue>>,
}

/// Counts of what was decided, for a summary on stderr.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub allow: usize,
    pub ask: usize,
    pub deny: usize,
    pub errors: usize,
}

/// The upstream in a qualified name: `mcp__{upstream}__{tool}` or `http__{upstream}__{path}`.
fn split(qualified: &str) -> Option<(&str, &str)> {
    let rest = qualified.strip_prefix("mcp__").or_else(|| qualified.strip_prefix("http__"))?;
    rest.split_once("__")
}

/// Decides every line of `input`, writing one JSON line per input line to `output`.
pub fn run(config: &Config, input: impl BufRead, mut output: impl Write) -> std::io::Result<Summary> {
    let guard = Guard::new(&config.policy, Arc::new(Metrics::new()));
    let mut summary = Summary::default();
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let out = match decide(&guard, &line) {
            Ok((v, effect)) => {
                match effect {
                    Effect::Allow => summary.allow += 1,
                    Effect::Ask => summary.ask += 1,
                    Effect::Deny => summary.deny += 1,
                }
                v
            }
            Err(e) => {
                summary.errors += 1;
                json!({ "error": e })
            }
        };
        writeln!(output, "{out}")?;
    }
    output.flush()?;
    Ok(summary)
}

fn decide(guard: &Guard, line: &str) -> Result<(Value, Effect), String> {
    let input: Input =
        serde_json::from_str(line).map_err(|e| format!("not a {{\"tool\", \"args\"}} line: {e}"))?;
    let (upstream, name) = split(&input.tool)
        .ok_or_else(|| format!("{:?} is not a qualified name (mcp__{{upstream}}__{{tool}})", input.tool))?;
    let mut call = ToolCall::mcp(upstream.into(), name, input.args.as_deref(), Era::Legacy);
    call.qualified = input.tool.clone();
    let d = guard.decide(&call);
    let mut v = json!({
        "effect": d.effect.as_str(),
        "rule": d.rule,
        "scope": d.scope.as_str(),
        "reason": d.reason,
        // Layer 2 (the checker) is not built yet: nothing is checked.
        "checked": false,
        "verdict": Value::Null,
    });
    if let Some(p) = d.prefilter {
        v["prefilter"] = json!(p.as_str());
    }
    Ok((v, d.effect))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_output_line_per_input_line_even_for_garbage() {
        let config = Config::parse(
            "tools: [{ match: mcp__sh__run, kind: shell, command: /command }]\npermissions: { deny: [\"Shell(rm:*)\"] }\n",
            "t",
        )
        .unwrap();
        let input = concat!(
            r#"{"tool":"mcp__sh__run","args":{"command":"ls -la"}}"#,
            "\n",
            "not json\n",
            r#"{"tool":"mcp__sh__run","args":{"command":"ls && rm -rf /"}}"#,
            "\n",
            r#"{"tool":"bare_name"}"#,
            "\n",
        );
        let mut out = Vec::new();
        let summary = run(&config, input.as_bytes(), &mut out).unwrap();
        let lines: Vec<Value> =
            String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0]["effect"], "allow");
        assert_eq!(lines[0]["prefilter"], "skip");
        assert!(lines[1]["error"].is_string());
        assert_eq!(lines[2]["effect"], "deny");
        assert_eq!(lines[2]["rule"], "Shell(rm:*)");
        assert_eq!(lines[2]["prefilter"], "inspect");
        assert!(lines[3]["error"].is_string());
        assert_eq!(summary, Summary { allow: 1, ask: 0, deny: 1, errors: 2 });
    }
}
