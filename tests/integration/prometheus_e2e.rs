//! `PortcullisCheckerDown` end to end, with a real Prometheus server (Debian's `prometheus`
//! package, `/usr/bin/prometheus`) scraping a running proxy's admin listener on loopback and
//! evaluating the shipped `dashboards/alerts.yaml` — expressions exactly as shipped, only the
//! `for:` durations cut to seconds. The proxy judges calls through the fake checker (a real HTTP
//! server on the OpenAI wire); killing it opens the breaker and the alert must reach `firing` in
//! Prometheus's alerts API; bringing it back on the same address (the proxy's config unchanged,
//! as when an operator restores the model server) closes the breaker and the alert must resolve.
//!
//! Nothing here is timed except bounded polling: every wait polls the real thing until it says
//! so or a generous deadline passes, and then fails with what it last saw.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::fake_checker::{FakeChecker, Reply, Request};
use crate::support::{config, post, proxy, proxy_url, rpc_body, Peer};

mod harness;

use harness::*;

const PROMETHEUS: &str = "/usr/bin/prometheus";
/// What every `for:` in the rules becomes: two evaluations at the 1 s interval below.
const SHORT_FOR: &str = "2s";
/// The longest any one bounded wait may take.
const PATIENCE: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(250);
const ALERT: &str = "PortcullisCheckerDown";

/// The state (`pending`, `firing`) of the active `PortcullisCheckerDown` alert, if any.
fn checker_down(alerts: &[Value]) -> Option<&str> {
    alerts.iter().find(|a| a["labels"]["alertname"] == ALERT).and_then(|a| a["state"].as_str())
}

// ---------------------------------------------------------------- the proxy side

/// A legacy-era MCP session over raw requests.
struct Session {
    url: String,
    id: String,
    next: u64,
}

use crate::support::LEGACY;

impl Session {
    async fn open(url: &str) -> Session {
        Session { url: url.to_owned(), id: crate::support::open_legacy_session(url).await, next: 1 }
    }

    /// Calls `echo` with words never sent before (a cached verdict would skip the checker and
    /// its breaker) and checks the call passed: judged safe, or unguarded under the fail-open rule.
    async fn echo(&mut self) {
        static N: AtomicU64 = AtomicU64::new(0);
        self.next += 1;
        let words = format!("prometheus e2e call {}", N.fetch_add(1, Ordering::Relaxed));
        let body = json!({"jsonrpc":"2.0","id":self.next,"method":"tools/call",
            "params":{"name":"echo","arguments":{"message": words}}});
        let headers = [("mcp-session-id", self.id.as_str()), ("mcp-protocol-version", LEGACY)];
        let (status, _, text) = post(&self.url, &headers, body.to_string()).await;
        let msg = rpc_body(&text);
        assert_eq!((status, &msg["result"]["content"][0]["text"]), (200, &Value::from(words)), "{text}");
    }
}

/// The value of the proxy's own sample `series` (exact name and labels), from its registry.
fn sample(p: &portcullis::app::Running, series: &str) -> f64 {
    let text = String::from_utf8(p.metrics.render()).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|v| v.strip_prefix(' ')))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no sample {series} in\n{text}"))
}

const BREAKER: &str = r#"portcullis_breaker_state{checker="openai"}"#;

fn safe(_: &Request) -> (Reply, Option<Duration>) {
    (Reply::Safe, None)
}

/// Where a fake checker listens.
fn address_of(checker: &FakeChecker) -> SocketAddr {
    checker
        .url
        .strip_prefix("http://")
        .and_then(|u| u.strip_suffix("/v1"))
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("a fake checker url: {}", checker.url))
}

/// A fake checker back at `addr`, as when an operator restores the model server. The killed
/// fake's listener goes once its task is dropped, so binding is retried until the port is free.
async fn restart(addr: SocketAddr) -> FakeChecker {
    let deadline = Instant::now() + PATIENCE;
    loop {
        match FakeChecker::start_on(addr, safe).await {
            Ok(c) => return c,
            Err(e) => assert!(Instant::now() < deadline, "cannot listen on {addr} again: {e}"),
        }
        tokio::time::sleep(POLL).await;
    }
}

// ---------------------------------------------------------------- the test

