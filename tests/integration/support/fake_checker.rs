//! A fake checker model: a real HTTP server on 127.0.0.1:0 speaking the OpenAI Chat Completions
//! wire format (`POST /v1/chat/completions`), answering each request as a script says. It is the
//! only test double the checker gets: whatever talks to it goes through real sockets and a real
//! client's parsing.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::task::AbortHandle;

/// How the fake answers one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A completion whose content is this text, verbatim.
    Verdict(String),
    /// `{"safe":true,…}`.
    Safe,
    /// `{"safe":false,"reason":…}`.
    Unsafe(String),
    /// `{"safe":false,"reason":…,"sanitized_content":…}`.
    Sanitize { reason: String, content: String },
    /// This status and body (JSON or not).
    Status(u16, String),
    /// 200 with this body, which is not a completion (nor, usually, JSON).
    Garbage(String),
    /// 200 with a completion cut off halfway.
    Truncated,
    /// To a `json_schema` request, OpenAI's 400 for a model without structured outputs; to any
    /// other, [`Reply::Safe`].
    RejectJsonSchema,
    /// To a `json_schema` request, this status and body (llama-cpp-python's server answers a
    /// 500 carrying its validation error for `response_format.type`); to any other, Safe.
    RejectJsonSchemaAs(u16, String),
    /// Never answers.
    Hang,
    /// A prompt over `n_ctx` tokens (estimated as bytes / 4) gets the 400 `server` sends for a
    /// prompt that exceeds its context window; a shorter one gets [`Reply::Safe`].
    Context { server: Server, n_ctx: usize },
    /// 200 with `content: null` and this `refusal` (OpenAI's structured-output refusal).
    Refusal(String),
    /// 200 with `finish_reason: "content_filter"` and no content (OpenAI, Azure).
    ContentFilter,
}

/// Which model server's context-overflow answer [`Reply::Context`] imitates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// llama.cpp's `llama-server` (`exceed_context_size_error`).
    LlamaCpp,
    /// vLLM's OpenAI-compatible server (`BadRequestError`, "maximum context length").
    Vllm,
    /// OpenAI (`context_length_exceeded`).
    OpenAi,
}

/// What a model server counts as the prompt's tokens, roughly (bytes / 4).
pub fn prompt_tokens(request: &Request) -> usize {
    (request.system().len() + request.user().len()) / 4
}

fn context_exceeded(server: Server, tokens: usize, n_ctx: usize) -> String {
    match server {
        Server::LlamaCpp => json!({"error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": tokens,
            "n_ctx": n_ctx,
        }}),
        Server::Vllm => json!({
            "object": "error",
            "message": format!("This model's maximum context length is {n_ctx} tokens. However, you requested {} tokens ({tokens} in the messages, 512 in the completion). Please reduce the length of the messages or completion.", tokens + 512),
            "type": "BadRequestError",
            "param": null,
            "code": 400,
        }),
        Server::OpenAi => json!({"error": {
            "message": format!("This model's maximum context length is {n_ctx} tokens. However, your messages resulted in {tokens} tokens. Please reduce the length of the messages."),
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }}),
    }
    .to_string()
}

/// A request the fake received.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    pub headers: http::HeaderMap,
    /// `Null` when the body was not JSON.
    pub body: Value,
}

impl Request {
    pub fn system(&self) -> &str {
        self.message("system")
    }

    pub fn user(&self) -> &str {
        self.message("user")
    }

    /// `response_format.type`: `json_schema`, `json_object`, or "" when absent.
    pub fn response_format(&self) -> &str {
        self.body["response_format"]["type"].as_str().unwrap_or("")
    }

