//! What an error answer means: a refusal of `json_schema` (fall back), a failure the content
//! caused (context length, content filter: never the breaker's), or a checker failure.

use async_openai::error::OpenAIError;

use super::Status;
use crate::Failure;

/// Error messages end up in logs: a server echoing a whole body must not flood them.
const MAX_MESSAGE_CHARS: usize = 300;

pub(super) fn refuses_json_schema(e: &OpenAIError) -> bool {
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
pub(super) fn refusal(code: u16, body: &str) -> bool {
    let body = body.to_ascii_lowercase();
    let names_the_form = body.contains("response_format") || body.contains("json_schema");
    let other_meaning = matches!(code, 401 | 403 | 407 | 429);
    code == 422
        || (code == 400 && body.contains("schema"))
        || ((400..600).contains(&code) && !other_meaning && names_the_form)
}

pub(super) fn failure(e: OpenAIError) -> Failure {
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

/// The context window an answer refusing an over-long prompt names, if it is one and names one.
pub(super) fn overflow_window(e: &OpenAIError) -> Option<u32> {
    let OpenAIError::Boxed(b) = e else { return None };
    let s = b.downcast_ref::<Status>()?;
    matches!(content_failure(s.code, &s.body)?, Failure::ContextLength(_)).then_some(())?;
    crate::context::from_overflow(&s.body)
}

/// An error answer the *content* caused, from a server that is up: the prompt does not fit the
/// context window, or a content filter refused it. These never count toward the breaker — else
/// five long tool results would switch the checker off for everyone. The markers are what the
/// servers send: OpenAI's `context_length_exceeded` code and "maximum context length" message
/// (vLLM says the same, or that "the decoder prompt is longer than the maximum model length"), llama.cpp's `exceed_context_size_error` / "the request exceeds the
/// available context size", Ollama's and TGI's "input is too long", a 413 from any proxy in
/// front; `content_filter` / `content_policy_violation` (OpenAI, Azure) for refusals.
pub(super) fn content_failure(code: u16, body: &str) -> Option<Failure> {
    const TOO_LONG: [&str; 10] = [
        "context_length_exceeded",
        "exceed_context_size",
        "exceeds the available context size",
        "maximum context length",
        "longer than the maximum model length",
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

pub(super) fn clip(mut m: String) -> String {
    if let Some((at, _)) = m.char_indices().nth(MAX_MESSAGE_CHARS) {
        m.truncate(at);
        m.push('…');
    }
    m
}