#[tokio::test]
async fn prometheus_e2e_checker_down_fires_when_the_checker_dies_and_resolves_when_it_returns() {
    // The proxy, in front of the real Python SDK server, judging `echo` through the fake checker;
    // fail-open (the default), so calls pass while the checker is down. One failure opens the
    // breaker; a probe goes through a second after that.
    require_prometheus();
    let peer = Peer::python("legacy");
    let checker = FakeChecker::start(safe).await;
    let checker_addr = address_of(&checker);
    let extra = format!(
        "permissions: {{ allow: [\"mcp__*\"] }}\nguardrails:\n  checker: {{ base_url: \"{}\", model: fake-judge, timeout: 2s }}\n  min_content_bytes: 0\n  breaker: {{ failures: 1, cooldown: 1s }}\n  rules: [{{ match: mcp__py__echo, phases: [pre] }}]\n",
        checker.url
    );
    let p = proxy(&config(&[("py", &peer.url())], &extra)).await;
    assert!(p.admin_addr.ip().is_loopback(), "{}", p.admin_addr);
    let mut s = Session::open(&proxy_url(&p, "py")).await;

    let prom = Prometheus::start(p.admin_addr).await;
    let started = Instant::now();

    // 1. Checker up: calls are judged, and Prometheus scrapes the proxy and sees checker_up 1.
    for _ in 0..3 {
        s.echo().await;
    }
    assert_eq!(checker.calls(), 3, "the checker judged every call");
    assert_eq!(sample(&p, "portcullis_checker_up"), 1.0);
    let deadline = Instant::now() + PATIENCE;
    loop {
        let up = prom.value(r#"up{job="portcullis"}"#).await;
        let checker_up = prom.value(r#"portcullis_checker_up{job="portcullis"}"#).await;
        if (up, checker_up) == (Some(1.0), Some(1.0)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus never saw the proxy up with checker_up 1: up {up:?}, checker_up {checker_up:?}\n\
             targets: {:?}\n{}",
            prom.api("targets").await,
            prom.log_text()
        );
        tokio::time::sleep(POLL).await;
    }
    // The rules were loaded as shipped, and evaluated at least once after that scrape: the rule
    // is healthy and inactive, and no PortcullisCheckerDown alert is pending or firing.
    let seen = prom.rule(ALERT).await.unwrap()["lastEvaluation"].clone();
    let deadline = Instant::now() + PATIENCE;
    let rule = loop {
        let rule = prom.rule(ALERT).await.unwrap();
        if rule["lastEvaluation"] != seen {
            break rule;
        }
        assert!(Instant::now() < deadline, "{ALERT} was not evaluated again: {rule}");
        tokio::time::sleep(POLL).await;
    };
    assert_eq!(rule["health"], "ok", "{rule}");
    assert_eq!(rule["query"], "portcullis_checker_up == 0", "the shipped expression: {rule}");
    assert_eq!(rule["state"], "inactive", "{rule}");
    let alerts = prom.alerts().await.unwrap();
    assert_eq!(checker_down(&alerts), None, "no {ALERT} while the checker answers: {alerts:#?}");

    // 2. The checker dies. Calls pass unguarded (fail-open) and the first failure opens the
    // breaker; then no more traffic, so it stays open (a probe is only let through by a call).
    checker.kill();
    let deadline = Instant::now() + PATIENCE;
    while sample(&p, BREAKER) != 1.0 {
        assert!(Instant::now() < deadline, "the breaker did not open on a dead checker");
        s.echo().await;
    }
    assert_eq!(sample(&p, "portcullis_checker_up"), 0.0);
    let deadline = Instant::now() + PATIENCE;
    let mut last: Result<Vec<Value>, String> = Err("not polled yet".to_owned());
    while !matches!(&last, Ok(a) if checker_down(a) == Some("firing")) {
        assert!(
            Instant::now() < deadline,
            "{ALERT} did not reach firing within {PATIENCE:?} of the breaker opening; last /api/v1/alerts: {last:#?}\n\
             checker_up in Prometheus: {:?}\n{}",
            prom.query("portcullis_checker_up").await,
            prom.log_text()
        );
        tokio::time::sleep(POLL).await;
        last = prom.alerts().await;
    }
    let alerts = last.unwrap();
    let firing = alerts.iter().find(|a| a["labels"]["alertname"] == ALERT).unwrap();
    assert_eq!(firing["labels"]["job"], "portcullis", "{firing}");
    assert_eq!(firing["labels"]["instance"], p.admin_addr.to_string(), "{firing}");
    assert_eq!(firing["labels"]["severity"], "critical", "{firing}");
    // The runbook link Prometheus rendered is absolute and resolves on the instance that fired.
    let url = format!("http://{}/runbook#portcullischeckerdown", p.admin_addr);
    assert_eq!(firing["annotations"]["runbook_url"], url.as_str(), "{firing}");
    let (status, _, page) = crate::support::get(&url, &[]).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("<section id=\"portcullischeckerdown\">"), "the anchor is on the page");
    let fired_after = started.elapsed();

    // 3. The checker comes back where it was (the proxy's config untouched, as when an operator
    // restores the model server). The killed fake's listener goes once its task is dropped, so
    // binding is retried until the port is free again.
    drop(checker);
    let checker = restart(checker_addr).await;
    // Calls until the cooldown has passed and a probe closes the breaker.
    let deadline = Instant::now() + PATIENCE;
    while sample(&p, BREAKER) != 0.0 {
        assert!(Instant::now() < deadline, "the breaker did not close with the checker back");
        s.echo().await;
        tokio::time::sleep(POLL).await;
    }
    assert!(checker.calls() >= 1, "the probe reached the restored checker");
    assert_eq!(sample(&p, "portcullis_checker_up"), 1.0);
    // Resolved: no longer active, while Prometheus still scrapes the proxy and reads checker_up 1
    // (a failing scrape would empty the expression too, and prove nothing).
    let deadline = Instant::now() + PATIENCE;
    loop {
        let alerts = prom.alerts().await;
        let up = prom.value(r#"up{job="portcullis"}"#).await;
        let checker_up = prom.value(r#"portcullis_checker_up{job="portcullis"}"#).await;
        if matches!(&alerts, Ok(a) if checker_down(a).is_none()) && (up, checker_up) == (Some(1.0), Some(1.0))
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{ALERT} did not resolve within {PATIENCE:?} of the breaker closing: up {up:?}, \
             checker_up {checker_up:?}; last /api/v1/alerts: {alerts:#?}\n{}",
            prom.log_text()
        );
        tokio::time::sleep(POLL).await;
    }
    eprintln!(
        "prometheus_e2e: {ALERT} fired {fired_after:?} and resolved {:?} after Prometheus was ready",
        started.elapsed()
    );
    drop(prom);
    p.shutdown().await;
}

/// The same alert with no traffic at all: the background probe (issue 15, part 6) is what sees
/// the checker die while the proxy is idle, and come back.
#[tokio::test]
async fn prometheus_e2e_checker_down_fires_for_an_idle_proxy_through_the_probe() {
    require_prometheus();
    let peer = Peer::python("legacy");
    let checker = FakeChecker::start(safe).await;
    let checker_addr = address_of(&checker);
    let extra = format!(
        "permissions: {{ allow: [\"mcp__*\"] }}\nguardrails:\n  checker: {{ base_url: \"{}\", model: fake-judge, timeout: 1s, probe: 200ms }}\n  breaker: {{ failures: 1, cooldown: 1s }}\n  rules: [{{ match: mcp__py__echo, phases: [pre] }}]\n",
        checker.url
    );
    let p = proxy(&config(&[("py", &peer.url())], &extra)).await;
    let prom = Prometheus::start(p.admin_addr).await;
    checker.kill();
    let deadline = Instant::now() + PATIENCE;
    let mut last: Result<Vec<Value>, String> = Err("not polled yet".to_owned());
    while !matches!(&last, Ok(a) if checker_down(a) == Some("firing")) {
        assert!(
            Instant::now() < deadline,
            "{ALERT} did not fire for an idle proxy: {last:#?}\n{}",
            prom.log_text()
        );
        tokio::time::sleep(POLL).await;
        last = prom.alerts().await;
    }
    drop(checker);
    let checker = restart(checker_addr).await;
    let deadline = Instant::now() + PATIENCE;
    loop {
        let alerts = prom.alerts().await;
        let checker_up = prom.value(r#"portcullis_checker_up{job="portcullis"}"#).await;
        if matches!(&alerts, Ok(a) if checker_down(a).is_none()) && checker_up == Some(1.0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{ALERT} did not resolve with no traffic: {alerts:#?}\n{}",
            prom.log_text()
        );
        tokio::time::sleep(POLL).await;
    }
    assert!(checker.calls() >= 1, "the probe reached the restored checker");
    assert_eq!(
        sample(&p, r#"portcullis_checker_requests_total{result="ok"}"#),
        0.0,
        "no call was judged: the probe alone saw it come back"
    );
    assert_eq!(sample(&p, BREAKER), 0.0);
}
