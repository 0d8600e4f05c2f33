//! Replays trace sessions through the real proxy: one MCP session per trace, each step a
//! `tools/call`, and what the proxy did with it read back from its audit line.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{json, Value};

use super::data::{Label, Trace};
use super::mechanism::{classify, Checker, Mechanism};
use super::upstream::Replay;
use crate::app::Running;
use crate::audit::{Record, Stage};

type HttpClient = Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>;

/// What the proxy did with one recorded call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "fate", content = "by")]
pub enum Fate {
    Forwarded,
    Refused(Mechanism),
}

/// One replayed step.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Replayed {
    pub session: String,
    pub step: usize,
    pub tool: String,
    pub label: Label,
    pub fate: Fate,
    /// The refusal's rule and reason, as audited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The proxy withheld or rewrote the result it forwarded (post phase).
    pub result_changed: bool,
}

/// Why a replay broke off.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("the proxy did not answer {what}: {detail}")]
    Proxy { what: String, detail: String },
}

/// An MCP client of the proxy, one session.
struct Agent {
    client: HttpClient,
    url: String,
    session: Option<String>,
    next_id: u64,
}

impl Agent {
    async fn send(&mut self, body: Value) -> Result<Value, ReplayError> {
        let what = body["method"].as_str().unwrap_or("").to_owned();
        let fail = |detail: String| ReplayError::Proxy { what: what.clone(), detail };
        let mut req = http::Request::post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18");
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        let req = req.body(Full::new(Bytes::from(body.to_string()))).map_err(|e| fail(e.to_string()))?;
        let resp = self.client.request(req).await.map_err(|e| fail(e.to_string()))?;
        if let Some(s) = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
            self.session = Some(s.to_owned());
        }
        let bytes = resp.into_body().collect().await.map_err(|e| fail(e.to_string()))?.to_bytes();
        if let Ok(v) = serde_json::from_slice(&bytes) {
            return Ok(v);
        }
        // An answer streamed as SSE: the message is its last `data:`.
        let text = String::from_utf8_lossy(&bytes);
        let data = text.lines().rev().find_map(|l| l.strip_prefix("data:")).unwrap_or("null");
        Ok(serde_json::from_str(data.trim()).unwrap_or(Value::Null))
    }

    async fn rpc(&mut self, method: &str, params: Value) -> Result<Value, ReplayError> {
        self.next_id += 1;
        self.send(json!({"jsonrpc":"2.0","id":self.next_id,"method":method,"params":params})).await
    }

    async fn open(&mut self) -> Result<(), ReplayError> {
        let client = json!({"name": "portcullis-eval-traces", "version": env!("CARGO_PKG_VERSION")});
        let params = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client});
        self.rpc("initialize", params).await?;
        self.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"})).await?;
        self.rpc("tools/list", json!({})).await?;
        Ok(())
    }
}

/// The proxy's admin listener, where an operator-trusted front records what the user asked.
pub struct Admin {
    pub url: String,
    pub token: String,
}

impl Admin {
    /// Records `prompt` as what the user asked in MCP session `session`
    /// (`POST /sessions/{id}/task`): the channel the agent does not control.
    async fn record_prompt(
        &self,
        client: &HttpClient,
        session: &str,
        prompt: &str,
    ) -> Result<(), ReplayError> {
        let fail = |detail: String| ReplayError::Proxy { what: "POST /sessions/{id}/task".into(), detail };
        let body = json!({ "task": prompt }).to_string();
        let req = http::Request::post(format!("{}/sessions/{session}/task", self.url))
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {}", self.token))
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| fail(e.to_string()))?;
        let resp = client.request(req).await.map_err(|e| fail(e.to_string()))?;
        match resp.status().is_success() {
            true => Ok(()),
            false => Err(fail(format!("answered {}", resp.status()))),
        }
    }
}

/// How a replay attributes refusals.
pub struct Attribution {
    pub guardrail_labels: Vec<String>,
    pub checker: Checker,
}

