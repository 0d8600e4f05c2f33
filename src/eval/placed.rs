//! A row put on a tool, as the proxy would see it, and judged by the guardrail pipeline.

use serde_json::{json, Map, Value};

use super::data::{Payload, Row};
use super::{Decider, Judged, Options};
use crate::call::ToolCall;
use crate::checker::rubric::Rubrics;
use crate::checker::Phase;
use crate::gate::Guard;
use crate::mcp::era::Era;
use crate::rules::kinds::KindSpec;

/// The tool commands go on without `--tool`: Claude Code's `Bash`, a shell tool in every config.
pub const COMMAND_TOOL: &str = "Bash";

/// The tool bare results go on without `--tool` (under `--upstream`).
pub const RESULT_TOOL: &str = "read_text";

/// Why a row cannot be put on a tool.
#[derive(Debug, thiserror::Error)]
pub enum PlacementError {
    #[error("--tool {tool}: commands go on a shell tool, and the config says {tool} is a {kind} tool")]
    NotShell { tool: String, kind: &'static str },
}

/// A row on its tool: arguments for pre, a result for post.
#[derive(Debug)]
pub struct Placed {
    call: ToolCall,
    body: Value,
    row: Row,
}

/// `tool` qualified: names already qualified (or Claude Code's) stay, bare ones go under
/// `upstream`.
fn qualify(tool: &str, upstream: &str, guard: &Guard) -> String {
    let known = !matches!(guard.kinds().kind_of(tool), KindSpec::Generic);
    match tool.starts_with("mcp__") || tool.starts_with("http__") || known {
        true => tool.to_owned(),
        false => format!("mcp__{upstream}__{tool}"),
    }
}

/// An object with `value` at JSON pointer `pointer` (`/command`, `/input/cmd`).
fn at_pointer(pointer: &str, value: Value) -> Value {
    let keys: Vec<&str> = pointer.split('/').skip(1).collect();
    keys.into_iter().rev().fold(value, |inner, key| {
        let key = key.replace("~1", "/").replace("~0", "~");
        Value::Object(Map::from_iter([(key, inner)]))
    })
}

/// A tool result carrying `text`, as an MCP server sends one.
fn result_of(text: String) -> Value {
    json!({ "content": [{ "type": "text", "text": text }] })
}

/// One line of at most 100 characters.
fn excerpt(text: &str) -> String {
    let flat: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).take(100).collect();
    match text.chars().count() > 100 {
        true => format!("{flat}…"),
        false => flat,
    }
}

impl Placed {
    pub fn new(row: &Row, phase: Phase, guard: &Guard, opts: &Options) -> Result<Placed, PlacementError> {
        let default_tool = |fallback: &str| {
            let named = opts.tool.as_deref().unwrap_or(fallback);
            qualify(named, &opts.upstream, guard)
        };
        let (tool, body) = match (&row.payload, phase) {
            (Payload::Command(cmd), Phase::Pre) => {
                let tool = default_tool(COMMAND_TOOL);
                match guard.kinds().kind_of(&tool) {
                    KindSpec::Shell { command, .. } => {
                        let args = at_pointer(command, Value::String(cmd.clone()));
                        (tool, args)
                    }
                    other => return Err(PlacementError::NotShell { tool, kind: other.name() }),
                }
            }
            (Payload::Command(cmd), Phase::Post) => (default_tool(RESULT_TOOL), result_of(cmd.clone())),
            (Payload::Call { tool, args }, Phase::Pre) => {
                (qualify(tool, &opts.upstream, guard), args.clone())
            }
            (Payload::Call { tool, args }, Phase::Post) => {
                (qualify(tool, &opts.upstream, guard), result_of(args.to_string()))
            }
            (Payload::Text(text), Phase::Pre) => (default_tool(RESULT_TOOL), json!({ "text": text })),
            (Payload::Text(text), Phase::Post) => (default_tool(RESULT_TOOL), result_of(text.clone())),
        };
        let raw = serde_json::value::to_raw_value(&body).ok();
        let (upstream, name) = tool
            .strip_prefix("mcp__")
            .or_else(|| tool.strip_prefix("http__"))
            .and_then(|rest| rest.split_once("__"))
            .unwrap_or(("", tool.as_str()));
        let mut call = ToolCall::mcp(upstream.into(), name, raw.as_deref(), Era::Legacy);
        call.qualified = tool.clone();
        Ok(Placed { call, body, row: row.clone() })
    }

    /// Judges the row through the pipeline the proxy runs.
    pub async fn judge(self, guard: &Guard, phase: Phase, rubrics: &Rubrics) -> Judged {
        let Placed { call, mut body, row } = self;
        let text = match &row.payload {
            Payload::Text(t) | Payload::Command(t) => t.clone(),
            Payload::Call { args, .. } => args.to_string(),
        };
        let mut j = Judged {
            line: row.line,
            label: row.label.name.clone(),
            positive: row.label.positive,
            source: row.source.clone(),
            tool: call.qualified.clone(),
            excerpt: excerpt(&text),
            rule: None,
            rubric: None,
            decided_by: Decider::Uncovered,
            verdict: None,
            flagged: false,
            model_latency: None,
            layer1: None,
        };
        let Some(g) = guard.guardrails() else { return j };
        let kind = guard.kinds().kind_of(&call.qualified);
        let versioned = |name: &str| match rubrics.get(name) {
            Some(r) => format!("{}@{}", r.name, r.version),
            None => name.to_owned(),
        };
        let report = match phase {
            Phase::Pre => {
                // Layer 1's decision carries the read-only pre-filter, as the proxy computes it.
                let d = guard.decide(&call);
                j.layer1 = Some(d.effect.as_str());
                let Some(rule) = g.pre_rule(&call.qualified, kind) else { return j };
                j.rule = Some(rule.label.clone());
                j.rubric = Some(versioned(rule.rubric_for(Phase::Pre, kind)));
                let Some(job) = g.pre_job(&call.qualified, kind, &body, d.prefilter) else {
                    j.decided_by = Decider::Prefilter;
                    return j;
                };
                let r = g.pre(job.keyed(call.share_key())).await;
                (r.verdict, r.decided, r.rule, r.rubric)
            }
            Phase::Post => {
                // The same post phase as the proxy's (the `redact` list first).
                let (_, report) = guard.judge_result(&call, &mut body).await;
                let Some(r) = report else { return j };
                (r.verdict, r.decided, r.rule, r.rubric)
            }
        };
        let (verdict, decided, rule, rubric) = report;
        j.rule = Some(rule);
        j.rubric = Some(rubric);
        j.decided_by = decided.tier.into();
        j.verdict = Some(verdict.as_str());
        j.flagged = verdict == crate::telemetry::checker_metrics::CheckLabel::Unsafe;
        j.model_latency = decided.model_latency;
        j
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_built_at_the_tools_pointer() {
        assert_eq!(at_pointer("/command", json!("ls")), json!({"command": "ls"}));
        assert_eq!(at_pointer("/input/a~1b", json!("ls")), json!({"input": {"a/b": "ls"}}));
        assert_eq!(excerpt("a\nb"), "a b");
        assert_eq!(excerpt(&"x".repeat(101)).chars().count(), 101);
    }
}
