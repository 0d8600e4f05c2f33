//! The `openai` checker backend: any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM,
//! llama.cpp's `llama-server`, Ollama).
//!
//! async-openai builds the request and parses the answer, but the transport under it is ours,
//! because the library's defaults do not fit a call that sits on the latency path of a tool call:
//! - its default executor wraps every request in `OpenAIRetryLayer::default()` — up to 3 retries
//!   of 429, 5xx and connect errors with exponential backoff or `Retry-After` (0.43's
//!   `executor.rs`, `middleware/retry/openai.rs`). A down checker must fail once, inside the
//!   budget, so [`Client::with_http_service`] replaces that executor with a single attempt; the
//!   only retry left is the structured-output fallback below.
//! - `OpenAIConfig` reads `OPENAI_*` variables and always sends `Authorization: Bearer …` (empty
//!   without a key) plus organization/project headers; the transport sends `Content-Type` and,
//!   only when a key is configured, `Authorization`.
//! - a non-2xx body not in OpenAI's error shape (llama.cpp's integer `code`, FastAPI's `detail`)
//!   loses its status there; the transport keeps status and body, which the fallback needs.
//!
//! Structured output is strict `json_schema` first; a server that refuses it (400 naming the
//! schema or `response_format`, or 422) gets `json_object` + `schema` — the form llama.cpp
//! accepts — for that call and every later one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::middleware::{HttpRequestFactory, ReqwestService};
use async_openai::Client;
use http::header::{HeaderMap, AUTHORIZATION, CONTENT_TYPE};
use serde::Deserialize;
use serde_json::{json, Value};
use tower::ServiceExt;

use super::prompt::Prompt;
use super::Failure;

/// A verdict is a short object; a sanitized rewrite fits in this too, and a model that rambles
/// past it has failed anyway.
pub const MAX_TOKENS: u32 = 512;
/// Error messages end up in logs: a server echoing a whole body must not flood them.
const MAX_MESSAGE_CHARS: usize = 300;

/// Where and how to reach the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Up to the version segment, e.g. `http://127.0.0.1:8000/v1`.
    pub base_url: String,
    pub model: String,
    /// The environment variable holding the API key; `None` sends no `Authorization` at all.
    pub api_key_env: Option<String>,
    /// Bounds the whole of [`OpenAi::complete`], fallback included.
    pub timeout: Duration,
}

/// A client for one endpoint and model.
pub struct OpenAi {
    client: Client<OpenAIConfig>,
    base_url: String,
    model: String,
    timeout: Duration,
    /// Kept only to scrub it from error messages.
    key: Option<String>,
    /// Set once the server has refused `json_schema`.
    json_object: AtomicBool,
}

impl std::fmt::Debug for OpenAi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAi")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("api_key", &self.key.as_ref().map(|_| "<set>"))
            .field("format", &self.format())
            .finish()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    JsonSchema,
    JsonObject,
}

/// Why a checker client cannot be built: always about its API key variable, which each variant
/// names (never the key's value).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    #[error("the checker's API key variable {var} is not set")]
    KeyUnset { var: String },
    #[error("the checker's API key variable {var} is not UTF-8")]
    KeyNotUnicode { var: String },
    #[error("the checker's API key variable {var} is empty")]
    KeyEmpty { var: String },
    #[error("the checker's API key variable {var} holds characters a header cannot carry")]
    KeyNotHeader { var: String },
}

impl ClientError {
    /// The environment variable the key was to be read from.
    pub fn var(&self) -> &str {
        match self {
            ClientError::KeyUnset { var }
            | ClientError::KeyNotUnicode { var }
            | ClientError::KeyEmpty { var }
            | ClientError::KeyNotHeader { var } => var,
        }
    }
}

/// A non-2xx answer, whole: async-openai keeps only OpenAI-shaped errors' status.
#[derive(Debug, thiserror::Error)]
#[error("HTTP {code}: {body}")]
struct Status {
    code: u16,
    body: String,
}

/// The part of a chat completion the checker reads; everything else a server adds is ignored.
#[derive(Deserialize)]
struct Completion {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
}

