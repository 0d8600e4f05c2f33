//! Test support: real peers as child processes (killed on drop), the proxy in-process on port 0,
//! and the journals that show what reached an upstream.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use portcullis::app::Running;
use portcullis::config::Config;
use serde_json::Value;

pub mod fake_checker;
pub mod oauth_peers;
pub mod redis;

/// How long something a test waits for may take on a busy machine before the test fails: a
/// generous deadline, never a count of polls (a count times out sooner the busier the machine).
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Polls `probe` until it yields a value, backing off from 10 ms to 200 ms between polls, for
/// at most [`PATIENCE`]; then fails naming `what`.
pub async fn eventually<T, Fut>(what: &str, mut probe: impl FnMut() -> Fut) -> T
where
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let mut pause = Duration::from_millis(10);
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(tokio::time::Instant::now() < deadline, "waited {PATIENCE:?} for {what}");
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(200));
    }
}

pub fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

pub fn node_module(rel: &str) -> PathBuf {
    let p = peers_dir().join("node_modules").join(rel);
    assert!(p.exists(), "{} is missing: run `npm ci --prefix tests/peers` (scripts/test does)", p.display());
    p
}

/// A peer server process with its journal.
pub struct Peer {
    child: Child,
    pub port: u16,
    pub journal: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Peer {
    /// Starts `program args…` with `PEER_JOURNAL` set and waits for its `LISTENING <port>` line.
    pub fn start(program: &str, args: &[&str]) -> Peer {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("journal.jsonl");
        let mut child = Command::new(program)
            .args(args)
            .current_dir(peers_dir())
            .env("PEER_JOURNAL", &journal)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(p) = line.strip_prefix("LISTENING ") {
                    let _ = tx.send(p.trim().parse::<u16>().ok());
                }
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(60))
            .ok()
            .flatten()
            .unwrap_or_else(|| panic!("{program} {args:?} did not print LISTENING"));
        Peer { child, port, journal, _dir: dir }
    }

    pub fn python(era: &str) -> Peer {
        Peer::start("python3", &["py_server.py", "--era", era])
    }

