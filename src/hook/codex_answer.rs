//! The hook's answer in Codex CLI's words, translated from the answer the policy gave in Claude
//! Code's (one decision, two renderings).
//!
//! Codex reads a `PreToolUse` answer with `permissionDecision` `deny` (a non-empty
//! `permissionDecisionReason` is required) or `allow` **with** `updatedInput`; it rejects `ask`,
//! and a rejected answer is a failed hook, which Codex lets through. So a Layer 1 ask becomes a
//! deny that says a person must approve, and an allow echoes the very input that was judged as
//! `updatedInput` (Codex then runs exactly that). After a call Codex cannot replace an output
//! (`updatedMCPToolOutput` is ignored): a block or a redaction is `decision: "block"` with a
//! reason telling the model what not to use.
//! Source: openai/codex `codex-rs/hooks/src/engine/output_parser.rs` (commit 0ea83813).

use serde_json::{json, Value};

use super::answer::Permission;
use crate::says::{Said, BUILT_IN_BLOCKED};

/// What Codex's user is told when portcullis would have asked them.
pub const CANNOT_ASK: &str = "Codex hooks cannot ask a person, so the call is refused; run it yourself, or \
                              have the policy allow it";

/// A pre-call decision read back from a Claude Code answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pre {
    pub permission: Permission,
    pub reason: String,
}

impl Pre {
    /// Reads a `PreToolUse` answer; anything without a known decision is a deny.
    pub fn of_claude(answer: &Value) -> Pre {
        let specific = &answer["hookSpecificOutput"];
        let reason = specific["permissionDecisionReason"].as_str().unwrap_or_default().to_owned();
        let permission = match specific["permissionDecision"].as_str() {
            Some("allow") => Permission::Allow,
            Some("ask") => Permission::Ask,
            Some("deny") => Permission::Deny,
            _ => {
                let why = "the policy's answer carries no decision";
                return Pre { permission: Permission::Deny, reason: Said::CannotDecide { why }.to_string() };
            }
        };
        Pre { permission, reason }
    }

    /// The most restrictive of several decisions (deny, then ask, then allow); none is a deny.
    pub fn strictest(all: impl IntoIterator<Item = Pre>) -> Pre {
        let rank = |p: Permission| match p {
            Permission::Deny => 2,
            Permission::Ask => 1,
            Permission::Allow => 0,
        };
        all.into_iter().max_by_key(|p| rank(p.permission)).unwrap_or_else(|| Pre {
            permission: Permission::Deny,
            reason: Said::CannotDecide { why: "there was nothing to decide" }.to_string(),
        })
    }

    /// Codex's JSON for this decision; `input` is the `tool_input` that was judged.
    pub fn to_codex(&self, input: &Value) -> Value {
        match self.permission {
            // `allow` must carry `updatedInput`; with no input to echo, saying nothing is the allow.
            Permission::Allow if input.is_null() => json!({}),
            Permission::Allow => json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "allow",
                    // Codex reads no reason for an allow; it is kept for whoever reads the hook log.
                    "permissionDecisionReason": self.reason,
                    "updatedInput": input,
                }
            }),
            Permission::Ask => deny(&format!("{} {CANNOT_ASK}.", self.reason.trim_end_matches('.'))),
            Permission::Deny => deny(&self.reason),
        }
    }
}

fn deny(reason: &str) -> Value {
    let reason = match reason.trim() {
        "" => Said::CannotDecide { why: "no reason was given" }.to_string(),
        r => r.to_owned(),
    };
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    })
}