impl OpenAi {
    /// Reads the API key from the variable named in `settings`; a missing or unusable one is an
    /// error naming the variable (never its value).
    pub fn new(settings: &Settings) -> Result<OpenAi, ClientError> {
        let key = settings.api_key_env.as_deref().map(read_key).transpose()?;
        // Every field is set, so nothing `OpenAIConfig::new` read from `OPENAI_*` survives; an
        // empty org or project id sends no header.
        let config = OpenAIConfig::new()
            .with_api_base(settings.base_url.trim_end_matches('/'))
            .with_api_key(key.clone().unwrap_or_default())
            .with_org_id("")
            .with_project_id("");
        // reqwest (built `rustls-no-provider`) takes the process-wide rustls provider and panics
        // without one; the crate builds with ring only. An error means one is installed already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let authorize = key.is_some();
        // reqwest's defaults (no timeouts of its own): `complete` bounds the whole call with
        // `tokio::time::timeout`, which a paused test clock also drives. Naming reqwest to set a
        // connect timeout would make it a direct dependency for no gain inside that bound.
        let transport = ReqwestService::default();
        let client = Client::with_config(config).with_http_service(tower::service_fn(
            move |request: HttpRequestFactory| once(transport.clone(), request, authorize),
        ));
        Ok(OpenAi {
            client,
            base_url: settings.base_url.clone(),
            model: settings.model.clone(),
            timeout: settings.timeout,
            key,
            json_object: AtomicBool::new(false),
        })
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// Whether the server answers at all: `GET {base_url}/models`, bounded by the timeout, no
    /// content sent. Any HTTP answer is a server that is up (a 401 or a 404 included: the
    /// checker's own calls will say what is wrong); no connection, or no answer in time, is down.
    pub async fn probe(&self) -> bool {
        match tokio::time::timeout(self.timeout, self.client.models().list()).await {
            Err(_) => false,
            Ok(Ok(_)) => true,
            Ok(Err(OpenAIError::Boxed(b))) => b.downcast_ref::<Status>().is_some(),
            Ok(Err(OpenAIError::ApiError(_) | OpenAIError::JSONDeserialize(..))) => true,
            Ok(Err(_)) => false,
        }
    }

    /// One Chat Completions call (two if the server refuses `json_schema` this first time):
    /// the rubric as the system message, the fenced content as the user message, temperature 0.
    /// Returns the assistant's text exactly as received; judging it is [`super::verdict::parse`]'s.
    pub async fn complete(&self, prompt: &Prompt) -> Result<String, Failure> {
        match tokio::time::timeout(self.timeout, self.exchange(prompt)).await {
            Ok(answer) => answer.map_err(|f| self.tidy(f)),
            Err(_) => Err(Failure::Timeout(self.timeout)),
        }
    }

    /// The structured-output form in use: `json_schema` until the server refuses it, then
    /// `json_object` (with the schema) for good.
    pub fn structured_output(&self) -> &'static str {
        match self.format() {
            Format::JsonSchema => "json_schema",
            Format::JsonObject => "json_object",
        }
    }

    fn format(&self) -> Format {
        match self.json_object.load(Ordering::Relaxed) {
            true => Format::JsonObject,
            false => Format::JsonSchema,
        }
    }

    async fn exchange(&self, prompt: &Prompt) -> Result<String, Failure> {
        let format = self.format();
        let mut answer = self.send(prompt, format).await;
        if format == Format::JsonSchema && answer.as_ref().is_err_and(refuses_json_schema) {
            self.json_object.store(true, Ordering::Relaxed);
            tracing::info!(model = %self.model, "the checker refused json_schema; using json_object + schema");
            answer = self.send(prompt, Format::JsonObject).await;
        }
        text(answer.map_err(failure)?)
    }

    async fn send(&self, prompt: &Prompt, format: Format) -> Result<Completion, OpenAIError> {
        self.client.chat().create_byot(request(&self.model, prompt, format)).await
    }

    /// No key in any message, and no message long enough to flood a log.
    fn tidy(&self, failure: Failure) -> Failure {
        let tidy = |m: String| {
            let m = match self.key.as_deref() {
                Some(key) => m.replace(key, "<api key>"),
                None => m,
            };
            clip(m)
        };
        match failure {
            Failure::Error(m) => Failure::Error(tidy(m)),
            Failure::Malformed(m) => Failure::Malformed(tidy(m)),
            other => other,
        }
    }
}

