//! `portcullis pin`: list every upstream's tools (initialize, then `tools/list` page by page)
//! and write their digests to the lock file. HTTP upstreams come from the config; a stdio server
//! (guarded with `wrap`) is named and launched on the command line.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Uri};
use http_body_util::Full;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::config::pins::lock::{Lock, LockError};
use crate::config::Config;
use crate::oauth::fetch::Fetcher;

/// Pages of `tools/list` read at most per upstream.
const MAX_PAGES: usize = 100;
/// The handshake version offered; a modern-only server is listed at [`MODERN`] instead.
const HANDSHAKE: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";
/// How long a stdio server may take to answer one request.
const STDIO_TIMEOUT: Duration = Duration::from_secs(30);

/// Why pinning failed.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error("upstream {upstream}: {why}")]
    Upstream { upstream: String, why: String },
    #[error("the config names no lock file (pins: {{ file: … }}) and no --out was given")]
    NoFile,
    #[error(transparent)]
    Lock(#[from] LockError),
}

/// A stdio server to pin under `name` (the name `wrap --name` gives it).
#[derive(Debug, Clone, Copy)]
pub struct StdioServer<'a> {
    pub name: &'a str,
    pub cmd: &'a [String],
}

/// Lists every HTTP upstream of `config` (and `stdio`, if given) and writes the lock file to
/// `out` (else the config's `pins.file`), keeping the pins of upstreams not listed this time.
/// Returns one line per upstream saying what changed, for the operator to review.
pub async fn run(
    config: &Config,
    out: Option<&Path>,
    stdio: Option<StdioServer<'_>>,
) -> Result<Vec<String>, PinError> {
    let path = match (out, &config.policy.pins) {
        (Some(p), _) => p.to_path_buf(),
        (None, Some(pins)) => pins.file.clone(),
        (None, None) => return Err(PinError::NoFile),
    };
    let mut lock = match Lock::read(&path) {
        Ok(l) => l,
        Err(LockError::Read { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Lock::default()
        }
        Err(e) => return Err(e.into()),
    };
    let fetcher = Fetcher::new(config.limits.connect_timeout);
    let mut listed: Vec<(String, Vec<Value>)> = Vec::new();
    for (name, upstream) in &config.upstreams {
        let tools = list_http(&fetcher, &upstream.url)
            .await
            .map_err(|why| PinError::Upstream { upstream: name.clone(), why })?;
        listed.push((name.clone(), tools));
    }
    if let Some(s) = stdio {
        let tools = list_stdio(config, s)
            .await
            .map_err(|why| PinError::Upstream { upstream: s.name.to_owned(), why })?;
        listed.push((s.name.to_owned(), tools));
    }
    let mut report = Vec::new();
    for (name, tools) in listed {
        let before = lock.upstreams.get(&name).cloned().unwrap_or_default();
        lock.set_upstream(&name, &tools);
        let after = &lock.upstreams[&name];
        let added = after.keys().filter(|k| !before.contains_key(*k)).count();
        let changed =
            after.iter().filter(|(k, p)| before.get(*k).is_some_and(|b| b.digest != p.digest)).count();
        let removed = before.keys().filter(|k| !after.contains_key(*k)).count();
        report.push(format!(
            "{name}: {} tool(s) pinned ({added} new, {changed} changed, {removed} removed)",
            after.len()
        ));
    }
    lock.write(&path)?;
    report.push(format!("wrote {}", path.display()));
    Ok(report)
}

/// One JSON-RPC exchange's answer: the message with `id` from a JSON or SSE body.
fn answer(body: &[u8], id: u64) -> Option<Value> {
    let text = String::from_utf8_lossy(body);
    let matches = |v: &Value| v.get("id").and_then(Value::as_u64) == Some(id);
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        return matches(&v).then_some(v);
    }
    // SSE: `data:` lines, an event per blank line.
    let mut data = String::new();
    for line in text.lines().chain(std::iter::once("")) {
        if let Some(d) = line.strip_prefix("data:") {
            data.push_str(d.strip_prefix(' ').unwrap_or(d));
            data.push('\n');
        } else if line.is_empty() && !data.is_empty() {
            if let Ok(v) = serde_json::from_str::<Value>(&data) {
                if matches(&v) {
                    return Some(v);
                }
            }
            data.clear();
        }
    }
    None
}

/// The `tools` of one page (and the next cursor), or the JSON-RPC error's message.
fn page(msg: &Value) -> Result<(Vec<Value>, Option<String>), String> {
    if let Some(e) = msg.get("error") {
        return Err(format!("tools/list failed: {e}"));
    }
    let result = msg.get("result").ok_or("tools/list answered without a result")?;
    let tools = result.get("tools").and_then(Value::as_array).cloned().unwrap_or_default();
    let next = result.get("nextCursor").and_then(Value::as_str).map(str::to_owned);
    Ok((tools, next))
}

struct HttpSession<'a> {
    fetcher: &'a Fetcher,
    url: &'a Uri,
    /// `None`: the modern era (no handshake, the version in every request).
    session: Option<String>,
    version: &'static str,
}

