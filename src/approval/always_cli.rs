//! `portcullis approvals allow ID --rule`: previews the "allow always" rule and the diff of the
//! proxy's rule file, asks to confirm, then writes it (insisting the file is still the one
//! previewed) and allows the call. Everything shown of the call is [`inert`].

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

use crate::inert::{inert, inert_lines};

/// One authenticated exchange with the admin API; the answer's JSON, or the refusal as an error.
pub(super) async fn exchange(
    token: &str,
    req: http::request::Builder,
    body: Option<Value>,
) -> anyhow::Result<Value> {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let req = req
        .header(http::header::AUTHORIZATION, format!("Bearer {token}"))
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(body.map(|b| Bytes::from(b.to_string())).unwrap_or_default()))?;
    let resp = client.request(req).await?;
    let status = resp.status();
    let bytes = resp.into_body().collect().await?.to_bytes();
    let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    if !status.is_success() {
        let why = v["error"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| String::from_utf8_lossy(&bytes).into_owned());
        anyhow::bail!("{status}: {}", inert(&why));
    }
    Ok(v)
}

/// What the preview shows before the question: the rule and the file [`inert`], the diff's own
/// lines kept and each made inert ([`inert_lines`]).
pub fn shown(preview: &Value) -> String {
    let diff = preview["diff"].as_str().unwrap_or("");
    let file = inert(preview["file"].as_str().unwrap_or(""));
    let rule = inert(preview["rule"].as_str().unwrap_or(""));
    match diff.is_empty() {
        true => format!("rule: {rule}\n{file} already holds it"),
        false => format!("rule: {rule}\n{}", inert_lines(diff)),
    }
}

/// Runs the preview, asks `confirm` with what it shows, and writes when confirmed.
pub async fn run(
    admin: &str,
    token: &str,
    id: u64,
    confirm: impl FnOnce(&str) -> bool,
) -> anyhow::Result<String> {
    let base = admin.trim_end_matches('/');
    let preview = exchange(token, http::Request::get(format!("{base}/approvals/{id}/always")), None).await?;
    if !confirm(&shown(&preview)) {
        return Ok(format!("call {id}: nothing written, nothing decided"));
    }
    let body = serde_json::json!({"decision": "allow_always", "base": preview["base"]});
    let done = exchange(token, http::Request::post(format!("{base}/approvals/{id}")), Some(body)).await?;
    Ok(format!(
        "call {id}: allow_always ({}); rule written to {}",
        inert(done["call"].as_str().unwrap_or("")),
        inert(done["file"].as_str().unwrap_or(""))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_preview_shows_no_bidi_override_or_control_from_the_rule_and_keeps_the_diffs_lines() {
        let rule = "mcp__py__write_\u{202e}dda({\"a\":1})";
        let diff = format!("--- rules.yaml\n+++ rules.yaml\n   allow:\n+    - '{rule}'\u{1b}[2K");
        let text = shown(&json!({ "rule": rule, "diff": diff, "file": "rules.yaml" }));
        assert_eq!(text.lines().count(), 5, "{text}");
        assert!(!text.chars().any(|c| c != '\n' && crate::inert::escaped(c)), "{text}");
        assert!(text.starts_with("rule: mcp__py__write_\\u{202e}dda"), "{text}");
        let same = shown(&json!({ "rule": rule, "diff": "", "file": "r\u{2067}.yaml" }));
        assert_eq!(same, "rule: mcp__py__write_\\u{202e}dda({\"a\":1})\nr\\u{2067}.yaml already holds it");
    }
}