fn read_key(var: &str) -> Result<String, ClientError> {
    let key = std::env::var(var).map_err(|e| match e {
        std::env::VarError::NotPresent => ClientError::KeyUnset { var: var.to_owned() },
        std::env::VarError::NotUnicode(_) => ClientError::KeyNotUnicode { var: var.to_owned() },
    })?;
    if key.is_empty() {
        return Err(ClientError::KeyEmpty { var: var.to_owned() });
    }
    // async-openai unwraps the header parse, so a key with a newline would panic per call.
    if http::HeaderValue::from_str(&format!("Bearer {key}")).is_err() {
        return Err(ClientError::KeyNotHeader { var: var.to_owned() });
    }
    Ok(key)
}

/// The transport: one attempt, only our headers, and a non-2xx answer as a [`Status`] error.
async fn once(
    transport: ReqwestService,
    request: HttpRequestFactory,
    authorize: bool,
) -> Result<HttpResponse, OpenAIError> {
    let ours = HttpRequestFactory::new(move || {
        let request = request.clone();
        async move {
            let mut built = request.build().await?;
            keep_only_our_headers(built.headers_mut(), authorize);
            Ok(built)
        }
    });
    let response = transport.oneshot(ours).await?;
    let code = response.status().as_u16();
    if response.status().is_success() {
        return Ok(response);
    }
    let body = response.bytes().await.map_err(OpenAIError::Reqwest)?;
    Err(OpenAIError::Boxed(Box::new(Status { code, body: String::from_utf8_lossy(&body).into_owned() })))
}

/// `reqwest::Response`, named through the service: reqwest is async-openai's dependency, not ours.
type HttpResponse = <ReqwestService as tower::Service<HttpRequestFactory>>::Response;

fn keep_only_our_headers(headers: &mut HeaderMap, authorize: bool) {
    let content_type = headers.remove(CONTENT_TYPE);
    let authorization = headers.remove(AUTHORIZATION).filter(|_| authorize);
    headers.clear();
    if let Some(v) = content_type {
        headers.insert(CONTENT_TYPE, v);
    }
    if let Some(v) = authorization {
        headers.insert(AUTHORIZATION, v);
    }
}

/// The shape [`super::verdict::parse`] accepts, in the subset strict mode allows (every property
/// required, `null` for "no rewrite").
/// `rewrite` adds `sanitized_content` (a sanitize rule's prompt only).
fn verdict_schema(rewrite: bool) -> Value {
    let mut schema = json!({
        "type": "object",
        // Keys are serialized in this order (evidence, reason, safe, …): a model that writes the
        // fields in schema order quotes and explains before it decides.
        "properties": {
            "evidence": {"type": ["string", "null"]},
            "reason": {"type": "string"},
            "safe": {"type": "boolean"},
        },
        "required": ["evidence", "reason", "safe"],
        "additionalProperties": false,
    });
    if rewrite {
        schema["properties"]["sanitized_content"] = json!({"type": ["string", "null"]});
        schema["required"].as_array_mut().expect("a list").push(json!("sanitized_content"));
    }
    schema
}

fn request(model: &str, prompt: &Prompt, format: Format) -> Value {
    let response_format = match format {
        Format::JsonSchema => json!({
            "type": "json_schema",
            "json_schema": {"name": "verdict", "strict": true, "schema": verdict_schema(prompt.rewrite)},
        }),
        Format::JsonObject => json!({"type": "json_object", "schema": verdict_schema(prompt.rewrite)}),
    };
    // `max_tokens`, not `max_completion_tokens`: every compatible server reads the older name.
    json!({
        "model": model,
        "messages": [
            {"role": "system", "content": prompt.system},
            {"role": "user", "content": prompt.user},
        ],
        "temperature": 0,
        "max_tokens": MAX_TOKENS,
        "stream": false,
        "response_format": response_format,
    })
}

fn refuses_json_schema(e: &OpenAIError) -> bool {
    match e {
        OpenAIError::Boxed(b) => b.downcast_ref::<Status>().is_some_and(|s| refusal(s.code, &s.body)),
        _ => false,
    }
}

