//! A model server with a fixed context, on 127.0.0.1:0, speaking the OpenAI wire format as
//! llama.cpp's `llama-server` or vLLM does: it describes itself (`GET /props`, `GET /v1/models`),
//! refuses a prompt its context cannot hold with that server's real error answer, and judges the
//! rest (unsafe when the fenced data names `attacker.example`, quoting it).

use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::task::AbortHandle;

/// Which server's answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Refuses a prompt of `n_ctx` tokens or more (`exceed_context_size_error`, with `n_ctx`);
    /// `/props` describes it; `/v1/models` lists only the training context.
    LlamaCpp,
    /// Refuses a prompt whose tokens plus `max_tokens` pass `max_model_len` ("maximum context
    /// length is N tokens"); `/v1/models` lists `max_model_len`; no `/props`.
    Vllm,
}

/// What `GET /props` answers (llama.cpp only; vLLM has none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Props {
    /// llama.cpp's description, with the context it enforces.
    Real,
    /// This status and body.
    Body(u16, String),
    /// Never answers.
    Hang,
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    /// A chat completion's prompt, in this server's tokens.
    pub prompt_tokens: Option<usize>,
    pub refused: bool,
}

pub struct ModelServer {
    /// `http://127.0.0.1:PORT/v1`.
    pub url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    accept: AbortHandle,
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The model name the server serves.
pub const MODEL: &str = "judge";

/// About what a BPE tokenizer makes of text: a run of letters is a token per 5 (prose comes to
/// about 4.5 bytes a token), a run of digits a token per 3, a space joins the next word, and
/// every other character is a token of its own (JSON, tables and punctuation come to about 2).
pub fn tokens(text: &str) -> usize {
    let mut n = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let (run, per): (fn(&char) -> bool, usize) = match c {
            ' ' => continue,
            c if c.is_ascii_alphabetic() => (char::is_ascii_alphabetic, 5),
            c if c.is_ascii_digit() => (char::is_ascii_digit, 3),
            _ => {
                n += 1;
                continue;
            }
        };
        let mut len: usize = 1;
        while chars.next_if(run).is_some() {
            len += 1;
        }
        n += len.div_ceil(per);
    }
    n
}

/// What the chat template adds around the two messages.
const TEMPLATE_TOKENS: usize = 12;

impl ModelServer {
    pub async fn start(flavor: Flavor, n_ctx: usize, props: Props) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let url = format!("http://{}/v1", listener.local_addr().expect("an address"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let accept = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let (log, props) = (log.clone(), props.clone());
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req| {
                        handle(flavor, n_ctx, props.clone(), log.clone(), req)
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, svc).await;
                });
            }
        })
        .abort_handle();
        ModelServer { url, seen, accept }
    }

    pub fn seen(&self) -> Vec<Seen> {
        lock(&self.seen).clone()
    }

    /// (chat completions, of which refused, description GETs).
    pub fn counts(&self) -> (usize, usize, usize) {
        let seen = self.seen();
        let chats = seen.iter().filter(|s| s.prompt_tokens.is_some()).count();
        let refused = seen.iter().filter(|s| s.refused).count();
        (chats, refused, seen.len() - chats)
    }
}

fn respond(status: u16, body: String) -> http::Response<Full<Bytes>> {
    let mut r = http::Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = http::StatusCode::from_u16(status).expect("a status");
    r.headers_mut().insert(http::header::CONTENT_TYPE, "application/json".parse().expect("a value"));
    r
}