impl HttpSession<'_> {
    async fn post(&self, body: &Value, method: &str) -> Result<crate::oauth::fetch::Fetched, String> {
        let mut req = Request::post(self.url.clone())
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", self.version);
        if self.version == MODERN {
            req = req.header("mcp-method", method);
        }
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        let req = req.body(Full::new(Bytes::from(body.to_string()))).map_err(|e| e.to_string())?;
        self.fetcher.send(req).await.map_err(|e| e.to_string())
    }

    async fn list(&self) -> Result<Vec<Value>, String> {
        let mut pages = Pages::default();
        while let Some((id, cursor)) = pages.next() {
            let mut params = json!({});
            if let Some(c) = &cursor {
                params["cursor"] = json!(c);
            }
            if self.version == MODERN {
                params["_meta"] = json!({
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientInfo": {"name": "portcullis-pin", "version": env!("CARGO_PKG_VERSION")},
                    "io.modelcontextprotocol/clientCapabilities": {},
                });
            }
            let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params});
            let got = self.post(&body, "tools/list").await?;
            let msg = answer(&got.body, id)
                .ok_or_else(|| format!("tools/list: no answer (HTTP {})", got.status))?;
            if pages.took(&msg)? {
                return Ok(pages.tools);
            }
        }
        Err(Pages::EXHAUSTED.into())
    }
}

/// Paging through `tools/list` (at most [`MAX_PAGES`]), whatever carries the requests.
#[derive(Default)]
struct Pages {
    tools: Vec<Value>,
    cursor: Option<String>,
    asked: u64,
    done: bool,
}

impl Pages {
    const EXHAUSTED: &'static str = "tools/list: too many pages";

    /// The next request's id and cursor, while there are pages left to ask for.
    fn next(&mut self) -> Option<(u64, Option<String>)> {
        if self.done || self.asked >= MAX_PAGES as u64 {
            return None;
        }
        self.asked += 1;
        Some((self.asked + 1, self.cursor.take()))
    }

    /// Takes one answer; true when it was the last page.
    fn took(&mut self, msg: &Value) -> Result<bool, String> {
        let (page, next) = page(msg)?;
        self.tools.extend(page);
        self.done = next.is_none();
        self.cursor = next;
        Ok(self.done)
    }
}

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": HANDSHAKE,
        "capabilities": {},
        "clientInfo": {"name": "portcullis-pin", "version": env!("CARGO_PKG_VERSION")},
    }})
}

/// Initializes (falling back to the modern era when the server has no handshake), lists every
/// page, and ends the session.
async fn list_http(fetcher: &Fetcher, url: &Uri) -> Result<Vec<Value>, String> {
    let mut s = HttpSession { fetcher, url, session: None, version: HANDSHAKE };
    let init = s.post(&initialize(1), "initialize").await?;
    let msg = answer(&init.body, 1);
    let modern = msg.as_ref().and_then(|m| m.pointer("/error/code")).and_then(Value::as_i64) == Some(-32022);
    if modern {
        s.version = MODERN;
        return s.list().await;
    }
    let msg = msg.ok_or_else(|| format!("initialize: no answer (HTTP {})", init.status))?;
    if let Some(e) = msg.get("error") {
        return Err(format!("initialize failed: {e}"));
    }
    s.session = init.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    s.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), "notifications/initialized")
        .await?;
    let tools = s.list().await;
    if let Some(id) = &s.session {
        let req = Request::delete(url.clone())
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", HANDSHAKE)
            .body(Full::new(Bytes::new()));
        if let Ok(req) = req {
            let _ = fetcher.send(req).await;
        }
    }
    tools
}

/// Launches the stdio server as `wrap` would (the same environment: never the guard's
/// credentials), initializes, lists every page, and closes its stdin.
async fn list_stdio(config: &Config, server: StdioServer<'_>) -> Result<Vec<Value>, String> {
    let (program, args) = server.cmd.split_first().ok_or("no command given")?;
    let mut child = crate::stdio::server_command(config, server.name, program, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    let mut ask = async |msg: Value, id: Option<u64>| -> Result<Option<Value>, String> {
        let mut line = msg.to_string();
        line.push('\n');
        stdin.write_all(line.as_bytes()).await.map_err(|e| e.to_string())?;
        let Some(id) = id else { return Ok(None) };
        let read = async {
            while let Some(l) = lines.next_line().await.map_err(|e| e.to_string())? {
                if let Some(v) = answer(l.as_bytes(), id) {
                    return Ok(Some(v));
                }
            }
            Err("the server exited before answering".to_owned())
        };
        tokio::time::timeout(STDIO_TIMEOUT, read).await.map_err(|_| "the server did not answer".to_owned())?
    };
    let init = ask(initialize(1), Some(1)).await?.ok_or("initialize: no answer")?;
    if let Some(e) = init.get("error") {
        return Err(format!("initialize failed: {e}"));
    }
    ask(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), None).await?;
    let mut pages = Pages::default();
    while let Some((id, cursor)) = pages.next() {
        let params = cursor.map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params});
        let msg = ask(msg, Some(id)).await?.ok_or("tools/list: no answer")?;
        if pages.took(&msg)? {
            return Ok(pages.tools);
        }
    }
    Err(Pages::EXHAUSTED.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_found_in_json_or_in_sse_events() {
        let json = br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#;
        assert!(answer(json, 2).is_some());
        assert!(answer(json, 3).is_none());
        let sse = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"a\"}],\"nextCursor\":\"n\"}}\n\n";
        let (tools, next) = page(&answer(sse, 2).unwrap()).unwrap();
        assert_eq!((tools.len(), next.as_deref()), (1, Some("n")));
    }
}
