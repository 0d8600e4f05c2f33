//! `portcullis approvals list | allow ID [--always] | deny ID`: the operator's side of the
//! approvals API, over HTTP to a running proxy's admin listener.

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
                let mut out = String::new();
                for p in pending {
                    out.push_str(&format!(
                        "{:>4}  {}  {}\n      why: {}  ({}session {}, {})\n",
                        p["id"],
                        p["tool"].as_str().unwrap_or(""),
                        p["args"].as_str().unwrap_or(""),
                        p["reason"].as_str().unwrap_or(""),
                        p["agent"].as_str().map(|a| format!("agent {a}, ")).unwrap_or_default(),
                        p["session"].as_str().unwrap_or("-"),
                        p["source"].as_str().unwrap_or(""),
                    ));
                }
                out.trim_end().to_owned()
            }
        }
        Action::Decide { id, decision } => format!("call {id}: {}", decision.as_str()),
        Action::Status => serde_json::to_string_pretty(&v)?,
        Action::Clear { session } => format!("session {session}: cleared"),
    })
}
