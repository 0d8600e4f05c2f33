//! The Grafana dashboard (`dashboards/portcullis.json`) and the Prometheus alert rules
//! (`dashboards/alerts.yaml`) against the real thing: a running proxy's `/metrics` must export
//! every metric and label they query (so renaming a metric breaks this test, not a dashboard in
//! production), and the real `promtool` must accept the rules and pass their unit tests.
//!
//! Metric references are found by lexing each PromQL expression: an identifier that is not a
//! function, an aggregation or a keyword is a metric name; labels come from `{label op "value"}`
//! matchers, `by (...)` / `without (...)` (which must exist on every metric the aggregation
//! covers) and `on (...)` / `ignoring (...)` / `group_*(...)`. Label values in matchers must be
//! ones the proxy exports or the label's enum in the crate can produce. `job` and `instance` are
//! added by Prometheus at scrape time and `up` is Prometheus's own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod promql;
mod sources;

use crate::support::fake_checker::{FakeChecker, Reply};
use crate::support::{post, proxy, proxy_url, py_client, py_client_with, text_of, Peer};
use promql::*;
use sources::*;

/// Sample name → label name → the values seen.
type Exported = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

const TARGET_LABELS: [&str; 2] = ["job", "instance"];
const PROMETHEUS_OWN: [&str; 1] = ["up"];
const ALERTS: [&str; 11] = [
    "PortcullisDown",
    "PortcullisCheckerDown",
    "PortcullisUnguardedTraffic",
    "PortcullisBreakerOpen",
    "PortcullisCheckerLatencyHigh",
    "PortcullisBlockRateSpike",
    "PortcullisApprovalsBacklog",
    "PortcullisStateBackendDown",
    "PortcullisToolDefinitionChanged",
    "PortcullisAuditDropping",
    "PortcullisUpstreamFailing",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
}

fn dashboard() -> Value {
    serde_json::from_str(&read("dashboards/portcullis.json")).expect("dashboards/portcullis.json is JSON")
}

fn alerts() -> Value {
    serde_saphyr::from_str(&read("dashboards/alerts.yaml")).expect("dashboards/alerts.yaml is YAML")
}

// ---------------------------------------------------------------- the scrape

/// Parses the Prometheus text exposition format into sample names and their labels.
fn parse_scrape(text: &str) -> Exported {
    let mut out = Exported::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let name_end = line.find(['{', ' ']).unwrap_or(line.len());
        let labels = out.entry(line[..name_end].to_owned()).or_default();
        if !line[name_end..].starts_with('{') {
            continue;
        }
        let mut chars = line[name_end + 1..].chars().peekable();
        loop {
            let name: String = chars.by_ref().take_while(|&c| c != '=').collect();
            let name = name.trim().trim_start_matches(',').trim().to_owned();
            if name.is_empty() || name.starts_with('}') {
                break;
            }
            assert_eq!(chars.next(), Some('"'), "a label value in {line}");
            let mut value = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next()),
                    '"' => break,
                    c => value.push(c),
                }
            }
            labels.entry(name).or_default().insert(value);
            if chars.peek() == Some(&'}') {
                break;
            }
        }
    }
    out
}

/// Label values the crate's enums can produce, by label name: series that exist only once a call
/// took that path (`outcome="blocked"`, `mode="sanitize"`) are not in a short test's scrape.
fn enum_values() -> BTreeMap<&'static str, BTreeSet<&'static str>> {
    use portcullis::approval::{Choice, Resolution};
    use portcullis::checker::{Mode, Phase};
    use portcullis::gate::CallOutcome;
    use portcullis::telemetry::checker_metrics::CheckLabel;
    let mut m = BTreeMap::new();
    m.insert("outcome", CallOutcome::ALL.iter().map(|o| o.as_str()).collect());
    m.insert("mode", Mode::ALL.iter().map(|o| o.as_str()).collect());
    m.insert(
        "verdict",
        [CheckLabel::Safe, CheckLabel::Unsafe, CheckLabel::Failed, CheckLabel::Skipped]
            .iter()
            .map(|v| v.as_str())
            .collect(),
    );
    m.insert("phase", [Phase::Pre, Phase::Post].iter().map(|p| p.as_str()).collect());
    m.insert(
        "decision",
        [
            Resolution::Allowed(Choice::AllowOnce),
            Resolution::Allowed(Choice::AllowSession),
            Resolution::Denied,
            Resolution::Cancelled,
            Resolution::TimedOut,
        ]
        .iter()
        .map(|r| r.as_str())
        .collect(),
    );
    m
}

