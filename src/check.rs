//! `portcullis check`: offline decisions for JSONL tool calls, through the same engine and
//! checker the proxy uses. One output line per input line, always — a bad line gets an `error`
//! line — so outputs can be zipped with inputs for evaluation.
//!
//! `--phase pre` reads `{"tool", "args"}` and reports Layer 1's effect and, for allowed calls a
//! guardrail rule covers, Layer 2's verdict. `--phase post` reads `{"tool", "result"}` and
//! reports what would happen to the result (and the rewritten result, when it changes).

use std::io::{BufRead, Write};

use serde::Deserialize;
use serde_json::{json, value::RawValue, Value};

use std::sync::Arc;

use crate::call::ToolCall;
use crate::checker::Phase;
use crate::config::Config;
use crate::gate::{Guard, Outcome, PostOutcome};
use crate::guardrails::{PostJudgement, PreJudgement, Report};
use crate::identity::Agent;
use crate::mcp::era::Era;
use crate::mcp::result::refusal_value;
use crate::rules::Effect;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    tool: String,
    #[serde(default)]
    args: Option<Box<RawValue>>,
    #[serde(default)]
    result: Option<Value>,
}

/// Counts of what was decided, for a summary on stderr.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub allow: usize,
    pub ask: usize,
    pub deny: usize,
    /// Pre: allowed by Layer 1 and blocked by Layer 2. Post: results blocked or sanitized.
    pub blocked: usize,
    pub errors: usize,
}

/// The upstream in a qualified name: `mcp__{upstream}__{tool}` or `http__{upstream}__{path}`.
fn split(qualified: &str) -> Option<(&str, &str)> {
    let rest = qualified.strip_prefix("mcp__").or_else(|| qualified.strip_prefix("http__"))?;
    rest.split_once("__")
}

/// Decides every line of `input`, writing one JSON line per input line to `output`; as the
/// configured agent `agent` when one is named (`--agent`), else as an anonymous caller.
pub async fn run(
    config: &Config,
    phase: Phase,
    agent: Option<&str>,
    input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<Summary> {
    let agent = match agent {
        None => None,
        Some(name) => {
            Some(Arc::new(Agent::named(&config.policy.identity, name).map_err(std::io::Error::other)?))
        }
    };
    let guard = crate::runtime::Runtime::offline(config).map_err(std::io::Error::other)?;
    let mut summary = Summary::default();
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let decided = match phase {
            Phase::Pre => decide(&guard, &line, agent.as_ref(), &mut summary).await,
            Phase::Post => inspect(&guard, &line, agent.as_ref(), &mut summary).await,
        };
        let out = decided.unwrap_or_else(|e| {
            summary.errors += 1;
            json!({ "error": e })
        });
        writeln!(output, "{out}")?;
    }
    output.flush()?;
    Ok(summary)
}

fn parse(line: &str, agent: Option<&Arc<Agent>>) -> Result<(Input, ToolCall), String> {
    let input: Input = serde_json::from_str(line)
        .map_err(|e| format!("not a {{\"tool\", \"args\"|\"result\"}} line: {e}"))?;
    let (upstream, name) = split(&input.tool)
        .ok_or_else(|| format!("{:?} is not a qualified name (mcp__{{upstream}}__{{tool}})", input.tool))?;
    let mut call = ToolCall::mcp(upstream.into(), name, input.args.as_deref(), Era::Legacy);
    call.qualified = input.tool.clone();
    Ok((input, call.with_agent(agent.cloned())))
}

async fn decide(
    guard: &Guard,
    line: &str,
    agent: Option<&Arc<Agent>>,
    summary: &mut Summary,
) -> Result<Value, String> {
    let (_, call) = parse(line, agent)?;
    let (outcome, d) = guard.pre_explained(&call);
    let mut v = json!({
        "effect": d.effect.as_str(),
        "rule": d.rule,
        "scope": d.scope.as_str(),
        "reason": d.reason,
        "checked": false,
        "verdict": Value::Null,
        "outcome": "forward",
    });
    if let Some(p) = d.prefilter {
        v["prefilter"] = json!(p.as_str());
    }
    match d.effect {
        Effect::Allow => summary.allow += 1,
        Effect::Ask => summary.ask += 1,
        Effect::Deny => summary.deny += 1,
    }
    match outcome {
        Outcome::Forward => {}
        Outcome::Refuse(_) => v["outcome"] = json!("refuse"),
        Outcome::Check(check) => {
            let report = check.report().await;
            describe(&mut v, &report);
            match report.judgement {
                PreJudgement::Pass => {}
                PreJudgement::Block { reason } | PreJudgement::Unavailable { reason } => {
                    summary.blocked += 1;
                    v["outcome"] = json!("refuse");
                    v["reason"] = json!(reason);
                }
            }
        }
    }
    Ok(v)
}

