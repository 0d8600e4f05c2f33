//! Headless Chromium behind ChromeDriver, driven over WebDriver (plain HTTP JSON, sent with
//! hyper): what the console tests click, type, read and photograph with.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::Method;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use serde_json::{json, Value};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// The W3C WebDriver key of an element reference.
pub(crate) const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";
/// How long any one thing may take before the test gives up (bounded polling, never a sleep
/// standing in for an assertion).
pub(crate) const PATIENCE: Duration = Duration::from_secs(30);

/// Headless Chromium behind ChromeDriver, with a fresh profile. Dropping it ends the WebDriver
/// session (ChromeDriver quits the browser) and kills ChromeDriver.
pub(crate) struct Browser {
    driver: Child,
    addr: String,
    session: String,
    client: Client<HttpConnector, Full<Bytes>>,
    dir: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        // After a failure only (`quit` ends a passing test's session): blocking, so the page's
        // requests to an in-process admin listener stall and Chromium takes a while to close.
        if self.session.is_empty() {
            let _ = self.driver.kill();
            let _ = self.driver.wait();
            return;
        }
        if let Ok(mut s) = std::net::TcpStream::connect(&self.addr) {
            let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
            let req = format!(
                "DELETE /session/{} HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                self.session, self.addr
            );
            if s.write_all(req.as_bytes()).is_ok() {
                let _ = s.read_to_end(&mut Vec::new());
            }
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Browser {
    pub(crate) async fn start() -> Browser {
        Browser::start_with(&[]).await
    }

    /// [`Browser::start`] with `env` set for ChromeDriver and the browser it launches (`TZ`: the
    /// zone the page's local times are in).
    pub(crate) async fn start_with(env: &[(&str, &str)]) -> Browser {
        for bin in [CHROMIUM, CHROMEDRIVER] {
            assert!(
                Path::new(bin).exists(),
                "{bin} is missing: apt-get install -y --no-install-recommends chromium chromium-driver \
                 (.ci/run does)"
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("profile");
        std::fs::create_dir(&profile).unwrap();
        // --port=0: ChromeDriver picks a free port and says which on stdout.
        let mut driver = Command::new(CHROMEDRIVER)
            .envs(env.iter().copied())
            .arg("--port=0")
            .arg(format!("--log-path={}", dir.path().join("chromedriver.log").display()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {CHROMEDRIVER}: {e}"));
        let stdout = driver.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(p) = line.split("started successfully on port ").nth(1) {
                    let _ = tx.send(p.trim_end_matches('.').trim().parse::<u16>().ok());
                }
            }
        });
        let port = rx.recv_timeout(PATIENCE).ok().flatten().expect("chromedriver did not say its port");
        let client = Client::builder(hyper_util::rt::TokioExecutor::new()).build_http::<Full<Bytes>>();
        let mut b =
            Browser { driver, addr: format!("127.0.0.1:{port}"), session: String::new(), client, dir };
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--disable-background-networking",
                format!("--user-data-dir={}", profile.display()),
            ]}
        }}});
        let created = b.request(Method::POST, "/session".into(), Some(caps)).await;
        let created = created.unwrap_or_else(|e| panic!("no browser session: {e}\n{}", b.log_tail()));
        b.session = created["sessionId"].as_str().expect("a session id").to_owned();
        b
    }

    /// Ends the WebDriver session: ChromeDriver closes the browser.
    pub(crate) async fn quit(mut self) {
        let path = format!("/session/{}", std::mem::take(&mut self.session));
        self.request(Method::DELETE, path, None).await.expect("the browser closes");
    }

    pub(crate) fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.dir.path().join("chromedriver.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// One WebDriver request; `Ok(value)` on success, `Err(value)` with the driver's error.
    pub(crate) async fn request(
        &self,
        method: Method,
        path: String,
        body: Option<Value>,
    ) -> Result<Value, Value> {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let req = http::Request::builder()
            .method(method)
            .uri(format!("http://{}{path}", self.addr))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        let resp = tokio::time::timeout(PATIENCE * 2, self.client.request(req))
            .await
            .expect("chromedriver answers in time")
            .expect("chromedriver is reachable");
        let ok = resp.status().is_success();
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if ok {
            Ok(v["value"].clone())
        } else {
            Err(v["value"].clone())
        }
    }

    pub(crate) async fn cmd(&self, method: Method, path: &str, body: Option<Value>) -> Value {
        let path = format!("/session/{}{path}", self.session);
        self.request(method, path.clone(), body)
            .await
            .unwrap_or_else(|e| panic!("WebDriver {path}: {e}\n{}", self.log_tail()))
    }

    pub(crate) async fn goto(&self, url: &str) {
        self.cmd(Method::POST, "/url", Some(json!({ "url": url }))).await;
    }

    pub(crate) async fn refresh(&self) {
        self.cmd(Method::POST, "/refresh", Some(json!({}))).await;
    }

    pub(crate) async fn find(&self, css: &str) -> String {
        let el =
            self.cmd(Method::POST, "/element", Some(json!({"using": "css selector", "value": css}))).await;
        el[ELEMENT].as_str().unwrap_or_else(|| panic!("no element {css}: {el}")).to_owned()
    }

    /// Sizes the window (CSS pixels), so a screenshot shows the whole console.
    pub(crate) async fn window(&self, width: u32, height: u32) {
        self.cmd(Method::POST, "/window/rect", Some(json!({"width": width, "height": height}))).await;
    }

    /// The viewport as PNG, written to `path`.
    pub(crate) async fn screenshot(&self, path: &Path) {
        use base64::Engine;
        let shot = self.cmd(Method::GET, "/screenshot", None).await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot.as_str().expect("a base64 screenshot"))
            .expect("valid base64");
        assert!(png.starts_with(b"\x89PNG"), "not a PNG");
        std::fs::write(path, png).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }

    /// Presses `key` (a WebDriver key code, e.g. `\u{E007}` Enter) in whatever has focus.
    pub(crate) async fn press(&self, key: &str) {
        let actions = json!({"actions": [{"type": "key", "id": "keyboard", "actions": [
            {"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]}]});
        self.cmd(Method::POST, "/actions", Some(actions)).await;
    }

    pub(crate) async fn click(&self, element: &str) {
        self.cmd(Method::POST, &format!("/element/{element}/click"), Some(json!({}))).await;
    }

    pub(crate) async fn type_into(&self, element: &str, text: &str) {
        self.cmd(Method::POST, &format!("/element/{element}/value"), Some(json!({ "text": text }))).await;
    }

    /// Runs `script` (a function body; `arguments` are `args`) in the page.
    pub(crate) async fn js(&self, script: &str, args: Value) -> Value {
        self.cmd(Method::POST, "/execute/sync", Some(json!({"script": script, "args": args}))).await
    }

    /// Evaluates `script` until `done` holds for its value (bounded); returns that value.
    pub(crate) async fn wait_for(
        &self,
        what: &str,
        script: &str,
        args: Value,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let start = Instant::now();
        loop {
            let v = self.js(script, args.clone()).await;
            if done(&v) {
                return v;
            }
            if start.elapsed() > PATIENCE {
                let page = self.js("return document.body.innerText", json!([])).await;
                panic!(
                    "waited {PATIENCE:?} for {what}; last {v}\npage text:\n{}",
                    page.as_str().unwrap_or("")
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
