//! `portcullis approvals allow ID --rule`: previews the "allow always" rule and the diff of the
//! proxy's rule file, asks to confirm, then writes it (insisting the file is still the one
//! previewed) and allows the call.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

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
        anyhow::bail!("{status}: {why}");
    }
    Ok(v)
}

/// What the preview shows before the question.
pub fn shown(preview: &Value) -> String {
    let diff = preview["diff"].as_str().unwrap_or("");
    let file = preview["file"].as_str().unwrap_or("");
    let rule = preview["rule"].as_str().unwrap_or("");
    match diff.is_empty() {
        true => format!("rule: {rule}\n{file} already holds it"),
        false => format!("rule: {rule}\n{diff}"),
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
        done["call"].as_str().unwrap_or(""),
        done["file"].as_str().unwrap_or("")
    ))
}