    /// The content the proxy fenced: the text between the `BEGIN DATA <b>` and `END DATA <b>`
    /// lines of the user message ("" when there is no fence).
    pub fn data(&self) -> &str {
        let user = self.user();
        let Some(start) = user.find("BEGIN DATA ") else {
            return "";
        };
        let Some((begin, rest)) = user[start..].split_once('\n') else {
            return "";
        };
        let end = format!("\nEND DATA {}", &begin["BEGIN DATA ".len()..]);
        rest.find(&end).map_or("", |at| &rest[..at])
    }

    fn message(&self, role: &str) -> &str {
        let messages = self.body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
        messages.iter().find(|m| m["role"] == role).and_then(|m| m["content"].as_str()).unwrap_or("")
    }
}

type Script = dyn Fn(&Request) -> (Reply, Option<Duration>) + Send + Sync;

/// A running fake; stops when killed or dropped.
pub struct FakeChecker {
    /// The base URL a client is configured with, e.g. `http://127.0.0.1:PORT/v1`.
    pub url: String,
    requests: Arc<Mutex<Vec<Request>>>,
    tasks: Arc<Mutex<Tasks>>,
}

/// The accept loop and every connection, so that a kill drops them all.
#[derive(Default)]
struct Tasks {
    killed: bool,
    handles: Vec<AbortHandle>,
}

impl Tasks {
    fn track(&mut self, handle: AbortHandle) {
        if self.killed {
            handle.abort();
        } else {
            self.handles.push(handle);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl FakeChecker {
    /// Starts a fake that answers each chat completion with `script(request)`, after the delay if
    /// one is given.
    pub async fn start(
        script: impl Fn(&Request) -> (Reply, Option<Duration>) + Send + Sync + 'static,
    ) -> FakeChecker {
        FakeChecker::start_on("127.0.0.1:0".parse().expect("an address"), script)
            .await
            .expect("bind 127.0.0.1:0")
    }

    /// As [`FakeChecker::start`], on a given address: a checker brought back where a killed one
    /// listened (`url` unchanged). Fails as `bind` does, e.g. while the port is still taken.
    pub async fn start_on(
        addr: std::net::SocketAddr,
        script: impl Fn(&Request) -> (Reply, Option<Duration>) + Send + Sync + 'static,
    ) -> std::io::Result<FakeChecker> {
        let listener = TcpListener::bind(addr).await?;
        let url = format!("http://{}/v1", listener.local_addr()?);
        let script: Arc<Script> = Arc::new(script);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let tasks = Arc::new(Mutex::new(Tasks::default()));
        let accept = {
            let (requests, tasks) = (requests.clone(), tasks.clone());
            tokio::spawn(async move {
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        continue;
                    };
                    let (script, requests) = (script.clone(), requests.clone());
                    let conn = tokio::spawn(async move {
                        let svc = hyper::service::service_fn(move |req| {
                            handle(script.clone(), requests.clone(), req)
                        });
                        let io = hyper_util::rt::TokioIo::new(stream);
                        let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, svc).await;
                    });
                    lock(&tasks).track(conn.abort_handle());
                }
            })
        };
        lock(&tasks).track(accept.abort_handle());
        Ok(FakeChecker { url, requests, tasks })
    }

    /// A fake that answers every request with `reply`.
    pub async fn replying(reply: Reply) -> FakeChecker {
        FakeChecker::start(move |_| (reply.clone(), None)).await
    }

    /// Every request received, in order (other paths included).
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.requests).clone()
    }

    pub fn calls(&self) -> usize {
        lock(&self.requests).len()
    }

    /// Stops accepting and drops every open connection: a checker that died.
    pub fn kill(&self) {
        let mut tasks = lock(&self.tasks);
        tasks.killed = true;
        tasks.handles.drain(..).for_each(|h| h.abort());
    }
}

