//! A real Prometheus for the end-to-end tests: started on a free port with the repository's
//! alert rules (short `for:` durations), scraping the proxy, queried over its HTTP API.

use super::*;

pub(super) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

// ---------------------------------------------------------------- HTTP

type Client = hyper_util::client::legacy::Client<
    hyper_util::client::legacy::connect::HttpConnector,
    http_body_util::Empty<bytes::Bytes>,
>;

pub(super) fn client() -> Client {
    hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new()).build_http()
}

/// A GET; `Err` when there is no answer at all (nothing listening yet, a reset).
pub(super) async fn get(client: &Client, url: &str) -> Result<(u16, String), String> {
    use http_body_util::BodyExt;
    let uri: http::Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
    let resp = tokio::time::timeout(Duration::from_secs(10), client.get(uri))
        .await
        .map_err(|_| format!("{url}: no answer in 10 s"))?
        .map_err(|e| format!("{url}: {e}"))?;
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await.map_err(|e| format!("{url}: {e}"))?.to_bytes();
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}

/// Percent-encodes a query-string value (everything but RFC 3986's unreserved characters).
pub(super) fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            b => format!("%{b:02X}"),
        })
        .collect()
}

// ---------------------------------------------------------------- Prometheus

/// A Prometheus server on 127.0.0.1 with its config, rules, TSDB and log in a temp dir of its
/// own. Killed (and reaped) on drop, before the dir is removed.
pub(super) struct Prometheus {
    child: tokio::process::Child,
    url: String,
    log: PathBuf,
    client: Client,
    /// Dropped after the child is reaped (`Drop` runs before the fields go).
    dir: Option<tempfile::TempDir>,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        // Reap it before the temp dir goes, so nothing is still writing into it.
        let deadline = Instant::now() + Duration::from_secs(10);
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

pub(super) fn require_prometheus() {
    assert!(
        Path::new(PROMETHEUS).is_file(),
        "{PROMETHEUS} is missing: install Debian's `prometheus` package \
         (apt-get install --no-install-recommends prometheus); .ci/run does"
    );
}

/// A port free on 127.0.0.1 a moment ago (bound to port 0, then released).
pub(super) fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local addr").port()
}

