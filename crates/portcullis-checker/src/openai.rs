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
use async_openai::middleware::ReqwestService;
use async_openai::Client;

use super::context::{Learned, Source};
use super::prompt::Prompt;
use super::Failure;

mod describe;
mod failure;
#[cfg(test)]
mod tests;
mod transport;
mod wire;

use failure::{clip, failure, overflow_window, refuses_json_schema};
use transport::{once, Status};
use wire::{request, text, Completion};

/// A verdict is a short object; a sanitized rewrite fits in this too, and a model that rambles
/// past it has failed anyway.
pub const MAX_TOKENS: u32 = 512;

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
    /// What the client sends through, kept to ask the server for its description.
    transport: ReqwestService,
    /// The server's context window, as far as it has said.
    context: Learned,
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
        let sender = transport.clone();
        let client = Client::with_config(config)
            .with_http_service(tower::service_fn(move |request| once(sender.clone(), request, authorize)));
        Ok(OpenAi {
            client,
            base_url: settings.base_url.clone(),
            model: settings.model.clone(),
            timeout: settings.timeout,
            key,
            json_object: AtomicBool::new(false),
            transport,
            context: Learned::default(),
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

    /// The model's context window in tokens, as the server says it. The first call asks the
    /// server's description (llama.cpp's `GET /props`, vLLM's `GET {base_url}/models`) — at
    /// most 2 s, however many calls arrive meanwhile, and never again; a later answer refusing a
    /// prompt that did not fit replaces it with the window that answer names. `None`: the
    /// server has not said.
    pub async fn context_tokens(&self) -> Option<u32> {
        self.context
            .tokens(async {
                let started = tokio::time::Instant::now();
                let within = self.timeout.min(describe::DESCRIBE_WITHIN);
                let key = self.key.as_deref();
                let found = describe::described(&self.transport, &self.base_url, key, &self.model, within).await;
                let took_ms = started.elapsed().as_millis() as u64;
                match found {
                    Some((n, from)) => {
                        tracing::info!(model = %self.model, n_ctx = n, from = from.as_str(), took_ms, "learned the checker's context window");
                        Some(n)
                    }
                    None => {
                        tracing::info!(model = %self.model, took_ms, "the checker's server does not say its context window; an over-long prompt's answer will");
                        None
                    }
                }
            })
            .await
    }

    /// The context window known now, without asking the server.
    pub fn known_context_tokens(&self) -> Option<u32> {
        self.context.known()
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
        let answer = answer.map_err(|e| {
            if let Some(n) = overflow_window(&e).filter(|&n| self.context.overflow(n)) {
                let from = Source::Overflow.as_str();
                tracing::info!(model = %self.model, n_ctx = n, from, "learned the checker's context window");
            }
            failure(e)
        });
        text(answer?)
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