async fn get(url: &str) -> (u16, String) {
    get_with(url, &[]).await
}

async fn get_with(url: &str, headers: &[(&str, &str)]) -> (u16, String) {
    use http_body_util::BodyExt;
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<http_body_util::Empty<bytes::Bytes>>();
    let mut req = http::Request::get(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = client.request(req.body(http_body_util::Empty::new()).unwrap()).await.unwrap();
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn dashboards_query_only_metrics_and_labels_a_running_proxy_exports() {
    // A proxy with a model checker (the fake, over a real socket) judging every MCP call in
    // advisory mode, in front of the real Python SDK server; one call through it gives the
    // labelled series (tool calls, checks, upstream latency, breaker state) their first sample.
    // `add` is asked about at the operator API, and one ask decided there gives the approval-wait
    // histogram (which has no series until an ask is decided) its first sample.
    let token_env = "PORTCULLIS_TEST_ADMIN_TOKEN_DASHBOARDS";
    // A variable only this test reads (the proxy takes its admin token from the environment).
    std::env::set_var(token_env, "dashboards-operator-token");
    std::env::set_var("PORTCULLIS_TEST_AGENT_DASHBOARDS", "dashboards-agent-token-1f2e3d");
    let peer = Peer::python("legacy");
    let checker = FakeChecker::replying(Reply::Safe).await;
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\nupstreams:\n  py: {{ url: \"{}\" }}\n\
         permissions: {{ allow: [\"mcp__*\"], ask: [mcp__py__add] }}\napprovals: {{ channel: api, timeout: 30s }}\n\
         agents: {{ dash: {{ token_env: PORTCULLIS_TEST_AGENT_DASHBOARDS }} }}\nauth: {{ require: false }}\n\
         guardrails:\n  checker: {{ base_url: \"{}\", model: fake-judge, timeout: 5s }}\n  min_content_bytes: 0\n  rules: [{{ match: \"mcp__*\", phases: [pre, post], mode: advisory, shadow: shell }}]\n",
        peer.url(),
        checker.url
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap_or_else(|e| panic!("{e}"))).await;
    // Before any call: every configured rule's series is there at zero, and so are the build
    // and process series an SRE's stock panels read.
    let (_, first) = get(&format!("http://{}/metrics", p.admin_addr)).await;
    // Each alert's runbook_url resolves on the instance that raised it: the admin listener serves
    // the runbook, without the token (like /metrics), with every alert's section at its anchor.
    let (status, runbook) = get(&format!("http://{}/runbook", p.admin_addr)).await;
    assert_eq!(status, 200, "{runbook}");
    for alert in ALERTS {
        assert!(runbook.contains(&format!("<section id=\"{}\">", anchor(alert))), "no #{alert} on /runbook");
    }
    for series in [
        r#"portcullis_rule_hits_total{effect="ask",rule="mcp__py__add",scope="config"} 0"#,
        r#"portcullis_rule_hits_total{effect="allow",rule="mcp__*",scope="config"} 0"#,
        "portcullis_build_info{version=",
        "\nprocess_resident_memory_bytes ",
        "\nprocess_open_fds ",
    ] {
        assert!(first.contains(series), "{series} before any call:\n{first}");
    }
    let url = proxy_url(&p, "py");
    let out = py_client(&url, "legacy", &["call", "echo", r#"{"message":"dashboards"}"#]).await;
    assert_eq!(text_of(&out[0]), "dashboards", "{}", out[0]);
    assert!(checker.calls() >= 1, "the checker judged the call");
    // An agent's call and a refused credential give the agent metrics their first samples.
    let out = py_client_with(
        &url,
        "legacy",
        &["--header", "Authorization: Bearer dashboards-agent-token-1f2e3d"],
        &["call", "echo", r#"{"message":"as dash"}"#],
    )
    .await;
    assert_eq!(text_of(&out[0]), "as dash", "{}", out[0]);
    let (status, _, _) = post(&url, &[("authorization", "Bearer not-an-agent-token")], "{}").await;
    assert_eq!(status, 401);

    // The ask: parked until an operator allows it once at POST /approvals/{id}.
    let asked =
        tokio::spawn(async move { py_client(&url, "legacy", &["call", "add", r#"{"a":2,"b":3}"#]).await });
    let admin = format!("http://{}", p.admin_addr);
    let bearer = "Bearer dashboards-operator-token";
    let approvals = &format!("{admin}/approvals");
    let id = crate::support::eventually("the add call to be parked for approval", || async move {
        let (status, body) = get_with(approvals, &[("authorization", bearer)]).await;
        assert_eq!(status, 200, "{body}");
        let listed: Value = serde_json::from_str(&body).unwrap();
        listed["pending"].as_array().and_then(|a| a.first()).map(|a| a["id"].clone())
    })
    .await;
    let (status, _, body) = post(
        &format!("{admin}/approvals/{id}"),
        &[("authorization", bearer)],
        r#"{"decision":"allow_once"}"#,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let out = asked.await.unwrap();
    assert_eq!(out[0]["result"]["structuredContent"]["result"], 5, "{}", out[0]);

    // The scrape Prometheus makes: the admin listener's /metrics, no token.
    let (status, text) = get(&format!("http://{}/metrics", p.admin_addr)).await;
    assert_eq!(status, 200, "{text}");
    let exported = parse_scrape(&text);
    // Portcullis's own families, and the process collector's (unprefixed, as every exporter's).
    assert!(
        exported.keys().all(|n| n.starts_with("portcullis_") || n.starts_with("process_")),
        "{:?}",
        exported.keys()
    );
    assert!(
        text.contains(r#"portcullis_rule_hits_total{effect="ask",rule="mcp__py__add",scope="config"} 1"#),
        "the ask counted under the rule that asked:\n{text}"
    );

    let (dash, rules) = (dashboard(), alerts());
    let mut sources = dashboard_sources(&dash);
    let panel_exprs = sources.len();
    sources.extend(alert_sources(&rules));
    assert!(panel_exprs >= 30, "the dashboard's expressions were found: {panel_exprs}");
    assert_eq!(sources.len() - panel_exprs, ALERTS.len(), "one expression per alert");
    let found = problems(&sources, &exported);
    assert!(
        found.is_empty(),
        "the dashboard or the alerts use what the proxy does not export:\n{}\n\nscrape:\n{text}",
        found.join("\n")
    );

    // Every metric the issue's panels and alerts are about is actually queried.
    let queried: BTreeSet<String> =
        sources.iter().flat_map(|s| references(&s.expr).unwrap().0).map(|r| r.metric).collect();
    for m in [
        "portcullis_tool_calls_total",
        "portcullis_checks_total",
        "portcullis_checker_latency_seconds_bucket",
        "portcullis_checker_up",
        "portcullis_breaker_state",
        "portcullis_unguarded_total",
        "portcullis_cache_requests_total",
        "portcullis_prefilter_skips_total",
        "portcullis_approvals_pending",
        "portcullis_approvals_total",
        "portcullis_approval_wait_seconds_bucket",
        "portcullis_proxy_overhead_seconds_bucket",
        "portcullis_rubric_info",
        "portcullis_state_backend_up",
        "up",
    ] {
        assert!(queried.contains(m), "nothing queries {m}");
    }

    // The check can fail. A metric renamed in the proxy...
    let renamed = text.replace("portcullis_breaker_state", "portcullis_checker_breaker_state");
    let found = problems(&sources, &parse_scrape(&renamed));
    assert!(
        found.iter().any(|p| p.contains("metric portcullis_breaker_state is not exported")),
        "{found:#?}"
    );
    assert!(found.iter().any(|p| p.starts_with("alert PortcullisBreakerOpen")), "{found:#?}");
    // ...a label renamed in the proxy...
    let renamed = text.replace("rule=\"", "guardrail=\"");
    let found = problems(&sources, &parse_scrape(&renamed));
    assert!(found.iter().any(|p| p.contains("portcullis_checks_total has no label rule")), "{found:#?}");
    assert!(found.iter().any(|p| p.contains("`sum by (rule)` but portcullis_checks_total")), "{found:#?}");
    assert!(
        found.iter().any(|p| p.contains("label_values of portcullis_checks_total by rule")),
        "{found:#?}"
    );
    // ...or a metric, a grouping label or a label value misspelt in the dashboard or the rules.
    for (from, to, expect) in [
        (
            "portcullis_checker_up",
            "portcullis_checker_alive",
            "metric portcullis_checker_alive is not exported",
        ),
        ("sum by (outcome)", "sum by (result)", "portcullis_tool_calls_total has no label result"),
        ("mode=\\\"advisory\\\"", "mode=\\\"advise\\\"", "no such value \"advise\""),
        ("verdict=~\\\"safe|unsafe\\\"", "verdict=~\\\"safe|unsure\\\"", "no such value \"unsure\""),
        ("decision!=\\\"timeout\\\"", "decision!=\\\"timed_out\\\"", "no such value \"timed_out\""),
    ] {
        let json = read("dashboards/portcullis.json");
        assert!(json.contains(from), "{from} is in the dashboard");
        let d: Value = serde_json::from_str(&json.replace(from, to)).unwrap();
        let found = problems(&dashboard_sources(&d), &exported);
        assert!(found.iter().any(|p| p.contains(expect)), "{from} -> {to}: {found:#?}");
    }
    let yaml = read("dashboards/alerts.yaml")
        .replace("portcullis_unguarded_total", "portcullis_unguarded_calls_total");
    let found = problems(&alert_sources(&serde_saphyr::from_str(&yaml).unwrap()), &exported);
    assert_eq!(
        found,
        ["alert PortcullisUnguardedTraffic: metric portcullis_unguarded_calls_total is not exported"]
    );
}

fn promtool(args: &[&str], dir: &Path) -> String {
    let out = Command::new("promtool").args(args).current_dir(dir).output().unwrap_or_else(|e| {
        panic!(
            "promtool is missing ({e}): install Debian's `prometheus` package \
             (apt-get install --no-install-recommends prometheus); .ci/run does"
        )
    });
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "promtool {args:?} failed:\n{text}");
    text
}

#[test]
fn dashboards_promtool_checks_the_rules_passes_their_tests_and_parses_every_panel_query() {
    let root = root();
    let text = promtool(&["check", "rules", "dashboards/alerts.yaml"], &root);
    assert!(text.contains(&format!("SUCCESS: {} rules found", ALERTS.len())), "{text}");
    let text = promtool(&["test", "rules", "dashboards/alerts.test.yaml"], &root);
    assert!(text.contains("SUCCESS"), "{text}");

    // Every dashboard query, Grafana's variables replaced by sample values, as a recording rule.
    let dir = tempfile::tempdir().unwrap();
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    let sources = dashboard_sources(&dashboard());
    for (i, s) in sources.iter().filter(|s| s.label_values.is_none()).enumerate() {
        let mut e = s.expr.clone();
        for (var, value) in [
            ("$__rate_interval", "5m"),
            ("$__range", "6h"),
            ("$__interval", "1m"),
            ("$job", ".*"),
            ("$instance", ".*"),
            ("$rule", ".*"),
        ] {
            e = e.replace(var, value);
        }
        assert!(!e.contains('$'), "{}: an unknown variable in {e}", s.what);
        rules.push_str(&format!("      - record: dashboard:expr_{i}\n        expr: {}\n", Value::from(e)));
    }
    std::fs::write(dir.path().join("dashboard.yaml"), rules).unwrap();
    promtool(&["check", "rules", "dashboard.yaml"], dir.path());
}

/// GitHub's anchor for a Markdown heading.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn dashboards_every_alert_is_tested_both_ways_and_links_its_runbook_section() {
    let runbook = read("docs/runbook.md");
    let anchors: BTreeSet<String> =
        runbook.lines().filter(|l| l.starts_with('#')).map(|l| anchor(l.trim_start_matches('#'))).collect();
    let rules = alerts();
    let mut names = Vec::new();
    for r in rules["groups"].as_array().unwrap().iter().flat_map(|g| g["rules"].as_array().unwrap()) {
        let name = r["alert"].as_str().expect("alerting rules only").to_owned();
        let url =
            r["annotations"]["runbook_url"].as_str().unwrap_or_else(|| panic!("{name}: no runbook_url"));
        // Absolute: the alerting instance's admin listener serves the runbook at /runbook.
        let (base, after) = url.split_once("/runbook#").unwrap_or_else(|| panic!("{name}: {url}"));
        assert!(
            base.ends_with("http://{{ $labels.instance }}") || base.ends_with("http://{{ . }}"),
            "{name}: {url}"
        );
        let section: String = after.chars().take_while(char::is_ascii_alphanumeric).collect();
        assert_eq!(section, anchor(&name), "{name}: its own section");
        assert!(anchors.contains(&section), "{name}: docs/runbook.md has no section #{section}");
        assert!(r["labels"]["severity"].is_string(), "{name}: a severity");
        names.push(name);
    }
    let names: BTreeSet<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(names, ALERTS.into_iter().collect(), "the alerts the operations issue names");

    let tests: Value = serde_saphyr::from_str(&read("dashboards/alerts.test.yaml")).unwrap();
    let cases: Vec<&Value> = tests["tests"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["alert_rule_test"].as_array().into_iter().flatten())
        .collect();
    for name in ALERTS {
        let of = |firing: bool| {
            cases.iter().filter(|c| c["alertname"] == name).any(|c| {
                let n = c["exp_alerts"].as_array().map_or(0, Vec::len);
                (n > 0) == firing
            })
        };
        assert!(of(true), "{name}: no promtool case where it fires");
        assert!(of(false), "{name}: no promtool case where it does not fire");
    }

    // Importable as-is: the datasource is a variable, and every panel and query uses it.
    let d = dashboard();
    assert!(d["schemaVersion"].as_u64().is_some_and(|v| v >= 36), "{}", d["schemaVersion"]);
    assert_eq!(d["__inputs"][0]["pluginId"], "prometheus");
    let vars = d["templating"]["list"].as_array().unwrap();
    let ds = vars.iter().find(|v| v["name"] == "datasource").expect("a datasource variable");
    assert_eq!((&ds["type"], &ds["query"]), (&Value::from("datasource"), &Value::from("prometheus")));
    let mut ids = BTreeSet::new();
    for p in d["panels"].as_array().unwrap() {
        assert!(ids.insert(p["id"].as_u64().unwrap()), "panel id {} twice", p["id"]);
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{}", p["title"]);
        for t in p["targets"].as_array().into_iter().flatten() {
            assert_eq!(t["datasource"]["uid"], "${datasource}", "{} {}", p["title"], t["refId"]);
        }
    }
    for v in vars.iter().filter(|v| v["type"] == "query") {
        assert_eq!(v["datasource"]["uid"], "${datasource}", "variable {}", v["name"]);
    }
}