/// Whether an error answer means "this server cannot do `json_schema`" rather than a bad request
/// of another kind ("schema" also covers `json_schema`). Servers say it with different statuses:
/// OpenAI 400, vLLM 400/422, llama-cpp-python's server a 500 carrying its validation error for
/// `response_format.type`; so a 4xx/5xx whose body names `response_format` or `json_schema`
/// counts, except the statuses that mean something else whatever the body says (401/403/407:
/// credentials; 429: rate limit). A 500 that names neither stays a checker failure. Reading a
/// crash while handling `json_schema` as a refusal costs one `json_object` retry, remembered.
fn refusal(code: u16, body: &str) -> bool {
    let body = body.to_ascii_lowercase();
    let names_the_form = body.contains("response_format") || body.contains("json_schema");
    let other_meaning = matches!(code, 401 | 403 | 407 | 429);
    code == 422
        || (code == 400 && body.contains("schema"))
        || ((400..600).contains(&code) && !other_meaning && names_the_form)
}

fn failure(e: OpenAIError) -> Failure {
    match e {
        OpenAIError::JSONDeserialize(e, _) => {
            Failure::Malformed(format!("the answer is not a chat completion: {e}"))
        }
        OpenAIError::Boxed(b) => {
            match b.downcast_ref::<Status>().and_then(|s| content_failure(s.code, &s.body)) {
                Some(f) => f,
                None => Failure::Error(with_sources(b.as_ref())),
            }
        }
        e => Failure::Error(with_sources(&e)),
    }
}

/// An error answer the *content* caused, from a server that is up: the prompt does not fit the
/// context window, or a content filter refused it. These never count toward the breaker — else
/// five long tool results would switch the checker off for everyone. The markers are what the
/// servers send: OpenAI's `context_length_exceeded` code and "maximum context length" message
/// (vLLM says the same), llama.cpp's `exceed_context_size_error` / "the request exceeds the
/// available context size", Ollama's and TGI's "input is too long", a 413 from any proxy in
/// front; `content_filter` / `content_policy_violation` (OpenAI, Azure) for refusals.
fn content_failure(code: u16, body: &str) -> Option<Failure> {
    const TOO_LONG: [&str; 9] = [
        "context_length_exceeded",
        "exceed_context_size",
        "exceeds the available context size",
        "maximum context length",
        "context length",
        "context window",
        "too many tokens",
        "input is too long",
        "prompt is too long",
    ];
    const REFUSED: [&str; 3] = ["content_filter", "content_policy_violation", "responsibleaipolicyviolation"];
    let lower = body.to_ascii_lowercase();
    let shown = || clip(format!("HTTP {code}: {body}"));
    match code {
        413 => Some(Failure::ContextLength(shown())),
        400 | 422 if TOO_LONG.iter().any(|m| lower.contains(m)) => Some(Failure::ContextLength(shown())),
        400 | 403 | 422 if REFUSED.iter().any(|m| lower.contains(m)) => Some(Failure::Refused(shown())),
        // Older llama.cpp answered an over-long prompt with a 500.
        500 if lower.contains("input is too large to process") => Some(Failure::ContextLength(shown())),
        _ => None,
    }
}

/// reqwest's top-level message is "error sending request"; the cause is further down.
fn with_sources(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        // async-openai's `Reqwest` variant repeats its source in its own message.
        let message = c.to_string();
        if !out.contains(&message) {
            out.push_str(": ");
            out.push_str(&message);
        }
        cause = c.source();
    }
    out
}

fn text(completion: Completion) -> Result<String, Failure> {
    let Some(choice) = completion.choices.into_iter().next() else {
        return Err(Failure::Malformed("the answer has no choices".into()));
    };
    if choice.finish_reason.as_deref() == Some("content_filter") {
        return Err(Failure::Refused("the answer was cut by a content filter".into()));
    }
    let message = choice.message;
    if let Some(refusal) = message.refusal.filter(|r| !r.is_empty()) {
        return Err(Failure::Refused(format!("the model refused: {refusal}")));
    }
    match message.content {
        Some(content) if !content.is_empty() => Ok(content),
        _ => Err(Failure::Malformed("the answer has no text content".into())),
    }
}

