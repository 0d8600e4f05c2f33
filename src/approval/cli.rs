//! `portcullis approvals list | allow ID [--always] | deny ID`: the operator's side of the
//! approvals API, over HTTP to a running proxy's admin listener. What it prints of a call is
//! [`inert`]: a terminal shows the agent's text, never obeys it.

use crate::inert::{inert, inert_json};

/// What to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    List,
    /// Pending count and flagged sessions.
    Status,
    /// Clears a session the repeated-denial breaker flagged.
    Clear {
        session: String,
    },
    Decide {
        id: u64,
        decision: super::Choice,
    },
}

/// Runs `action` against `admin` (e.g. `http://127.0.0.1:8687`) with `token`; returns what to print.
pub async fn run(admin: &str, token: &str, action: Action) -> anyhow::Result<String> {
    let base = admin.trim_end_matches('/');
    let (req, body) = match &action {
        Action::List => (http::Request::get(format!("{base}/approvals")), None),
        Action::Status => (http::Request::get(format!("{base}/status")), None),
        Action::Clear { session } => (http::Request::post(format!("{base}/sessions/{session}/clear")), None),
        Action::Decide { id, decision } => (
            http::Request::post(format!("{base}/approvals/{id}")),
            Some(serde_json::json!({"decision": decision.as_str()})),
        ),
    };
    let v = super::always_cli::exchange(token, req, body).await?;
    Ok(match action {
        Action::List => {
            let pending = v["pending"].as_array().cloned().unwrap_or_default();
            if pending.is_empty() {
                "no calls are waiting for approval".to_owned()
            } else {
                pending.iter().map(listed).collect::<String>().trim_end().to_owned()
            }
        }
        Action::Decide { id, decision } => format!("call {id}: {}", decision.as_str()),
        Action::Status => inert_json(&serde_json::to_string_pretty(&v)?).into_owned(),
        Action::Clear { session } => format!("session {}: cleared", inert(&session)),
    })
}

/// One parked call as `approvals list` prints it: every field the agent may have chosen (the
/// tool's name, the reason quoting it, its session, its agent) [`inert`], the arguments as JSON
/// made [`inert_json`].
fn listed(p: &serde_json::Value) -> String {
    let text = |key: &str| p[key].as_str().map(inert);
    format!(
        "{:>4}  {}  {}\n      why: {}  ({}session {}, {})\n",
        p["id"],
        text("tool").unwrap_or_default(),
        p["args"].as_str().map(inert_json).unwrap_or_default(),
        text("reason").unwrap_or_default(),
        text("agent").map(|a| format!("agent {a}, ")).unwrap_or_default(),
        text("session").unwrap_or(std::borrow::Cow::Borrowed("-")),
        text("source").unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_parked_call_is_listed_on_its_two_lines_whatever_its_fields_hold() {
        let forged = "write_note\u{1b}]8;;https://evil.example\u{7}ok\r\n  rule: allowed\u{202e}";
        let p = json!({
            "id": 3, "tool": forged, "args": "{\"a\":\"\u{9b}x\\\"\"}", "reason": format!("asked: {forged}"),
            "agent": "a\u{2066}", "session": "s\n", "source": "floor",
        });
        let shown = listed(&p);
        assert_eq!(shown.lines().count(), 2, "{shown}");
        let raw = |c: char| c != '\n' && (c.is_control() || crate::inert::escaped(c));
        assert!(!shown.chars().any(raw), "{shown}");
        assert!(shown.contains("write_note\\u{1b}]8;;https://evil.example\\u{7}ok\\u{d}\\u{a}"), "{shown}");
        assert!(shown.contains(r#"{"a":"\u009bx\""}"#), "the arguments stay JSON: {shown}");
    }
}
