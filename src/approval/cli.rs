//! `portcullis approvals list | allow ID [--always] | deny ID`: the operator's side of the
//! approvals API, over HTTP to a running proxy's admin listener.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

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
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let base = admin.trim_end_matches('/');
    let req = match &action {
        Action::List => http::Request::get(format!("{base}/approvals")).body(Full::default())?,
        Action::Status => http::Request::get(format!("{base}/status")).body(Full::default())?,
        Action::Clear { session } => {
            http::Request::post(format!("{base}/sessions/{session}/clear")).body(Full::default())?
        }
        Action::Decide { id, decision } => http::Request::post(format!("{base}/approvals/{id}"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(serde_json::json!({"decision": decision.as_str()}).to_string())))?,
    };
    let (mut parts, body) = req.into_parts();
    parts.headers.insert(http::header::AUTHORIZATION, format!("Bearer {token}").parse()?);
    let resp = client.request(http::Request::from_parts(parts, body)).await?;
    let status = resp.status();
    let bytes = resp.into_body().collect().await?.to_bytes();
    let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    if !status.is_success() {
        let why = v["error"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| String::from_utf8_lossy(&bytes).into_owned());
        anyhow::bail!("{status}: {why}");
    }
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
