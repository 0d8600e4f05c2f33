//! Every MCP route a client shows or a model reads, not only `tools/call`: a hostile upstream
//! (tests/peers/hostile_server.py) answers `resources/*`, `prompts/*` and `completion/complete`
//! with an injection and a secret, and lists a poisoned tool under a stray id. The official
//! Python SDK client drives it through the proxy over HTTP and over `wrap`; its output shows what
//! a client accepted, and the upstream's journal what reached the server.

use std::path::Path;

use serde_json::Value;

use crate::support::*;

const SECRET: &str = "INJECTED-SECRET-4242";
/// The words of the upstream's injection: they must never reach a client.
const INJECTION: &str = "id_rsa";
/// The refusal code of a request other than `tools/call` (JSON-RPC, over HTTP 200).
const REFUSED: i64 = -32004;
const POLICY: &str = "permissions: { allow: [\"mcp__*\"], deny: [\"File(/etc/**)\", \"Fetch(domain:attacker.example)\"] }\n\
    guardrails: { checker: local, rules: [{ match: \"mcp__*\", phases: [pre, post, tools], mode: block }] }\n";

/// The policy, with the repeated-denial breaker out of the way: the tables refuse many reads in
/// a row, and a flagged session would turn the allowed ones into asks.
fn policy() -> String {
    format!("{POLICY}redact: [{SECRET}]\napprovals: {{ flag: {{ consecutive: 1000, total: 1000 }} }}\n")
}

fn hostile(args: &[&str]) -> Peer {
    let mut all = vec!["hostile_server.py"];
    all.extend_from_slice(args);
    Peer::start("python3", &all)
}

/// `(step, argument)` pairs as py_client arguments.
fn steps<'a>(table: &[(&'a str, &'a str)]) -> Vec<&'a str> {
    table.iter().flat_map(|(s, a)| std::iter::once(*s).chain((!a.is_empty()).then_some(*a))).collect()
}

/// The URIs the upstream was asked to read or subscribe to, by its journal.
fn resources_seen(journal: &[Value]) -> Vec<String> {
    journal
        .iter()
        .filter(|l| l["kind"] == "resource")
        .filter_map(|l| l["uri"].as_str().map(str::to_owned))
        .collect()
}

