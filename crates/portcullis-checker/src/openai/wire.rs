//! What goes over the wire: the Chat Completions request the checker sends (with its
//! structured-output schema) and the part of the answer it reads.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{Format, MAX_TOKENS};
use crate::prompt::Prompt;
use crate::Failure;

/// The part of a chat completion the checker reads; everything else a server adds is ignored.
#[derive(Deserialize)]
pub(super) struct Completion {
    choices: Vec<Choice>,
    /// What the call cost, when the server says: recorded on the current span (the proxy's
    /// checker span when tracing is on; nowhere otherwise).
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Usage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
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

/// The shape [`super::verdict::parse`] accepts, in the subset strict mode allows (every property
/// required, `null` for "no rewrite").
/// `rewrite` adds `sanitized_content` (a sanitize rule's prompt only).
pub(super) fn verdict_schema(rewrite: bool) -> Value {
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

pub(super) fn request(model: &str, prompt: &Prompt, format: Format) -> Value {
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

pub(super) fn text(completion: Completion) -> Result<String, Failure> {
    if let Some(usage) = &completion.usage {
        let span = tracing::Span::current();
        span.record("gen_ai.usage.input_tokens", usage.prompt_tokens);
        span.record("gen_ai.usage.output_tokens", usage.completion_tokens);
    }
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