impl Drop for FakeChecker {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn handle(
    script: Arc<Script>,
    requests: Arc<Mutex<Vec<Request>>>,
    req: http::Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let chat = req.method() == Method::POST && req.uri().path() == "/v1/chat/completions";
    let path = req.uri().path().to_owned();
    let headers = req.headers().clone();
    let bytes = match Limited::new(req.into_body(), 16 << 20).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let request = Request { path, headers, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null) };
    lock(&requests).push(request.clone());
    if !chat {
        let body = json!({"error": {"message": "not found", "type": "invalid_request_error"}});
        return Ok(respond(404, body.to_string()));
    }
    let (reply, delay) = script(&request);
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    Ok(match reply {
        Reply::Verdict(text) => respond(200, completion(&request, &text)),
        Reply::Safe => respond(200, completion(&request, &verdict(true, "no threat found", None))),
        Reply::Unsafe(reason) => respond(200, completion(&request, &verdict(false, &reason, None))),
        Reply::Sanitize { reason, content } => {
            respond(200, completion(&request, &verdict(false, &reason, Some(&content))))
        }
        Reply::Status(code, body) => respond(code, body),
        Reply::Garbage(body) => respond(200, body),
        Reply::Truncated => {
            let mut whole = completion(&request, &verdict(true, "no threat found", None));
            let mut half = whole.len() / 2;
            while !whole.is_char_boundary(half) {
                half -= 1;
            }
            whole.truncate(half);
            respond(200, whole)
        }
        Reply::RejectJsonSchema if request.response_format() == "json_schema" => respond(400, REJECT.into()),
        Reply::RejectJsonSchema => {
            respond(200, completion(&request, &verdict(true, "no threat found", None)))
        }
        Reply::RejectJsonSchemaAs(status, body) if request.response_format() == "json_schema" => {
            respond(status, body)
        }
        Reply::RejectJsonSchemaAs(..) => {
            respond(200, completion(&request, &verdict(true, "no threat found", None)))
        }
        Reply::Hang => std::future::pending().await,
        Reply::Context { server, n_ctx } => match prompt_tokens(&request) {
            tokens if tokens > n_ctx => respond(400, context_exceeded(server, tokens, n_ctx)),
            _ => respond(200, completion(&request, &verdict(true, "no threat found", None))),
        },
        Reply::Refusal(refusal) => {
            let mut body: Value = serde_json::from_str(&completion(&request, "")).expect("our JSON");
            body["choices"][0]["message"]["content"] = Value::Null;
            body["choices"][0]["message"]["refusal"] = Value::String(refusal);
            respond(200, body.to_string())
        }
        Reply::ContentFilter => {
            let mut body: Value = serde_json::from_str(&completion(&request, "")).expect("our JSON");
            body["choices"][0]["message"]["content"] = Value::Null;
            body["choices"][0]["finish_reason"] = Value::String("content_filter".into());
            respond(200, body.to_string())
        }
    })
}

/// OpenAI's answer to `json_schema` on a model without structured outputs.
const REJECT: &str = r#"{"error":{"message":"Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.","type":"invalid_request_error","param":"response_format","code":null}}"#;

fn verdict(safe: bool, reason: &str, sanitized: Option<&str>) -> String {
    json!({"safe": safe, "reason": reason, "sanitized_content": sanitized}).to_string()
}

/// A whole `chat.completion` object, as OpenAI sends it.
fn completion(request: &Request, content: &str) -> String {
    static ID: AtomicU64 = AtomicU64::new(1);
    let prompt_tokens = prompt_tokens(request);
    let completion_tokens = content.len() / 4;
    json!({
        "id": format!("chatcmpl-fake{}", ID.fetch_add(1, Ordering::Relaxed)),
        "object": "chat.completion",
        "created": 1_767_225_600,
        "model": request.body["model"].as_str().unwrap_or("fake-checker"),
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content, "refusal": null},
            "logprobs": null,
            "finish_reason": "stop",
        }],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
        "system_fingerprint": "fp_fake",
    })
    .to_string()
}

fn respond(code: u16, body: String) -> Response<Full<Bytes>> {
    Response::builder()
        .status(StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .expect("static response parts")
}
