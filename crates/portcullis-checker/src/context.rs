//! The model server's context window, in tokens, as the server says it: in its own description
//! (llama.cpp's `/props`, vLLM's `/v1/models`), read once, or in an answer refusing a prompt that
//! did not fit (llama.cpp's `n_ctx` field, "maximum context length is N tokens" from OpenAI and
//! vLLM), read every time.
//!
//! Only numbers in the fields and sentences listed here are read; anything else — another shape,
//! a string, a float, a number outside [`MIN_TOKENS`]`..=`[`MAX_TOKENS`] — is no number, and
//! the checker goes on as if the server had said nothing.

use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::Value;

/// Fewer tokens than this hold no checker prompt (the rubric and the reply alone take more): a
/// smaller number is misread or hostile, and is ignored rather than shrinking every window.
pub const MIN_TOKENS: u32 = 1024;
/// More than any served model has; a larger number is garbage.
pub const MAX_TOKENS: u32 = 1 << 24;

/// Where a context window was learned: the `from` of the log line that reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// llama.cpp's `GET /props`.
    Props,
    /// vLLM's `GET /v1/models` (`max_model_len` of the configured model).
    Models,
    /// An answer refusing a prompt that did not fit.
    Overflow,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Props => "props",
            Source::Models => "models",
            Source::Overflow => "overflow",
        }
    }
}

fn tokens(v: &Value) -> Option<u32> {
    let n = u32::try_from(v.as_u64()?).ok()?;
    (MIN_TOKENS..=MAX_TOKENS).contains(&n).then_some(n)
}

/// llama.cpp's `/props`: `default_generation_settings.n_ctx` (the context of one slot, which is
/// what one request gets) or a top-level `n_ctx`; the smaller when both are there.
pub fn from_props(props: &Value) -> Option<u32> {
    let slot = props.pointer("/default_generation_settings/n_ctx").and_then(tokens);
    let top = props.get("n_ctx").and_then(tokens);
    slot.into_iter().chain(top).min()
}

/// vLLM's `/v1/models`: `max_model_len` of the entry whose `id` is the configured model (the
/// name requests are served under). Other servers list no such field: `None`.
pub fn from_models(models: &Value, model: &str) -> Option<u32> {
    let entries = models.get("data")?.as_array()?;
    entries
        .iter()
        .find(|e| e.get("id").and_then(Value::as_str) == Some(model))?
        .get("max_model_len")
        .and_then(tokens)
}

/// The window an answer refusing an over-long prompt names: llama.cpp's `error.n_ctx` field,
/// else the number in "maximum context length is N tokens" in the answer's message (OpenAI's
/// `error.message`, vLLM's top-level `message`). Only the message fields are read, never the
/// rest of the body, so a server that echoes the request cannot make the content name a window.
pub fn from_overflow(body: &str) -> Option<u32> {
    let v: Value = serde_json::from_str(body).ok()?;
    if let Some(n) = v.pointer("/error/n_ctx").and_then(tokens) {
        return Some(n);
    }
    let message = |v: &Value| -> Option<u32> {
        let said = [v.pointer("/error/message"), v.get("message")];
        said.into_iter().flatten().filter_map(Value::as_str).find_map(stated_maximum)
    };
    message(&v)
}

/// N in "maximum context length is N tokens" (OpenAI, vLLM) or "maximum model length of N"
/// (vLLM's engine), any case, digits only.
fn stated_maximum(message: &str) -> Option<u32> {
    const SAID: [(&str, &str); 2] =
        [("maximum context length is ", " tokens"), ("maximum model length of ", "")];
    let lower = message.to_ascii_lowercase();
    SAID.iter().find_map(|(before, after)| {
        let rest = &lower[lower.find(before)? + before.len()..];
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        rest[digits..].starts_with(after).then_some(())?;
        tokens(&Value::from(rest[..digits].parse::<u64>().ok()?))
    })
}

/// What one client has learned of its server's context: the description, read at most once, and
/// the last window an overflow answer named (which wins: it is what the server does now).
#[derive(Debug, Default)]
pub struct Learned {
    described: tokio::sync::OnceCell<Option<u32>>,
    /// 0: no overflow answer named a window yet.
    overflowed: AtomicU32,
}

impl Learned {
    /// The window, learning the description with `describe` the first time (callers arriving
    /// while it runs wait for the same answer; later callers never wait).
    pub async fn tokens<F>(&self, describe: F) -> Option<u32>
    where
        F: std::future::Future<Output = Option<u32>>,
    {
        let described = *self.described.get_or_init(|| describe).await;
        self.overflowed().or(described)
    }