    pub fn everything() -> Peer {
        Peer::start("node", &["everything_http.mjs"])
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Every journal line so far.
    pub fn journal(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.journal)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Tools the upstream ran, by the py_server's `kind: tool` lines.
    pub fn tools_run(&self) -> Vec<String> {
        self.journal()
            .iter()
            .filter(|l| l["kind"] == "tool")
            .filter_map(|l| l["tool"].as_str().map(str::to_owned))
            .collect()
    }

    /// Names in every `tools/call` the upstream received over HTTP (arrays included).
    pub fn calls_received(&self) -> Vec<String> {
        let mut out = Vec::new();
        for l in self.journal().iter().filter(|l| l["kind"] == "http") {
            let msgs = match &l["body"] {
                Value::Array(a) => a.clone(),
                v => vec![v.clone()],
            };
            for m in msgs {
                if m["method"] == "tools/call" {
                    out.push(m["params"]["name"].as_str().unwrap_or("").to_owned());
                }
            }
        }
        out
    }

    /// The `kind: http` journal lines.
    pub fn journal_http(&self) -> Vec<Value> {
        self.journal().into_iter().filter(|l| l["kind"] == "http").collect()
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A policy fragment that allows every MCP and HTTP tool (Layer 1's default is ask).
pub const ALLOW_ALL: &str = "permissions: { allow: [\"mcp__*\", \"http__*\"] }\n";

/// A config for the proxy on port 0 with the given upstreams and policy (YAML fragment).
pub fn config(upstreams: &[(&str, &str)], extra: &str) -> Config {
    let mut yaml = String::from("listen: 127.0.0.1:0\nadmin: { listen: 127.0.0.1:0 }\nupstreams:\n");
    for (name, url) in upstreams {
        yaml.push_str(&format!("  {name}: {{ url: \"{url}\" }}\n"));
    }
    yaml.push_str(extra);
    Config::parse(&yaml, "test").unwrap_or_else(|e| panic!("{e}"))
}

pub async fn proxy(config: &Config) -> Running {
    portcullis::app::start(config).await.unwrap()
}

/// The proxy on the config in `file`, reloading it (every 50 ms) when the file changes.
pub async fn proxy_reloading(file: &Path) -> Running {
    let p = proxy(&Config::load(file).unwrap()).await;
    let loader = file.to_owned();
    p.reload_on_change(portcullis::reload::Reload {
        files: vec![file.to_owned()],
        load: Box::new(move || Config::load(&loader).map_err(|e| e.to_string())),
        interval: std::time::Duration::from_millis(50),
    });
    p
}

pub fn proxy_url(p: &Running, upstream: &str) -> String {
    format!("http://{}/mcp/{upstream}", p.addr)
}

/// Runs the Python SDK client; returns its JSON lines (one per step).
pub async fn py_client(url: &str, era: &str, steps: &[&str]) -> Vec<Value> {
    py_client_with(url, era, &[], steps).await
}

/// Runs the Python SDK client against a stdio server it spawns (`argv` is a JSON array).
pub async fn py_client_stdio(argv: &str, steps: &[&str]) -> Vec<Value> {
    py_client_stdio_with(argv, &[], steps).await
}

pub async fn py_client_stdio_with(argv: &str, extra: &[&str], steps: &[&str]) -> Vec<Value> {
    let mut args = vec!["py_client.py", "--stdio", argv, "--era", "legacy", "--timeout", "30"];
    args.extend_from_slice(extra);
    run_py_client(args, steps).await
}

pub async fn py_client_with(url: &str, era: &str, extra: &[&str], steps: &[&str]) -> Vec<Value> {
    let mut args = vec!["py_client.py", "--url", url, "--era", era, "--timeout", "30"];
    args.extend_from_slice(extra);
    run_py_client(args, steps).await
}

async fn run_py_client(mut args: Vec<&str>, steps: &[&str]) -> Vec<Value> {
    args.extend_from_slice(steps);
    let out = tokio::process::Command::new("python3")
        .args(&args)
        .current_dir(peers_dir())
        .kill_on_drop(true)
        .output()
        .await
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<Value> = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert!(
        !lines.is_empty(),
        "py_client printed nothing; status {:?}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    lines
}

/// The text of a step's first content item.
pub fn text_of(step: &Value) -> String {
    step["result"]["content"][0]["text"].as_str().unwrap_or("").to_owned()
}

/// A raw HTTP POST; returns status, headers and body text.
pub async fn post(
    url: &str,
    headers: &[(&str, &str)],
    body: impl Into<String>,
) -> (u16, http::HeaderMap, String) {
    use http_body_util::BodyExt;
    let resp = send_post(url, headers, body.into()).await;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, headers, String::from_utf8_lossy(&body).into_owned())
}

/// A raw HTTP POST whose body is read as it arrives: for a stream the test watches while it is
/// still open. Returns the status and the unread body.
pub async fn post_streaming(
    url: &str,
    headers: &[(&str, &str)],
    body: impl Into<String>,
) -> (u16, Streaming) {
    let resp = send_post(url, headers, body.into()).await;
    (resp.status().as_u16(), Streaming { body: resp.into_body(), read: Vec::new() })
}

async fn send_post(
    url: &str,
    headers: &[(&str, &str)],
    body: String,
) -> http::Response<hyper::body::Incoming> {
    use http_body_util::Full;
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<bytes::Bytes>>();
    let mut req = http::Request::post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    client.request(req.body(Full::new(bytes::Bytes::from(body))).unwrap()).await.unwrap()
}

/// A response body being read (see [`post_streaming`]).
pub struct Streaming {
    body: hyper::body::Incoming,
    read: Vec<u8>,
}

impl Streaming {
    /// Everything read so far, as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.read).into_owned()
    }

    /// Reads until `seen` holds of the text read so far (true) or the body ends (false); fails
    /// the test after [`PATIENCE`].
    pub async fn read_until(&mut self, mut seen: impl FnMut(&str) -> bool) -> bool {
        use http_body_util::BodyExt;
        let read = async {
            while !seen(&self.text()) {
                match self.body.frame().await {
                    Some(Ok(frame)) => {
                        if let Ok(data) = frame.into_data() {
                            self.read.extend_from_slice(&data);
                        }
                    }
                    Some(Err(_)) | None => return false,
                }
            }
            true
        };
        match tokio::time::timeout(PATIENCE, read).await {
            Ok(seen) => seen,
            Err(_) => panic!("waited {PATIENCE:?} on a stream; it said: {}", self.text()),
        }
    }

    /// Reads the body to its end; returns all of it as text.
    pub async fn finish(mut self) -> String {
        self.read_until(|_| false).await;
        self.text()
    }
}

/// The JSON of a response body that may be plain JSON or SSE (the last `data:` of a message).
pub fn rpc_body(text: &str) -> Value {
    if let Ok(v) = serde_json::from_str(text) {
        return v;
    }
    text.lines()
        .rev()
        .filter_map(|l| l.strip_prefix("data:"))
        .find_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .unwrap_or(Value::Null)
}

/// A raw HTTP GET; returns status, headers and body text.
pub async fn get(url: &str, headers: &[(&str, &str)]) -> (u16, http::HeaderMap, String) {
    use http_body_util::{BodyExt, Empty};
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Empty<bytes::Bytes>>();
    let mut req = http::Request::get(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = client.request(req.body(Empty::new()).unwrap()).await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, headers, String::from_utf8_lossy(&body).into_owned())
}

/// The legacy protocol version the raw-request tests speak.
pub const LEGACY: &str = "2025-06-18";

/// Opens a legacy-era MCP session with raw requests (initialize, then initialized); returns its
/// `Mcp-Session-Id`.
pub async fn open_legacy_session(url: &str) -> String {
    open_legacy_session_with(url, &[]).await
}

/// [`open_legacy_session`] with `headers` on both requests (an agent's `Authorization`).
pub async fn open_legacy_session_with(url: &str, headers: &[(&str, &str)]) -> String {
    let init = serde_json::json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let (status, answer, body) = post(url, headers, init.to_string()).await;
    assert_eq!(status, 200, "{body}");
    let id = answer["mcp-session-id"].to_str().unwrap().to_owned();
    let note = serde_json::json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let mut h = vec![("mcp-session-id", id.as_str()), ("mcp-protocol-version", LEGACY)];
    h.extend_from_slice(headers);
    post(url, &h, note.to_string()).await;
    id
}
