//! `portcullis hook … --proxy URL`: hand the envelope to a running proxy's admin listener
//! (`POST {URL}/hook/{pre|post}`, bearer token) and print its answer.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

use super::envelope::Event;
use crate::shell::Dialect;

/// Why the proxy gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error("the proxy at {url} cannot be reached: {why}")]
    Unreachable { url: String, why: String },
    #[error("the proxy did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the proxy refused the admin token (401): check --token-env")]
    Unauthorized,
    #[error("the proxy answered {status}: {body}")]
    Status { status: u16, body: String },
    #[error("the proxy's answer is not a hook answer")]
    Malformed,
}

/// What the proxy answered: the JSON to print, and an error to show on stderr.
#[derive(Debug)]
pub struct Forwarded {
    pub answer: Value,
    pub error: Option<String>,
}

/// Posts `envelope` to `{base}/hook/{pre|post}`, naming the shell that runs `Bash` here.
pub fn forward(
    base: &str,
    token: &str,
    event: Event,
    agent: Option<&str>,
    shell: Dialect,
    envelope: Vec<u8>,
    timeout: Duration,
) -> Result<Forwarded, ProxyError> {
    let phase = if event == Event::Pre { "pre" } else { "post" };
    send(base, phase, token, agent, shell, envelope, timeout)
}

/// Posts `envelope` to `{base}/hook/{phase}` and reads the proxy's `{"answer": {…}}`.
pub fn send(
    base: &str,
    phase: &str,
    token: &str,
    agent: Option<&str>,
    shell: Dialect,
    envelope: Vec<u8>,
    timeout: Duration,
) -> Result<Forwarded, ProxyError> {
    let url = format!("{}/hook/{phase}", base.trim_end_matches('/'));
    let unreachable = |why: String| ProxyError::Unreachable { url: url.clone(), why };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| unreachable(e.to_string()))?;
    let mut req = http::Request::post(&url)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::AUTHORIZATION, format!("Bearer {token}"));
    if let Some(a) = agent {
        req = req.header(super::serve::AGENT_HEADER, a);
    }
    req = req.header(super::serve::SHELL_HEADER, shell.as_str());
    let req = req.body(Full::new(Bytes::from(envelope))).map_err(|e| unreachable(e.to_string()))?;
    rt.block_on(async {
        let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
        let exchange = async {
            let resp =
                client.request(req).await.map_err(|e| unreachable(crate::runtime::Chain(&e).to_string()))?;
            let status = resp.status();
            let body = resp.into_body().collect().await.map_err(|e| unreachable(e.to_string()))?.to_bytes();
            Ok::<_, ProxyError>((status, body))
        };
        let (status, body) =
            tokio::time::timeout(timeout, exchange).await.map_err(|_| ProxyError::Timeout(timeout))??;
        if status == http::StatusCode::UNAUTHORIZED {
            return Err(ProxyError::Unauthorized);
        }
        if !status.is_success() {
            let body = String::from_utf8_lossy(&body).chars().take(300).collect();
            return Err(ProxyError::Status { status: status.as_u16(), body });
        }
        let mut v: Value = serde_json::from_slice(&body).map_err(|_| ProxyError::Malformed)?;
        let answer =
            v.get_mut("answer").filter(|a| a.is_object()).map(Value::take).ok_or(ProxyError::Malformed)?;
        let error = v.get("error").and_then(Value::as_str).map(str::to_owned);
        Ok(Forwarded { answer, error })
    })
}