    /// The window known now, without asking the server anything.
    pub fn known(&self) -> Option<u32> {
        self.overflowed().or(self.described.get().copied().flatten())
    }

    /// Remembers the window an overflow answer named; true when it is news.
    pub fn overflow(&self, n: u32) -> bool {
        self.overflowed.swap(n, Ordering::Relaxed) != n
    }

    fn overflowed(&self) -> Option<u32> {
        Some(self.overflowed.load(Ordering::Relaxed)).filter(|&n| n != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn props_give_the_slot_context_and_nothing_else_counts() {
        let table: [(Value, Option<u32>); 9] = [
            (json!({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1}), Some(4096)),
            (json!({"n_ctx": 8192}), Some(8192)),
            (json!({"default_generation_settings": {"n_ctx": 2048}, "n_ctx": 8192}), Some(2048)),
            (json!({"default_generation_settings": {"n_ctx": "4096"}}), None),
            (json!({"default_generation_settings": {"n_ctx": 4096.5}}), None),
            (json!({"default_generation_settings": {"n_ctx": -1}}), None),
            (json!({"n_ctx": 12}), None),
            (json!({"n_ctx": 1u64 << 40}), None),
            (json!(["n_ctx", 4096]), None),
        ];
        for (props, expected) in table {
            assert_eq!(from_props(&props), expected, "{props}");
        }
    }

    #[test]
    fn models_give_max_model_len_of_the_configured_model_only() {
        let vllm = json!({"object": "list", "data": [
            {"id": "other", "object": "model", "max_model_len": 131072},
            {"id": "judge", "object": "model", "max_model_len": 4096},
        ]});
        assert_eq!(from_models(&vllm, "judge"), Some(4096));
        assert_eq!(from_models(&vllm, "absent"), None);
        // llama.cpp lists the training context under `meta`: not the context it serves.
        let llama = json!({"data": [{"id": "judge", "meta": {"n_ctx_train": 131072}}]});
        assert_eq!(from_models(&llama, "judge"), None);
        assert_eq!(from_models(&json!({"data": "judge"}), "judge"), None);
    }

    #[test]
    fn overflow_answers_name_their_window_in_the_fields_servers_use() {
        let llama = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":70001,"n_ctx":4096}}"#;
        let openai = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 70001 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        let vllm = r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 70513 tokens (70001 in the messages, 512 in the completion).","type":"BadRequestError","param":null,"code":400}"#;
        let vllm_reply = r#"{"error":{"message":"'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None","type":"BadRequestError","param":null,"code":400}}"#;
        let vllm_engine = r#"{"object":"error","message":"The decoder prompt (length 9000) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens.","type":"BadRequestError","param":null,"code":400}"#;
        let table = [
            (llama, Some(4096)),
            (openai, Some(8192)),
            (vllm, Some(4096)),
            (vllm_reply, Some(4096)),
            (vllm_engine, Some(8192)),
            (r#"{"message":"maximum model length of 8192x"}"#, Some(8192)),
            // Echoed content elsewhere in the body names nothing.
            (r#"{"error":{"message":"too long"},"input":"maximum context length is 2048 tokens"}"#, None),
            (r#"{"message":"maximum context length is 2048 words"}"#, None),
            (r#"{"message":"maximum context length is 99 tokens"}"#, None),
            (r#"{"error":{"n_ctx":"4096"}}"#, None),
            ("<html>413 Request Entity Too Large</html>", None),
            ("maximum context length is 4096 tokens", None),
        ];
        for (body, expected) in table {
            assert_eq!(from_overflow(body), expected, "{body}");
        }
    }

    #[tokio::test]
    async fn the_description_is_asked_once_and_an_overflow_overrides_it() {
        let learned = Learned::default();
        assert_eq!(learned.known(), None);
        assert_eq!(learned.tokens(async { Some(8192) }).await, Some(8192));
        assert_eq!(learned.tokens(async { unreachable!("asked once") }).await, Some(8192));
        assert!(learned.overflow(4096) && !learned.overflow(4096));
        assert_eq!(learned.known(), Some(4096));
        let nothing = Learned::default();
        assert_eq!(nothing.tokens(async { None }).await, None);
        assert_eq!(nothing.tokens(async { Some(1) }).await, None, "a failed description is not asked again");
    }
}