/// What Layer 2 did, in a decision line.
fn describe<J>(v: &mut Value, report: &Report<J>) {
    v["checked"] = json!(true);
    v["verdict"] = json!(report.verdict.as_str());
    v["mode"] = json!(report.mode.as_str());
    v["guardrail"] = json!(report.rule);
    v["rubric"] = json!(report.rubric);
}

async fn inspect(
    guard: &Guard,
    line: &str,
    agent: Option<&Arc<Agent>>,
    summary: &mut Summary,
) -> Result<Value, String> {
    let (input, call) = parse(line, agent)?;
    let mut result = input.result.ok_or("a post line carries `result`")?;
    let (redacted, report) = guard.judge_result(&call, &mut result).await;
    let redacted = redacted != PostOutcome::Pass;
    let mut v = json!({ "checked": false, "verdict": Value::Null, "outcome": "pass" });
    if let Some(report) = report {
        describe(&mut v, &report);
        match report.judgement {
            PostJudgement::Pass => {}
            PostJudgement::Sanitized => v["outcome"] = json!("sanitize"),
            PostJudgement::Block { reason } | PostJudgement::Unavailable { reason } => {
                v["outcome"] = json!("block");
                result = refusal_value(&reason, Era::Legacy);
            }
        }
    }
    if redacted && v["outcome"] == "pass" {
        v["outcome"] = json!("redact");
    }
    if v["outcome"] != "pass" {
        summary.blocked += 1;
        v["result"] = result;
    }
    Ok(v)
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
        let summary =
            crate::gate::pre::block_on(run(&config, Phase::Pre, None, input.as_bytes(), &mut out)).unwrap();
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
        assert_eq!(summary, Summary { allow: 1, ask: 0, deny: 1, blocked: 0, errors: 2 });
    }

    /// Decides `lines` as `agent`; returns each line's effect and scope.
    fn as_agent(config: &Config, agent: Option<&str>, lines: &[&str]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let input = lines.join("\n");
        crate::gate::pre::block_on(run(config, Phase::Pre, agent, input.as_bytes(), &mut out)).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|v| (v["effect"].as_str().unwrap().to_owned(), v["scope"].as_str().unwrap_or("").to_owned()))
            .collect()
    }

    #[test]
    fn an_agent_decides_under_its_layer_and_never_wider_than_the_config_denies() {
        let config = Config::parse(
            r#"
tools: [{ match: mcp__sh__run, kind: shell, command: /command }]
permissions:
  allow: ["Shell(git status)", mcp__fs__read]
  ask: ["Shell(git push:*)"]
  deny: ["Shell(rm:*)"]
agents:
  ro:   { token_env: T1, profile: readonly }
  wide: { token_env: T2, posture: yolo, profile: privileged, permissions: { allow: ["Shell(rm:*)", "Shell(git push:*)", mcp__fs__write] } }
  tight: { token_env: T3, permissions: { deny: [mcp__fs__read] } }
"#,
            "t",
        )
        .unwrap();
        let lines = [
            r#"{"tool":"mcp__sh__run","args":{"command":"rm -rf build"}}"#,
            r#"{"tool":"mcp__sh__run","args":{"command":"git push origin main"}}"#,
            r#"{"tool":"mcp__fs__read","args":{}}"#,
            r#"{"tool":"mcp__fs__write","args":{}}"#,
            r#"{"tool":"mcp__sh__run","args":{"command":"git status"}}"#,
        ];
        let effects =
            |agent| as_agent(&config, agent, &lines).into_iter().map(|(e, _)| e).collect::<Vec<_>>();
        assert_eq!(effects(None), ["deny", "ask", "allow", "ask", "allow"], "anonymous: the config's policy");
        // An agent's allow never lifts the config's deny or ask; its own posture and profile
        // lift only the floor (mcp__fs__write had no rule).
        assert_eq!(effects(Some("wide")), ["deny", "ask", "allow", "allow", "allow"]);
        // readonly: anything not proven read-only is denied, whatever the config allows.
        assert_eq!(effects(Some("ro")), ["deny", "deny", "deny", "deny", "allow"]);
        let tight = as_agent(&config, Some("tight"), &lines);
        assert_eq!(tight[2], ("deny".to_owned(), "agent".to_owned()), "the agent's own deny, in its scope");
        let mut out = Vec::new();
        let err = crate::gate::pre::block_on(run(&config, Phase::Pre, Some("nobody"), &b""[..], &mut out));
        assert!(err.unwrap_err().to_string().contains("ro, tight, wide"), "names the configured agents");
    }
}