/// `dashboards/alerts.yaml` with every `for: <d>` rewritten to [`SHORT_FOR`], nothing else.
pub(super) fn short_rules() -> String {
    let shipped =
        std::fs::read_to_string(root().join("dashboards/alerts.yaml")).expect("dashboards/alerts.yaml");
    let mut out = String::new();
    for line in shipped.lines() {
        let body = line.trim_start();
        match body.strip_prefix("for: ") {
            Some(d) if !d.trim().is_empty() && !d.contains(' ') => {
                out.push_str(&line[..line.len() - body.len()]);
                out.push_str("for: ");
                out.push_str(SHORT_FOR);
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    // The copy differs from the shipped rules in the `for:` values only.
    let parse = |y: &str| -> Value { serde_saphyr::from_str(y).expect("alert rules are YAML") };
    let (mut want, got) = (parse(&shipped), parse(&out));
    let mut shortened = 0;
    for rule in
        want["groups"].as_array_mut().unwrap().iter_mut().flat_map(|g| g["rules"].as_array_mut().unwrap())
    {
        if let Some(d) = rule.get_mut("for") {
            *d = Value::from(SHORT_FOR);
            shortened += 1;
        }
    }
    assert_eq!(got, want, "the rewritten rules differ from dashboards/alerts.yaml beyond `for:`");
    assert!(shortened >= 6, "the `for:` durations were found: {shortened}");
    let checker_down = got["groups"][0]["rules"].as_array().unwrap().iter().find(|r| r["alert"] == ALERT);
    assert_eq!(checker_down.map(|r| &r["for"]), Some(&Value::from(SHORT_FOR)), "{ALERT} is shortened");
    out
}

impl Prometheus {
    /// Starts Prometheus scraping `target` (job `portcullis`, the runbook's convention) every
    /// second and evaluating the shortened rules every second; returns once `/-/ready` says so.
    pub(super) async fn start(target: SocketAddr) -> Prometheus {
        require_prometheus();
        let dir = tempfile::tempdir().expect("a temp dir");
        let rules = dir.path().join("alerts.yaml");
        std::fs::write(&rules, short_rules()).unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
                 rule_files:\n  - {rules:?}\n\
                 scrape_configs:\n  - job_name: portcullis\n    static_configs:\n      - targets: [\"{target}\"]\n",
                rules = rules.display().to_string(),
            ),
        )
        .unwrap();
        // The port is free when picked, not necessarily when Prometheus binds it: on the rare
        // collision, pick another.
        let mut dir = Some(dir);
        for attempt in 1..=5 {
            let here = dir.as_ref().unwrap().path().to_owned();
            let port = free_port();
            let log = here.join(format!("prometheus-{attempt}.log"));
            let out = std::fs::File::create(&log).unwrap();
            let child = tokio::process::Command::new(PROMETHEUS)
                .arg(format!("--config.file={}", config.display()))
                .arg(format!("--storage.tsdb.path={}", here.join(format!("data-{attempt}")).display()))
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .arg("--web.enable-lifecycle")
                .current_dir(&here)
                .stdin(Stdio::null())
                .stdout(out.try_clone().unwrap())
                .stderr(out)
                .kill_on_drop(true)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {PROMETHEUS}: {e}"));
            let mut prom = Prometheus {
                child,
                url: format!("http://127.0.0.1:{port}"),
                log,
                client: client(),
                dir: dir.take(),
            };
            let deadline = Instant::now() + PATIENCE;
            loop {
                if let Ok(Some(status)) = prom.child.try_wait() {
                    let log = prom.log_text();
                    assert!(
                        log.contains("address already in use") && attempt < 5,
                        "prometheus exited ({status}) before it was ready:\n{log}"
                    );
                    break;
                }
                if matches!(get(&prom.client, &format!("{}/-/ready", prom.url)).await, Ok((200, _))) {
                    return prom;
                }
                assert!(
                    Instant::now() < deadline,
                    "prometheus not ready in {PATIENCE:?}:\n{}",
                    prom.log_text()
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            // Keep the dir for the next attempt; the exited child is reaped by the drop.
            dir = prom.dir.take();
        }
        unreachable!("the last attempt returns or panics")
    }

    pub(super) fn log_text(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// `GET /api/v1/<path>`'s `data`, or what went wrong.
    pub(super) async fn api(&self, path: &str) -> Result<Value, String> {
        let (status, body) = get(&self.client, &format!("{}/api/v1/{path}", self.url)).await?;
        let v: Value = serde_json::from_str(&body).map_err(|e| format!("{path}: {status} {e}: {body}"))?;
        match (status, v["status"].as_str()) {
            (200, Some("success")) => Ok(v["data"].clone()),
            _ => Err(format!("{path}: {status} {body}")),
        }
    }

    /// An instant query's samples as (labels, value).
    pub(super) async fn query(&self, promql: &str) -> Result<Vec<(Value, f64)>, String> {
        let data = self.api(&format!("query?query={}", encode(promql))).await?;
        Ok(data["result"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| {
                let v = s["value"][1].as_str().and_then(|v| v.parse().ok()).unwrap_or(f64::NAN);
                (s["metric"].clone(), v)
            })
            .collect())
    }

    /// The one sample `promql` returns, if it returns exactly one.
    pub(super) async fn value(&self, promql: &str) -> Option<f64> {
        match self.query(promql).await.ok()?.as_slice() {
            [(_, v)] => Some(*v),
            _ => None,
        }
    }

    /// `/api/v1/alerts`: the active (pending or firing) alerts.
    pub(super) async fn alerts(&self) -> Result<Vec<Value>, String> {
        Ok(self.api("alerts").await?["alerts"].as_array().cloned().unwrap_or_default())
    }

    /// The rule `name` as `/api/v1/rules` reports it.
    pub(super) async fn rule(&self, name: &str) -> Result<Value, String> {
        let data = self.api("rules").await?;
        data["groups"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|g| g["rules"].as_array().into_iter().flatten())
            .find(|r| r["name"] == name)
            .cloned()
            .ok_or_else(|| format!("no rule {name} in {data}"))
    }
}
