//! The request sent, the answers read, the errors told apart and the key kept out of sight.

use super::failure::{content_failure, refusal};
use super::transport::keep_only_our_headers;
use super::wire::{request, text, verdict_schema};
use super::*;
use crate::prompt::{build, Phase};
use crate::verdict::{parse, Verdict};
use http::header::{HeaderMap, AUTHORIZATION, CONTENT_TYPE};
use serde_json::json;

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
    let filtered = parse(r#"{"choices":[{"message":{"content":"{}"},"finish_reason":"content_filter"}]}"#);
    assert!(matches!(filtered, Err(Failure::Refused(_))), "{filtered:?}");
}

#[test]
fn content_caused_error_answers_are_told_apart_from_a_down_checker() {
    let llama = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":70001,"n_ctx":4096}}"#;
    let openai = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 70001 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
    let vllm = r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 70513 tokens (70001 in the messages, 512 in the completion).","type":"BadRequestError","param":null,"code":400}"#;
    let azure = r#"{"error":{"message":"The response was filtered","type":null,"param":"prompt","code":"content_filter","status":400}}"#;
    let old_llama = r#"{"error":{"code":500,"message":"input is too large to process. increase the physical batch size","type":"server_error"}}"#;
    let vllm_engine = r#"{"object":"error","message":"The decoder prompt (length 9000) is longer than the maximum model length of 8192.","type":"BadRequestError","param":null,"code":400}"#;
    let table: [(u16, &str, Option<&str>); 11] = [
        (500, old_llama, Some("context_length")),
        (400, vllm_engine, Some("context_length")),
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
