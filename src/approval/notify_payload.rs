//! What an announcement of a parked ask says: the JSON a `webhook` receives and the message a
//! Slack incoming webhook posts. Arguments go out as the audit log writes them — a digest and a
//! preview with every secret the local detectors find masked — and the session as a digest:
//! a receiver (a chat workspace) is not trusted with either.

use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::Ask;

/// One parked ask, as every target is told about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Announcement {
    /// Always `approval.pending`.
    pub event: &'static str,
    /// The approval id (`POST /approvals/{id}`).
    pub id: u64,
    pub tool: String,
    /// The arguments' masked preview (at most 160 characters).
    pub arguments: String,
    /// SHA-256 of the canonical arguments, 16 bytes hex (the audit log's `digest`).
    pub arguments_digest: String,
    pub reason: String,
    /// `floor`, `configured`, `checker` or `flagged`.
    pub source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// SHA-256 of the session id, 8 bytes hex: enough to tell sessions apart, useless to join one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// When the ask times out (RFC 3339, UTC).
    pub deadline: String,
    /// The console, at this ask (`approvals.console_url` + `#approval-{id}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub console: Option<String>,
}

impl Announcement {
    /// Describes `ask`, parked as `id` at `now`, deciding by `now + timeout`.
    pub fn new(
        id: u64,
        ask: &Ask,
        now: SystemTime,
        timeout: Duration,
        console: Option<&url::Url>,
    ) -> Announcement {
        let args =
            serde_json::from_str::<Value>(&ask.args).unwrap_or_else(|_| Value::String(ask.args.clone()));
        let (arguments_digest, arguments) = crate::audit::describe(&args);
        Announcement {
            event: "approval.pending",
            id,
            tool: ask.tool.clone(),
            arguments,
            arguments_digest,
            reason: ask.reason.clone(),
            source: ask.source.as_str(),
            agent: ask.agent.as_ref().map(|a| a.id.to_string()),
            session: ask.session.as_deref().map(session_digest),
            deadline: crate::identity::delegation::rfc3339(now + timeout),
            console: console.map(|c| {
                let mut c = c.clone();
                c.set_fragment(Some(&format!("approval-{id}")));
                c.to_string()
            }),
        }
    }

    /// The `webhook` body.
    pub fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The Slack incoming-webhook body: `text` (the notification line) and one section block.
    /// Everything the agent can influence (the tool name, the reason that quotes it, the
    /// arguments, the agent's name) is escaped for Slack's mrkdwn (`&`, `<`, `>`), so it cannot
    /// turn into a link or a mention, and sits in a code span it cannot close (a backtick is
    /// shown as `'`), where `*bold*`, `_italic_` and bare links are not formatted.
    pub fn slack(&self) -> String {
        let tool = code(&self.tool);
        let text = format!("Approval needed: {tool} (id {})", self.id);
        let mut body = format!(
            "*Approval needed* — {tool} (id {})\n*Why:* {}\n*Arguments:* {}\n*Decide by:* {}",
            self.id,
            code(&self.reason),
            code(&self.arguments),
            self.deadline
        );
        if let Some(agent) = &self.agent {
            body.push_str(&format!("\n*Agent:* {}", code(agent)));
        }
        if let Some(console) = &self.console {
            body.push_str(&format!("\n<{console}|Open the console>"));
        }
        serde_json::json!({
            "text": text,
            "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": body}}],
        })
        .to_string()
    }
}

/// `text` as one mrkdwn code span it cannot close: escaped, backticks shown as `'`, one line.
fn code(text: &str) -> String {
    let inner: String = slack_escape(text)
        .chars()
        .map(|c| {
            if c == '`' {
                '\''
            } else if c.is_control() {
                ' '
            } else {
                c
            }
        })
        .collect();
    format!("`{inner}`")
}

/// The session's digest as announcements carry it.
pub fn session_digest(session: &str) -> String {
    let d: [u8; 32] = Sha256::digest(session.as_bytes()).into();
    d[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Slack's three control characters in mrkdwn text, as its documentation escapes them.
fn slack_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::Source;

    fn ask(args: &str) -> Ask {
        Ask {
            tool: "mcp__sh__run".into(),
            args: args.into(),
            reason: "not proven read-only <@U123>".into(),
            source: Source::Floor,
            session: Some("session-secret-id".into()),
            definition: 0,
            agent: None,
        }
    }

    #[test]
    fn an_announcement_carries_masked_arguments_a_hashed_session_and_the_deadline() {
        let key = "ghp_".to_owned() + "R7q2ZkX9vLw3Tn8YbC5mPd1HsGf6Ja4Ue0Qx";
        let a = ask(&serde_json::json!({"command": format!("deploy --key {key}")}).to_string());
        let console = url::Url::parse("https://ops.example.com/console").unwrap();
        let n = Announcement::new(7, &a, SystemTime::UNIX_EPOCH, Duration::from_secs(120), Some(&console));
        assert_eq!(n.deadline, "1970-01-01T00:02:00Z");
        assert_eq!(n.console.as_deref(), Some("https://ops.example.com/console#approval-7"));
        assert_eq!(n.session.as_deref(), Some(session_digest("session-secret-id").as_str()));
        for body in [n.json(), n.slack()] {
            assert!(!body.contains(&key), "{body}");
            assert!(!body.contains("session-secret-id"), "{body}");
            assert!(body.contains("deploy --key"), "{body}");
        }
    }

    #[test]
    fn slack_text_cannot_become_a_mention_or_a_link() {
        let n = Announcement::new(
            1,
            &ask(r#"{"x":"<https://evil|click>"}"#),
            SystemTime::UNIX_EPOCH,
            Duration::ZERO,
            None,
        );
        let v: Value = serde_json::from_str(&n.slack()).unwrap();
        let text = v["blocks"][0]["text"]["text"].as_str().unwrap();
        assert!(!text.contains('<') && !text.contains('>'), "{text}");
        assert!(text.contains("&lt;@U123&gt;"), "{text}");
    }
}