async fn handle(
    flavor: Flavor,
    n_ctx: usize,
    props: Props,
    log: Arc<Mutex<Vec<Seen>>>,
    req: http::Request<Incoming>,
) -> Result<http::Response<Full<Bytes>>, Infallible> {
    let (method, path) = (req.method().to_string(), req.uri().path().to_owned());
    let body =
        Limited::new(req.into_body(), 16 << 20).collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let mut seen = Seen { method: method.clone(), path: path.clone(), prompt_tokens: None, refused: false };
    let answer = match (method.as_str(), path.as_str(), flavor) {
        ("GET", "/props", Flavor::LlamaCpp) => match props {
            Props::Real => respond(200, llama_props(n_ctx)),
            Props::Body(status, body) => respond(status, body),
            Props::Hang => {
                lock(&log).push(seen);
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return Ok(respond(504, String::new()));
            }
        },
        ("GET", "/v1/models", _) => respond(200, models(flavor, n_ctx)),
        ("POST", "/v1/chat/completions", _) => {
            let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let (answer, prompt_tokens, refused) = chat(flavor, n_ctx, &request);
            (seen.prompt_tokens, seen.refused) = (Some(prompt_tokens), refused);
            answer
        }
        _ => respond(
            404,
            json!({"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}})
                .to_string(),
        ),
    };
    lock(&log).push(seen);
    Ok(answer)
}

fn llama_props(n_ctx: usize) -> String {
    json!({
        "default_generation_settings": {
            "id": 0, "id_task": -1, "n_ctx": n_ctx, "speculative": false, "is_processing": false,
            "params": {"n_predict": -1, "temperature": 0.8, "top_k": 40, "top_p": 0.95},
        },
        "total_slots": 1,
        "model_path": "/models/judge-q4_k_m.gguf",
        "chat_template": "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{% endfor %}",
        "build_info": "b5200-test",
    })
    .to_string()
}

fn models(flavor: Flavor, n_ctx: usize) -> String {
    let entry = match flavor {
        Flavor::LlamaCpp => json!({"id": MODEL, "object": "model", "created": 0, "owned_by": "llamacpp",
            "meta": {"vocab_type": 2, "n_vocab": 151936, "n_ctx_train": 32768, "n_embd": 1024}}),
        Flavor::Vllm => json!({"id": MODEL, "object": "model", "created": 0, "owned_by": "vllm",
            "root": MODEL, "parent": null, "max_model_len": n_ctx}),
    };
    json!({"object": "list", "data": [entry]}).to_string()
}

fn message<'a>(request: &'a Value, role: &str) -> &'a str {
    let messages = request["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    messages.iter().find(|m| m["role"] == role).and_then(|m| m["content"].as_str()).unwrap_or("")
}

/// The fenced data of the user message.
fn data(user: &str) -> &str {
    let Some(start) = user.find("BEGIN DATA ") else { return "" };
    let Some((begin, rest)) = user[start..].split_once('\n') else { return "" };
    let end = format!("\nEND DATA {}", &begin["BEGIN DATA ".len()..]);
    rest.find(&end).map_or("", |at| &rest[..at])
}

fn chat(flavor: Flavor, n_ctx: usize, request: &Value) -> (http::Response<Full<Bytes>>, usize, bool) {
    let (system, user) = (message(request, "system"), message(request, "user"));
    let prompt = tokens(system) + tokens(user) + TEMPLATE_TOKENS;
    let max_tokens = request["max_tokens"].as_u64().unwrap_or(0) as usize;
    let refused = match flavor {
        Flavor::LlamaCpp => prompt >= n_ctx,
        Flavor::Vllm => prompt + max_tokens > n_ctx,
    };
    if refused {
        let body = match flavor {
            Flavor::LlamaCpp => json!({"error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": prompt,
                "n_ctx": n_ctx,
            }}),
            Flavor::Vllm => json!({
                "object": "error",
                "message": format!("This model's maximum context length is {n_ctx} tokens. However, you requested {} tokens ({prompt} in the messages, {max_tokens} in the completion). Please reduce the length of the messages or completion.", prompt + max_tokens),
                "type": "BadRequestError",
                "param": null,
                "code": 400,
            }),
        };
        return (respond(400, body.to_string()), prompt, true);
    }
    let verdict = match data(user).contains("attacker.example") {
        true => {
            json!({"evidence": "attacker.example", "reason": "sends a private key to an outside host", "safe": false})
        }
        false => json!({"evidence": null, "reason": "ordinary data", "safe": true}),
    };
    let completion = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": verdict.to_string()}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 30, "total_tokens": prompt + 30},
    });
    (respond(200, completion.to_string()), prompt, false)
}