/// Codex's JSON for a `PostToolUse` answer given in Claude Code's words, for `tool`.
pub fn post_to_codex(tool: &str, answer: &Value) -> Value {
    let Some(object) = answer.as_object() else { return unknown() };
    if object.is_empty() {
        return json!({});
    }
    if answer["decision"] == "block" {
        let reason = answer["reason"].as_str().unwrap_or_default();
        let replacement = &answer["hookSpecificOutput"]["updatedMCPToolOutput"];
        if replacement.is_object() && replacement["isError"] != true {
            // A cleaned MCP result Codex cannot show: the model gets the cleaned text instead.
            let cleaned: Vec<&str> = replacement["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|b| b["text"].as_str())
                .collect();
            let reason = Said::HookDisregard { tool, cleaned: &cleaned.join("\n") }.to_string();
            return json!({ "decision": "block", "reason": reason });
        }
        let reason = match reason.contains(BUILT_IN_BLOCKED) {
            true => reason.to_owned(),
            false => format!("{reason} {BUILT_IN_BLOCKED}"),
        };
        return json!({ "decision": "block", "reason": reason.trim() });
    }
    match (&answer["systemMessage"], &answer["hookSpecificOutput"]["additionalContext"]) {
        (Value::String(note), Value::String(context)) => json!({
            "systemMessage": note,
            "hookSpecificOutput": { "hookEventName": "PostToolUse", "additionalContext": context },
        }),
        _ => unknown(),
    }
}

fn unknown() -> Value {
    let why = "the policy's answer after the call was not one portcullis knows";
    let reason = Said::CannotInspect { why, withheld: true }.to_string();
    json!({ "decision": "block", "reason": format!("{reason} {BUILT_IN_BLOCKED}") })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::answer::Answer;

    fn pre(p: Permission, r: &str) -> Pre {
        Pre { permission: p, reason: r.into() }
    }

    #[test]
    fn every_claude_pre_answer_reads_back_and_renders_as_codex_accepts_it() {
        let input = json!({"command": "ls"});
        for p in [Permission::Allow, Permission::Ask, Permission::Deny] {
            let claude = Answer::Pre { permission: p, reason: "why".into() }.to_json();
            let read = Pre::of_claude(&claude);
            assert_eq!(read, pre(p, "why"));
            let codex = read.to_codex(&input);
            let specific = &codex["hookSpecificOutput"];
            match p {
                Permission::Allow => {
                    assert_eq!(specific["permissionDecision"], "allow");
                    assert_eq!(specific["updatedInput"], input);
                }
                _ => {
                    assert_eq!(specific["permissionDecision"], "deny");
                    assert!(specific["permissionDecisionReason"].as_str().unwrap().starts_with("why"));
                }
            }
        }
        let asked = pre(Permission::Ask, "portcullis asks before Bash.").to_codex(&input);
        let reason = asked["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains(CANNOT_ASK), "{reason}");
        assert_eq!(pre(Permission::Allow, "").to_codex(&Value::Null), json!({}));
        let empty = pre(Permission::Deny, " ").to_codex(&input);
        assert!(!empty["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap().is_empty());
    }

    #[test]
    fn an_answer_without_a_decision_and_no_answer_at_all_are_denials() {
        for bad in [json!({}), json!([]), json!({"hookSpecificOutput": {"permissionDecision": "defer"}})] {
            assert_eq!(Pre::of_claude(&bad).permission, Permission::Deny, "{bad}");
        }
        assert_eq!(Pre::strictest([]).permission, Permission::Deny);
        let all = [pre(Permission::Allow, "a"), pre(Permission::Ask, "b"), pre(Permission::Allow, "c")];
        assert_eq!(Pre::strictest(all).reason, "b");
        let all = [pre(Permission::Ask, "b"), pre(Permission::Deny, "d"), pre(Permission::Allow, "c")];
        assert_eq!(Pre::strictest(all).reason, "d");
    }

    #[test]
    fn post_answers_never_rely_on_an_output_replacement_codex_ignores() {
        assert_eq!(post_to_codex("Bash", &Answer::Pass.to_json()), json!({}));
        let cleaned = json!({"content": [{"type": "text", "text": "token=[REDACTED]"}]});
        let rewritten = Answer::Rewritten { reason: "r".into(), replacement: Some(cleaned) }.to_json();
        let codex = post_to_codex("mcp__fs__read", &rewritten);
        assert_eq!(codex["decision"], "block");
        assert!(codex["reason"].as_str().unwrap().contains("token=[REDACTED]"));
        assert!(codex.get("hookSpecificOutput").is_none());
        let refusal = json!({"content": [{"type": "text", "text": "no"}], "isError": true});
        let blocked = Answer::Block { reason: "blocked".into(), replacement: Some(refusal) }.to_json();
        let codex = post_to_codex("mcp__fs__read", &blocked);
        assert!(codex["reason"].as_str().unwrap().ends_with(BUILT_IN_BLOCKED));
        let note = Answer::Note { reason: "careful".into() }.to_json();
        assert_eq!(post_to_codex("Bash", &note)["hookSpecificOutput"]["additionalContext"], "careful");
        assert_eq!(post_to_codex("Bash", &json!({"what": 1}))["decision"], "block");
    }
}