fn clip(mut m: String) -> String {
    if let Some((at, _)) = m.char_indices().nth(MAX_MESSAGE_CHARS) {
        m.truncate(at);
        m.push('…');
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::{build, Phase};
    use crate::verdict::{parse, Verdict};

    #[test]
    fn schema_requires_every_verdict_field_and_nothing_else() {
        let s = verdict_schema(true);
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["required"], json!(["evidence", "reason", "safe", "sanitized_content"]));
        // In this order as sent: the evidence and the reason are written before the decision.
        let props: Vec<&String> = s["properties"].as_object().unwrap().keys().collect();
        assert_eq!(props, ["evidence", "reason", "safe", "sanitized_content"]);
        let sent = serde_json::to_string(&s).unwrap();
        assert!(sent.find("\"evidence\"").unwrap() < sent.find("\"safe\"").unwrap(), "{sent}");
        // What the schema admits, the verdict parser accepts.
        assert_eq!(parse(r#"{"safe":true,"reason":"","sanitized_content":null}"#), Ok(Verdict::Safe));
        // Without a rewrite asked for, the model is not offered the field to fill.
        let s = verdict_schema(false);
        assert_eq!(s["required"], json!(["evidence", "reason", "safe"]));
        assert!(s["properties"].get("sanitized_content").is_none());
        assert_eq!(parse(r#"{"evidence":null,"reason":"","safe":true}"#), Ok(Verdict::Safe));
        let p = crate::prompt::build_framed("R", Phase::Post, "t", "x", crate::prompt::Framing::default());
        assert!(!p.system.contains("sanitized_content"), "{}", p.system);
        assert_eq!(request("m", &p, Format::JsonObject)["response_format"]["schema"], s);
    }

    #[test]
    fn request_carries_both_messages_and_the_format_asked_for() {
        let p = build("R", Phase::Pre, "mcp__fs__read", "x");
        let strict = request("m", &p, Format::JsonSchema);
        assert_eq!(strict["model"], "m");
        assert_eq!(strict["temperature"], 0);
        assert_eq!(strict["stream"], false);
        assert_eq!(strict["messages"][0], json!({"role": "system", "content": p.system}));
        assert_eq!(strict["messages"][1], json!({"role": "user", "content": p.user}));
        assert_eq!(strict["response_format"]["type"], "json_schema");
        assert_eq!(strict["response_format"]["json_schema"]["strict"], true);
        assert_eq!(strict["response_format"]["json_schema"]["schema"], verdict_schema(true));
        let loose = request("m", &p, Format::JsonObject);
        assert_eq!(loose["response_format"], json!({"type": "json_object", "schema": verdict_schema(true)}));
    }

    #[test]
    fn only_a_refusal_of_the_schema_falls_back() {
        let openai = r#"{"error":{"message":"Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.","type":"invalid_request_error","param":"response_format","code":null}}"#;
        let table = [
            (400, openai, true),
            (400, r#"{"error":{"code":400,"message":"JSON Schema not supported"}}"#, true),
            (422, r#"{"detail":[{"loc":["body","messages"]}]}"#, true),
            (400, r#"{"error":{"message":"'messages' is a required property"}}"#, false),
            (401, r#"{"error":{"message":"bad response_format key"}}"#, false),
            (429, "rate limited: schema", false),
            (500, "json_schema crashed", true),
            (500, "upstream model crashed", false),
        ];
        for (code, body, expected) in table {
            assert_eq!(refusal(code, body), expected, "{code} {body}");
        }
    }

    #[test]
    fn only_content_type_and_a_configured_key_are_sent() {
        let mut h = HeaderMap::new();
        h.insert(CONTENT_TYPE, "application/json".parse().unwrap());
        h.insert(AUTHORIZATION, "Bearer ".parse().unwrap());
        h.insert("openai-organization", "org".parse().unwrap());
        h.insert("openai-project", "p".parse().unwrap());
        let mut without = h.clone();
        keep_only_our_headers(&mut without, false);
        assert_eq!(without.keys().collect::<Vec<_>>(), [CONTENT_TYPE]);
        keep_only_our_headers(&mut h, true);
        assert_eq!(h.len(), 2);
        assert_eq!(h[AUTHORIZATION], "Bearer ");
    }

    #[test]
    fn a_missing_key_variable_is_named_and_a_set_key_never_printed() {
        let settings = |var: &str| Settings {
            base_url: "http://127.0.0.1:1/v1".into(),
            model: "m".into(),
            api_key_env: Some(var.into()),
            timeout: Duration::from_secs(1),
        };
        let err = OpenAi::new(&settings("PORTCULLIS_UNIT_UNSET_KEY_7f3a")).unwrap_err();
        assert!(err.to_string().contains("PORTCULLIS_UNIT_UNSET_KEY_7f3a"), "{err}");
        assert_eq!(err, ClientError::KeyUnset { var: "PORTCULLIS_UNIT_UNSET_KEY_7f3a".into() });
        std::env::set_var("PORTCULLIS_UNIT_KEY_7f3a", "sk-unit-secret-value");
        let client = OpenAi::new(&settings("PORTCULLIS_UNIT_KEY_7f3a")).unwrap();
        assert!(!format!("{client:?}").contains("sk-unit-secret-value"));
        let tidied = client.tidy(Failure::Error("401 bad key sk-unit-secret-value".into()));
        assert_eq!(tidied, Failure::Error("401 bad key <api key>".into()));
        std::env::set_var("PORTCULLIS_UNIT_BAD_KEY_7f3a", "sk-a\nb");
        let err = OpenAi::new(&settings("PORTCULLIS_UNIT_BAD_KEY_7f3a")).unwrap_err();
        assert_eq!(err.var(), "PORTCULLIS_UNIT_BAD_KEY_7f3a");
        assert!(!err.to_string().contains("sk-a"), "{err}");
    }

    #[test]
    fn an_answer_without_text_is_malformed() {
        let parse = |s: &str| text(serde_json::from_str(s).unwrap());
        assert_eq!(parse(r#"{"choices":[{"message":{"content":"{}"}}]}"#), Ok("{}".into()));
        assert!(matches!(parse(r#"{"choices":[]}"#), Err(Failure::Malformed(_))));
        assert!(matches!(parse(r#"{"choices":[{"message":{"content":null}}]}"#), Err(Failure::Malformed(_))));
        assert!(matches!(parse(r#"{"choices":[{"message":{"content":""}}]}"#), Err(Failure::Malformed(_))));
        // A refusal is its own kind now (content failure, decided by `on_malformed` like garbage).
        let refused = parse(r#"{"choices":[{"message":{"content":null,"refusal":"no"}}]}"#);
        assert_eq!(refused, Err(Failure::Refused("the model refused: no".into())));
        let filtered =
            parse(r#"{"choices":[{"message":{"content":"{}"},"finish_reason":"content_filter"}]}"#);
        assert!(matches!(filtered, Err(Failure::Refused(_))), "{filtered:?}");
    }

    #[test]
    fn content_caused_error_answers_are_told_apart_from_a_down_checker() {
        let llama = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":70001,"n_ctx":4096}}"#;
        let openai = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 70001 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        let vllm = r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 70513 tokens (70001 in the messages, 512 in the completion).","type":"BadRequestError","param":null,"code":400}"#;
        let azure = r#"{"error":{"message":"The response was filtered","type":null,"param":"prompt","code":"content_filter","status":400}}"#;
        let old_llama = r#"{"error":{"code":500,"message":"input is too large to process. increase the physical batch size","type":"server_error"}}"#;
        let table: [(u16, &str, Option<&str>); 10] = [
            (500, old_llama, Some("context_length")),
            (400, llama, Some("context_length")),
            (400, openai, Some("context_length")),
            (400, vllm, Some("context_length")),
            (413, "<html>Request Entity Too Large</html>", Some("context_length")),
            (400, azure, Some("refused")),
            (500, llama, None),
            (503, r#"{"error":{"message":"loading model"}}"#, None),
            (401, r#"{"error":{"message":"bad key"}}"#, None),
            (400, r#"{"error":{"message":"'messages' is a required property"}}"#, None),
        ];
        for (code, body, expected) in table {
            let got = content_failure(code, body);
            assert_eq!(got.as_ref().map(Failure::as_str), expected, "{code} {body}");
            assert!(!got.is_some_and(|f| f.checker_down()), "never evidence the checker is down");
        }
    }

    #[test]
    fn a_refusal_of_json_schema_is_read_at_any_status_that_names_the_form() {
        assert!(refusal(400, r#"{"error":{"param":"response_format"}}"#));
        assert!(refusal(422, "anything"));
        assert!(refusal(500, "Input should be 'text' or 'json_object' ('body', 'response_format', 'type')"));
        assert!(refusal(501, "json_schema is not implemented"));
        assert!(!refusal(500, "upstream model crashed"), "a 500 that names nothing is a failure");
        assert!(!refusal(503, "overloaded"));
        assert!(!refusal(429, "rate limit reached: response_format"));
    }
}