/// Replays every trace, in order, through `proxy` (at `url`, the upstream's route) in front of
/// `replay`, each session's prompt recorded first through `admin`.
pub async fn replay_all(
    traces: &[Trace],
    proxy: &Running,
    url: &str,
    admin: &Admin,
    replay: &Replay,
    how: &Attribution,
    progress: bool,
) -> Result<Vec<Replayed>, ReplayError> {
    let mut out = Vec::new();
    for (n, trace) in traces.iter().enumerate() {
        replay.load(&trace.steps);
        let mut agent = Agent { client: client_of(n), url: url.to_owned(), session: None, next_id: 0 };
        agent.open().await?;
        if let Some(prompt) = &trace.prompt {
            let Some(session) = &agent.session else {
                let detail = "no Mcp-Session-Id to record the user's prompt under".into();
                return Err(ReplayError::Proxy { what: "initialize".into(), detail });
            };
            admin.record_prompt(&agent.client, session, prompt).await?;
        }
        for (i, step) in trace.steps.iter().enumerate() {
            let seen = audit_len(proxy);
            let reached = replay.received();
            let answer =
                agent.rpc("tools/call", json!({"name": step.tool, "arguments": step.arguments})).await?;
            let lines = new_lines(proxy, seen);
            let pre = lines
                .iter()
                .rev()
                .find(|r| r.phase == Stage::Pre && r.tool.ends_with(&format!("__{}", step.tool)));
            let post_changed = lines.iter().any(|r| r.phase == Stage::Post && r.outcome != "forwarded");
            let forwarded = replay.received() > reached;
            let (fate, rule, reason) = match pre {
                Some(r) if r.outcome != "forwarded" || !forwarded => {
                    let named = r.rule.clone().or_else(|| r.reason.clone()).unwrap_or_default();
                    let m = classify(&named, &how.guardrail_labels, how.checker);
                    (Fate::Refused(m), r.rule.clone(), r.reason.clone())
                }
                Some(_) => (Fate::Forwarded, None, None),
                None if forwarded => (Fate::Forwarded, None, None),
                None => (Fate::Refused(Mechanism::Rule), None, Some(answer.to_string())),
            };
            out.push(Replayed {
                session: trace.id.clone(),
                step: i,
                tool: step.tool.clone(),
                label: step.label,
                fate,
                rule,
                reason,
                result_changed: forwarded && post_changed,
            });
        }
        if progress && (n + 1) % 50 == 0 {
            eprintln!("portcullis eval: {}/{} sessions", n + 1, traces.len());
        }
    }
    Ok(out)
}

/// The client of the `n`th session, calling from a loopback address of its own
/// (127.1.x.y): the proxy keys per-caller state (the flow index, what a caller already sent) by
/// the address an anonymous caller calls from, and each recorded session is another user's
/// agent — one address for all would carry what one session read into the next.
fn client_of(n: usize) -> HttpClient {
    let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
    let [_, _, hi, lo] = u32::try_from(n % (1 << 16)).unwrap_or(0).to_be_bytes();
    http.set_local_address(Some(std::net::Ipv4Addr::new(127, 1, hi, lo).into()));
    Client::builder(TokioExecutor::new()).build(http)
}

/// The newest audit line, as a mark to read the lines after it.
fn audit_len(proxy: &Running) -> Option<String> {
    proxy.shared.guard.load().audit().recent().last().map(mark)
}

fn mark(r: &Record) -> String {
    serde_json::to_string(r).unwrap_or_default()
}

/// The audit lines written after the line `seen` (the ring keeps [`super::AUDIT_RING`] lines,
/// far more than one call writes).
fn new_lines(proxy: &Running, seen: Option<String>) -> Vec<Record> {
    let all = proxy.shared.guard.load().audit().recent();
    let start = match seen {
        None => 0,
        Some(m) => all.iter().rposition(|r| mark(r) == m).map_or(0, |i| i + 1),
    };
    all.into_iter().skip(start).collect()
}
