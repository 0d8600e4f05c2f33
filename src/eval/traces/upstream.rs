//! The replay upstream: an MCP server (Streamable HTTP, JSON answers) on 127.0.0.1 that answers
//! each `tools/call` with the result recorded for that call in the session being replayed.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use serde_json::{json, Value};
use tokio::net::TcpListener;

use super::data::Step;

/// A running replay upstream.
pub struct Replay {
    pub url: String,
    state: Arc<State>,
}

#[derive(Default)]
struct State {
    /// The session being replayed: its steps and whether each was answered yet.
    script: Mutex<Vec<(Step, bool)>>,
    sessions: AtomicU64,
    /// Calls the upstream received (what the proxy forwarded).
    received: AtomicU64,
}

impl Replay {
    /// Binds 127.0.0.1:0 and serves until the process ends.
    pub async fn start() -> std::io::Result<Replay> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/mcp", listener.local_addr()?);
        let state = Arc::new(State::default());
        let serving = state.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let state = serving.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req| handle(state.clone(), req));
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, svc).await;
                });
            }
        });
        Ok(Replay { url, state })
    }

    /// The session whose recorded results the next calls get.
    pub fn load(&self, steps: &[Step]) {
        *lock(&self.state.script) = steps.iter().map(|s| (s.clone(), false)).collect();
    }

    /// How many calls reached the upstream so far.
    pub fn received(&self) -> u64 {
        self.state.received.load(Ordering::Relaxed)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn reply(status: StatusCode, session: Option<&str>, body: Option<Value>) -> Response<Full<Bytes>> {
    let mut b = Response::builder().status(status);
    if let Some(s) = session {
        b = b.header("mcp-session-id", s);
    }
    if body.is_some() {
        b = b.header("content-type", "application/json");
    }
    let bytes = body.map(|v| Bytes::from(v.to_string())).unwrap_or_default();
    b.body(Full::new(bytes)).unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

async fn handle(state: Arc<State>, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    match *req.method() {
        Method::POST => {}
        Method::DELETE => return Ok(reply(StatusCode::OK, None, None)),
        _ => return Ok(reply(StatusCode::METHOD_NOT_ALLOWED, None, None)),
    }
    let session = req.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let Ok(body) = req.into_body().collect().await.map(|c| c.to_bytes()) else {
        return Ok(reply(StatusCode::BAD_REQUEST, None, None));
    };
    let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
        let e = json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}});
        return Ok(reply(StatusCode::BAD_REQUEST, None, Some(e)));
    };
    let Some(id) = msg.get("id").cloned() else {
        return Ok(reply(StatusCode::ACCEPTED, session.as_deref(), None));
    };
    let (result, session) = match msg["method"].as_str().unwrap_or("") {
        "initialize" => {
            let n = state.sessions.fetch_add(1, Ordering::Relaxed);
            let info = json!({"name": "portcullis-trace-replay", "version": env!("CARGO_PKG_VERSION")});
            let init =
                json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": info});
            (init, Some(format!("replay-{n}")))
        }
        "ping" => (json!({}), session),
        "tools/list" => (json!({ "tools": tools(&state) }), session),
        "tools/call" => {
            state.received.fetch_add(1, Ordering::Relaxed);
            (answer(&state, &msg["params"]), session)
        }
        _ => {
            let e = json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":"method not found"}});
            return Ok(reply(StatusCode::OK, session.as_deref(), Some(e)));
        }
    };
    let body = json!({"jsonrpc":"2.0","id":id,"result":result});
    Ok(reply(StatusCode::OK, session.as_deref(), Some(body)))
}

/// Every tool the session calls, with an open schema.
fn tools(state: &State) -> Vec<Value> {
    let mut names: Vec<String> = lock(&state.script).iter().map(|(s, _)| s.tool.clone()).collect();
    names.sort();
    names.dedup();
    let schema = json!({"type": "object", "additionalProperties": true});
    names.into_iter().map(|n| json!({"name": n, "description": "", "inputSchema": schema})).collect()
}

/// The first unanswered step with this tool and these arguments (a refused step never arrives,
/// so steps are matched, not counted).
fn answer(state: &State, params: &Value) -> Value {
    let (name, args) = (params["name"].as_str().unwrap_or(""), &params["arguments"]);
    let mut script = lock(&state.script);
    let found = script.iter_mut().find(|(s, used)| !*used && s.tool == name && &s.arguments == args);
    match found {
        Some((step, used)) => {
            *used = true;
            json!({"content": [{"type": "text", "text": step.result}], "isError": false})
        }
        None => {
            json!({"content": [{"type": "text", "text": "no recorded result for this call"}], "isError": true})
        }
    }
}