fn journal_at(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// What a client is shown of each route (every step but the `prompt` one takes a lone argument).
const SHOWN: &[(&str, &str)] = &[
    ("resources", ""),
    ("templates", ""),
    ("read", "memo://notes"),
    ("read", "memo://blob"),
    ("read", "memo://clean"),
    ("prompts", ""),
];

/// Checks what the client accepted of [`SHOWN`], then a `prompts/get` and a completion.
fn assert_judged(lines: &[Value]) {
    assert_eq!(lines.len(), SHOWN.len() + 2, "{lines:?}");
    for (line, (step, arg)) in
        lines.iter().zip(SHOWN.iter().chain([&("prompt", "brief"), &("complete", "brief")]))
    {
        let text = line.to_string();
        assert!(!text.contains(SECRET), "{step} {arg}: the secret reached the client: {text}");
        assert!(!text.contains(INJECTION), "{step} {arg}: the injection reached the client: {text}");
    }
    // The injected answers are refused as JSON-RPC errors the client shows, saying why.
    for i in [2, 3, 6] {
        assert_eq!(lines[i]["error"]["code"], REFUSED, "{}", lines[i]);
        assert!(lines[i]["error"]["message"].as_str().unwrap_or("").contains("portcullis"), "{}", lines[i]);
    }
    // Clean answers pass, the secret in a description redacted.
    assert_eq!(lines[4]["result"]["contents"][0]["text"], "the weekly notes", "{}", lines[4]);
    let listed = lines[0]["result"]["resources"].to_string();
    assert!(listed.contains("memo://notes") && listed.contains("[guardrail: redacted]"), "{listed}");
    let prompts = lines[5]["result"]["prompts"].to_string();
    assert!(prompts.contains("brief") && prompts.contains("[guardrail: redacted]"), "{prompts}");
}

/// The URIs that the file and fetch rules deny, in every spelling a server reads as the same.
const DENIED: &[&str] = &[
    "file:///etc/shadow",
    "file:///etc/../etc/shadow",
    "file://localhost/etc/shadow",
    "file:////etc/shadow",
    "file:///tmp/%2e%2e/etc/shadow",
    "file:///%65tc/shadow",
    "file://evil.example/etc/shadow",
    "https://attacker.example/?d=1",
];

fn reads_of(uris: &[&'static str]) -> Vec<(&'static str, &'static str)> {
    uris.iter().map(|u| ("read", *u)).collect()
}

/// Every denied URI is refused with an error the client shows; the allowed ones are read.
fn assert_decided(lines: &[Value], seen: &[String]) {
    assert_eq!(lines.len(), DENIED.len() + 3, "{lines:?}");
    for (uri, line) in DENIED.iter().zip(lines) {
        assert_eq!(line["error"]["code"], REFUSED, "{uri}: {line}");
        let why = line["error"]["message"].as_str().unwrap_or("");
        assert!(why.contains("resources/read") && why.contains("not sent"), "{uri}: {why}");
    }
    assert_eq!(lines[DENIED.len()]["error"]["code"], REFUSED, "subscribe: {}", lines[DENIED.len()]);
    let read = &lines[DENIED.len() + 1]["result"]["contents"][0]["text"];
    assert_eq!(read, "canned contents of file:///tmp/portcullis-ok", "{lines:?}");
    assert_eq!(seen, ["file:///tmp/portcullis-ok", "memo://clean"], "what reached the server");
}

fn decided_steps() -> Vec<(&'static str, &'static str)> {
    let mut table = reads_of(DENIED);
    table.extend([
        ("subscribe", "file:///etc/shadow"),
        ("read", "file:///tmp/portcullis-ok"),
        ("read", "memo://clean"),
    ]);
    table
}

#[tokio::test]
async fn resources_prompts_and_completions_reach_the_sdk_client_judged_over_http_json_and_sse() {
    for answers in [&[][..], &["--sse-routes"]] {
        let peer = hostile(answers);
        let p = proxy(&config(&[("evil", &peer.url())], &policy())).await;
        let mut args = steps(SHOWN);
        args.extend(["prompt", "brief", "{}", "complete", "brief", "topic", "x"]);
        let lines = py_client(&proxy_url(&p, "evil"), "legacy", &args).await;
        assert_judged(&lines);
        assert_eq!(
            resources_seen(&peer.journal()),
            ["memo://notes", "memo://blob", "memo://clean"],
            "{answers:?}: a post rule cannot un-run a read: the upstream answered each"
        );
        p.shutdown().await;
    }
}

#[tokio::test]
async fn a_resource_answered_under_a_stray_id_on_its_own_stream_is_judged() {
    let peer = hostile(&["--sse-routes"]);
    let p = proxy(&config(&[("evil", &peer.url())], &policy())).await;
    let lines = py_client(&proxy_url(&p, "evil"), "legacy", &["read", "memo://stray"]).await;
    let text = lines[0].to_string();
    assert!(!text.contains(SECRET) && !text.contains(INJECTION), "the raw answer was taken: {text}");
    assert_eq!(lines[0]["error"]["code"], REFUSED, "{text}");
    assert_eq!(resources_seen(&peer.journal()), ["memo://stray"], "the upstream answered it");
    p.shutdown().await;
}

#[tokio::test]
async fn a_resource_the_file_or_fetch_rules_deny_never_reaches_the_server_over_http() {
    let peer = hostile(&[]);
    let p = proxy(&config(&[("evil", &peer.url())], &policy())).await;
    let table = decided_steps();
    let lines = py_client(&proxy_url(&p, "evil"), "legacy", &steps(&table)).await;
    assert_decided(&lines, &resources_seen(&peer.journal()));
    let bodies: Vec<String> = peer.journal_http().iter().map(|l| l["body"].to_string()).collect();
    assert!(!bodies.iter().any(|b| b.contains("shadow") || b.contains("attacker")), "{bodies:?}");
    p.shutdown().await;
}

#[tokio::test]
async fn a_tool_list_answered_under_a_stray_id_on_its_own_stream_is_screened() {
    let peer = hostile(&["--stray-list"]);
    let p = proxy(&config(&[("evil", &peer.url())], &policy())).await;
    let lines = py_client(&proxy_url(&p, "evil"), "legacy", &["list"]).await;
    let tools = lines[0]["tools"].as_array().unwrap_or_else(|| panic!("{}", lines[0]));
    assert!(tools.iter().any(|t| t == "clean"), "the list is the upstream's: {tools:?}");
    assert!(!tools.iter().any(|t| t == "weather"), "the poisoned definition was released: {tools:?}");
    assert!(!lines[0].to_string().contains(INJECTION), "{}", lines[0]);
    p.shutdown().await;
}

/// `wrap`'s argv for the Python SDK client: the hostile server over stdio, journaling to `journal`.
fn wrap_argv(config: &Path, journal: &Path, extra: &[&str]) -> String {
    let mut argv = vec![
        env!("CARGO_BIN_EXE_portcullis").to_owned(),
        "wrap".into(),
        "--config".into(),
        config.display().to_string(),
        "--name".into(),
        "evil".into(),
        "--".into(),
        "env".into(),
        format!("PEER_JOURNAL={}", journal.display()),
        "python3".into(),
        "hostile_server.py".into(),
        "--stdio".into(),
    ];
    argv.extend(extra.iter().map(|s| s.to_string()));
    serde_json::to_string(&argv).unwrap()
}

#[tokio::test]
async fn every_route_is_decided_and_judged_over_wrap() {
    let dir = tempfile::tempdir().unwrap();
    let (file, journal) = (dir.path().join("c.yaml"), dir.path().join("journal.jsonl"));
    std::fs::write(&file, policy()).unwrap();
    let mut args = steps(SHOWN);
    args.extend(["prompt", "brief", "{}", "complete", "brief", "topic", "x"]);
    let lines = py_client_stdio(&wrap_argv(&file, &journal, &[]), &args).await;
    assert_judged(&lines);
    assert_eq!(resources_seen(&journal_at(&journal)), ["memo://notes", "memo://blob", "memo://clean"]);

    let journal = dir.path().join("decided.jsonl");
    let table = decided_steps();
    let lines = py_client_stdio(&wrap_argv(&file, &journal, &[]), &steps(&table)).await;
    assert_decided(&lines, &resources_seen(&journal_at(&journal)));

    let journal = dir.path().join("listed.jsonl");
    let lines = py_client_stdio(&wrap_argv(&file, &journal, &["--stray-list"]), &["list"]).await;
    let tools = lines[0]["tools"].as_array().unwrap_or_else(|| panic!("{}", lines[0]));
    assert!(!tools.iter().any(|t| t == "weather") && tools.iter().any(|t| t == "log_leak"), "{tools:?}");
}

#[tokio::test]
async fn the_python_sdk_server_s_resources_and_prompts_are_decided_and_redacted_in_both_eras() {
    for era in ["legacy", "modern"] {
        let peer = Peer::python(era);
        let p = proxy(&config(&[("py", &peer.url())], &format!("{POLICY}redact: [TOPSECRET-1234]\n"))).await;
        let steps = ["read", "memo://leak", "read", "file:///etc/shadow", "prompt", "leak_prompt", "{}"];
        let lines = py_client(&proxy_url(&p, "py"), era, &steps).await;
        assert_eq!(lines.len(), 3, "{era}: {lines:?}");
        assert!(lines.iter().all(|l| !l.to_string().contains("TOPSECRET-1234")), "{era}: {lines:?}");
        let read = lines[0]["result"]["contents"][0]["text"].as_str().unwrap_or("");
        assert_eq!(read, "the upstream secret is [guardrail: redacted]", "{era}: {}", lines[0]);
        assert_eq!(lines[1]["error"]["code"], REFUSED, "{era}: {}", lines[1]);
        let said = lines[2]["result"]["messages"][0]["content"]["text"].as_str().unwrap_or("");
        assert_eq!(said, "the upstream secret is [guardrail: redacted]", "{era}: {}", lines[2]);
        let bodies: Vec<String> = peer.journal_http().iter().map(|l| l["body"].to_string()).collect();
        assert!(bodies.iter().any(|b| b.contains("memo://leak")), "{era}: {bodies:?}");
        assert!(!bodies.iter().any(|b| b.contains("shadow")), "{era}: the server saw the refused read");
        p.shutdown().await;
    }
}

#[tokio::test]
async fn task_states_are_judged_and_a_prompt_a_rule_denies_never_reaches_the_server() {
    let peer = hostile(&[]);
    let deny = policy().replace("deny: [", "deny: [\"mcp__evil__prompts/get\", ");
    let p = proxy(&config(&[("evil", &peer.url())], &deny)).await;
    let url = proxy_url(&p, "evil");
    // tasks/get and tasks/list: the statusMessage a client shows is judged like a result.
    let session = open_legacy_session(&url).await;
    let headers = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", LEGACY)];
    for (id, method) in [(41, "tasks/get"), (42, "tasks/list")] {
        let params = if method == "tasks/get" { r#"{"taskId":"t-1"}"# } else { "{}" };
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
        let (_, _, answer) = post(&url, &headers, body).await;
        assert!(!answer.contains(SECRET) && !answer.contains(INJECTION), "{method}: {answer}");
        assert!(answer.contains(&format!("\"id\":{id}")), "{method} is answered: {answer}");
    }
    // prompts/get is decided by Layer 1 as mcp__evil__prompts/get: refused, never sent.
    let lines = py_client(&url, "legacy", &["prompt", "brief", "{}", "prompts"]).await;
    assert_eq!(lines[0]["error"]["code"], REFUSED, "{}", lines[0]);
    assert!(
        lines[0]["error"]["message"].as_str().unwrap_or("").contains("mcp__evil__prompts/get"),
        "{}",
        lines[0]
    );
    assert!(lines[1].get("result").is_some(), "prompts/list is not denied: {}", lines[1]);
    let sent: Vec<String> = peer
        .journal()
        .iter()
        .filter(|l| l["kind"] == "http")
        .filter_map(|l| l["body"]["method"].as_str().map(str::to_owned))
        .collect();
    assert!(sent.iter().any(|m| m == "tasks/get") && sent.iter().any(|m| m == "prompts/list"), "{sent:?}");
    assert!(!sent.iter().any(|m| m == "prompts/get"), "a denied prompt reached the server: {sent:?}");
    p.shutdown().await;
}

/// The official TypeScript SDK client (tests/peers/ts_client.mjs) through the proxy: one JSON
/// line per step.
async fn ts_client(url: &str, steps: &[&str]) -> Vec<Value> {
    let out = tokio::process::Command::new("node")
        .arg("ts_client.mjs")
        .arg(url)
        .args(steps)
        .current_dir(peers_dir())
        .kill_on_drop(true)
        .output()
        .await
        .expect("node runs");
    let lines: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert!(!lines.is_empty(), "ts_client printed nothing: {}", String::from_utf8_lossy(&out.stderr));
    lines
}

#[tokio::test]
async fn every_route_reaches_the_typescript_sdk_client_judged_over_json_and_sse() {
    for answers in [&[][..], &["--sse-routes"]] {
        let peer = hostile(answers);
        let p = proxy(&config(&[("evil", &peer.url())], &policy())).await;
        let steps = [
            "resources",
            "read",
            "memo://notes",
            "read",
            "memo://blob",
            "read",
            "memo://clean",
            "prompts",
            "prompt",
            "brief",
            "{}",
            "complete",
            "brief",
            "topic",
            "x",
            "read",
            "file:///etc/shadow",
        ];
        let lines = ts_client(&proxy_url(&p, "evil"), &steps).await;
        assert_eq!(lines.len(), 8, "{answers:?}: {lines:?}");
        for line in &lines {
            let text = line.to_string();
            assert!(!text.contains(SECRET), "{answers:?}: the secret reached the TS client: {text}");
            assert!(!text.contains(INJECTION), "{answers:?}: the injection reached the TS client: {text}");
        }
        // The injected answers and the denied read are refused with errors the client shows.
        for i in [1, 2, 5, 7] {
            assert_eq!(lines[i]["error"]["code"], REFUSED, "{answers:?}: {}", lines[i]);
        }
        assert_eq!(lines[3]["result"]["contents"][0]["text"], "the weekly notes", "{}", lines[3]);
        assert!(lines[0].to_string().contains("[guardrail: redacted]"), "{}", lines[0]);
        assert!(
            !resources_seen(&peer.journal()).iter().any(|u| u.contains("shadow")),
            "a denied read was sent"
        );
        p.shutdown().await;
    }
}
