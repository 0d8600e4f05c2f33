//! Where `portcullis explain` finds a decision's lines: a running proxy's admin listener
//! (`GET /decisions/{id}`, bearer token), or audit files read line by line (after a restart, or
//! for a decision older than what the proxy keeps).

use std::path::{Path, PathBuf};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

use crate::decision::DecisionId;

/// Why a decision's lines could not be had.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("{0:?} is not a decision id (12 characters, as the refusal cites it)")]
    NotAnId(String),
    #[error("the admin listener at {admin} cannot be asked")]
    Request {
        admin: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("the admin listener answered {status}: {why}")]
    Refused { status: http::StatusCode, why: String },
    #[error("{path} cannot be read")]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("decision {0} is in none of the audit files given")]
    NotFound(DecisionId),
}

/// The id `text` spells, or why not.
pub fn id(text: &str) -> Result<DecisionId, FetchError> {
    DecisionId::parse(text.trim()).ok_or_else(|| FetchError::NotAnId(text.to_owned()))
}

/// The lines of decision `id` as the proxy at `admin` keeps them.
pub async fn from_admin(admin: &str, token: &str, id: DecisionId) -> Result<Vec<Value>, FetchError> {
    let failed = |e: Box<dyn std::error::Error + Send + Sync>| FetchError::Request {
        admin: admin.to_owned(),
        source: e,
    };
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let req = http::Request::get(format!("{}/decisions/{id}", admin.trim_end_matches('/')))
        .header(http::header::AUTHORIZATION, format!("Bearer {token}"))
        .body(Full::default())
        .map_err(|e| failed(e.into()))?;
    let resp = client.request(req).await.map_err(|e| failed(e.into()))?;
    let status = resp.status();
    let body = resp.into_body().collect().await.map_err(|e| failed(e.into()))?.to_bytes();
    let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if !status.is_success() {
        let why =
            v["error"].as_str().map(str::to_owned).unwrap_or_else(|| String::from_utf8_lossy(&body).into());
        return Err(FetchError::Refused { status, why });
    }
    Ok(v["lines"].as_array().cloned().unwrap_or_default())
}

/// The lines of decision `id` in `files` (in the order given; lines that are not JSON skipped).
pub fn from_files(files: &[PathBuf], id: DecisionId) -> Result<Vec<Value>, FetchError> {
    let wanted = id.to_string();
    let mut found = Vec::new();
    for path in files {
        found.extend(in_file(path, &wanted)?);
    }
    match found.is_empty() {
        true => Err(FetchError::NotFound(id)),
        false => Ok(found),
    }
}

fn in_file(path: &Path, wanted: &str) -> Result<Vec<Value>, FetchError> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).map_err(|e| FetchError::File { path: path.into(), source: e })?;
    let mut out = Vec::new();
    for line in std::io::BufReader::new(file).lines() {
        let line = line.map_err(|e| FetchError::File { path: path.into(), source: e })?;
        // Cheap first: only a line naming the id is parsed.
        if !line.contains(wanted) {
            continue;
        }
        if let Ok(v) = serde_json::from_str::<Value>(&line) {
            if v.get("id").and_then(Value::as_str) == Some(wanted) {
                out.push(v);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_audit_file_yields_the_lines_of_one_decision_and_nothing_else() {
        let (a, b) = (DecisionId::next(), DecisionId::next());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let lines = [
            format!(r#"{{"id":"{a}","phase":"pre","outcome":"denied"}}"#),
            "not json".to_owned(),
            format!(r#"{{"id":"{b}","phase":"pre","outcome":"forwarded","reason":"mentions {a}"}}"#),
            format!(r#"{{"id":"{a}","phase":"post","outcome":"blocked"}}"#),
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let found = from_files(std::slice::from_ref(&path), a).unwrap();
        let phases: Vec<&str> = found.iter().filter_map(|v| v["phase"].as_str()).collect();
        assert_eq!(phases, ["pre", "post"]);
        assert!(matches!(from_files(&[path], DecisionId::next()), Err(FetchError::NotFound(_))));
        assert!(matches!(id("nope"), Err(FetchError::NotAnId(_))));
    }
}
