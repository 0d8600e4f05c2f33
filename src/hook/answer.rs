//! The hook's output: the JSON Claude Code reads on stdout (exit status 0).
//!
//! - `PreToolUse`: `hookSpecificOutput.permissionDecision` is `allow` (skip Claude Code's own
//!   prompt; its deny and ask rules still apply), `ask` (Claude Code asks its user, showing the
//!   reason) or `deny` (the tool does not run; the reason is shown to the model).
//! - `PostToolUse`: the tool has run. `decision: "block"` feeds `reason` to the model in place of
//!   going on as if nothing happened; `hookSpecificOutput.additionalContext` adds a note; for MCP
//!   tools `hookSpecificOutput.updatedMCPToolOutput` replaces the output the model reads. For a
//!   built-in tool nothing here can withhold the output itself (see docs/claude-code.md).

use crate::says::Said;
use serde_json::{json, Value};

use super::envelope::Event;

/// What to tell Claude Code before a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    Allow,
    Ask,
    Deny,
}

impl Permission {
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::Allow => "allow",
            Permission::Ask => "ask",
            Permission::Deny => "deny",
        }
    }
}

/// One hook invocation's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Before the call.
    Pre { permission: Permission, reason: String },
    /// After the call: nothing to say.
    Pass,
    /// After the call: the result is refused (blocked, or could not be judged and the rule fails
    /// closed). `replacement` is the MCP result the model reads instead, for MCP tools.
    Block { reason: String, replacement: Option<Value> },
    /// After the call: the result was redacted or sanitized. `replacement` as for a block; for a
    /// built-in tool the model is told, with the cleaned text, to use that instead.
    Rewritten { reason: String, replacement: Option<Value> },
    /// After the call: the result passes with a note to the model and the user (it was not
    /// judged, and the configured failure mode lets it pass).
    Note { reason: String },
}

impl Answer {
    /// The conservative answer when the hook cannot decide (bad input, proxy down, internal
    /// error): `permission` before a call, a block after it — never a silent allow.
    pub fn cannot_decide(event: Event, permission: Permission, why: &str) -> Answer {
        match (event, permission) {
            (Event::Pre, _) => Answer::Pre { permission, reason: Said::CannotDecide { why }.to_string() },
            (Event::Post, Permission::Deny) => Answer::Block {
                reason: Said::CannotInspect { why, withheld: true }.to_string(),
                replacement: None,
            },
            (Event::Post, _) => {
                Answer::Note { reason: Said::CannotInspect { why, withheld: false }.to_string() }
            }
        }
    }

    /// The permission or post decision, for logs and tests.
    pub fn label(&self) -> &'static str {
        match self {
            Answer::Pre { permission, .. } => permission.as_str(),
            Answer::Pass => "pass",
            Answer::Block { .. } => "block",
            Answer::Rewritten { .. } => "rewritten",
            Answer::Note { .. } => "note",
        }
    }

    /// The JSON object to print.
    pub fn to_json(&self) -> Value {
        let post = |extra: Value| {
            let mut specific = json!({ "hookEventName": Event::Post.as_str() });
            if let (Some(o), Value::Object(e)) = (specific.as_object_mut(), extra) {
                o.extend(e);
            }
            specific
        };
        match self {
            Answer::Pre { permission, reason } => json!({
                "hookSpecificOutput": {
                    "hookEventName": Event::Pre.as_str(),
                    "permissionDecision": permission.as_str(),
                    "permissionDecisionReason": reason,
                }
            }),
            Answer::Pass => json!({}),
            Answer::Block { reason, replacement } | Answer::Rewritten { reason, replacement } => {
                let mut v = json!({ "decision": "block", "reason": reason });
                if let Some(r) = replacement {
                    v["hookSpecificOutput"] = post(json!({ "updatedMCPToolOutput": r }));
                }
                v
            }
            Answer::Note { reason } => json!({
                "systemMessage": reason,
                "hookSpecificOutput": post(json!({ "additionalContext": reason })),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_use_claude_codes_field_names() {
        let a = Answer::Pre { permission: Permission::Ask, reason: "why".into() }.to_json();
        assert_eq!(a["hookSpecificOutput"]["hookEventName"], "PreToolUse");
        assert_eq!(a["hookSpecificOutput"]["permissionDecision"], "ask");
        assert_eq!(a["hookSpecificOutput"]["permissionDecisionReason"], "why");
        let b = Answer::Block { reason: "r".into(), replacement: Some(json!({"isError": true})) }.to_json();
        assert_eq!(b["decision"], "block");
        assert_eq!(b["hookSpecificOutput"]["hookEventName"], "PostToolUse");
        assert_eq!(b["hookSpecificOutput"]["updatedMCPToolOutput"]["isError"], true);
        assert_eq!(Answer::Pass.to_json(), json!({}));
    }

    #[test]
    fn not_deciding_is_never_an_allow() {
        for p in [Permission::Ask, Permission::Deny] {
            assert_eq!(Answer::cannot_decide(Event::Pre, p, "x").label(), p.as_str());
        }
        assert_eq!(Answer::cannot_decide(Event::Post, Permission::Deny, "x").label(), "block");
        assert_eq!(Answer::cannot_decide(Event::Post, Permission::Ask, "x").label(), "note");
    }
}
