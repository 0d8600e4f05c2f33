//! The Cedar authority evaluator end to end (issue 26.1): a real policy file, the Python SDK
//! server and a plain HTTP tool server on sockets, and the binary's `serve`, `validate` and
//! `check`. A policy adds denials that never reach the upstream; it grants nothing.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::http_tools::tool_server;
use crate::support::{config, post, proxy, proxy_url, py_client_with, text_of, Peer};

const DEV: (&str, &str) = ("PORTCULLIS_TEST_CEDAR_DEV", "dev-token-cedar-5d1e9a77c03b4f12");

const POLICY: &str = r#"
@id("no-big-sums")
forbid (principal, action, resource == Portcullis::Tool::"mcp__py__add")
  when { context.args has a && context.args.a > 10 };

@id("short-forecasts")
forbid (principal, action, resource)
  when { context.capability like "http__weather__*" && context.args has days && context.args.days > 7 };

// A permit here grants nothing: the carried set already decided.
permit (principal, action, resource);
"#;

fn policy_file(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(".cedar").tempfile().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

fn yaml(policy: &std::path::Path) -> String {
    std::env::set_var(DEV.0, DEV.1);
    format!(
        "permissions: {{ allow: [\"mcp__*\", \"http__*\"], deny: [mcp__py__echo] }}\n\
         agents:\n  dev: {{ token_env: {} }}\n\
         authority: {{ evaluator: cedar, policy: {policy:?} }}\n",
        DEV.0
    )
}

fn portcullis() -> Command {
    Command::new(env!("CARGO_BIN_EXE_portcullis"))
}

#[tokio::test]
async fn a_call_the_set_allows_but_the_policy_forbids_is_refused_and_never_reaches_the_server() {
    let peer = Peer::python("legacy");
    let f = policy_file(POLICY);
    let p = proxy(&config(&[("py", &peer.url())], &yaml(f.path()))).await;
    let auth = format!("Authorization: Bearer {}", DEV.1);
    let steps = [
        "call",
        "add",
        r#"{"a":1,"b":2}"#,
        "call",
        "add",
        r#"{"a":11,"b":2}"#,
        // A string where the policy compares a number: the policy cannot be evaluated, so denied.
        "call",
        "add",
        r#"{"a":"11","b":2}"#,
        // The rule engine denies echo; the policy's permit does not bring it back.
        "call",
        "echo",
        r#"{"message":"hi"}"#,
    ];
    let got = py_client_with(&proxy_url(&p, "py"), "legacy", &["--header", &auth], &steps).await;
    assert_eq!(text_of(&got[0]), "3", "{got:?}");
    assert_eq!(got[1]["result"]["isError"], true, "{got:?}");
    let why = text_of(&got[1]);
    assert!(why.contains("no-big-sums") && why.contains("forbids"), "{why}");
    assert_eq!(got[2]["result"]["isError"], true, "{got:?}");
    assert!(text_of(&got[2]).contains("cannot be evaluated"), "{}", text_of(&got[2]));
    assert_eq!(got[3]["result"]["isError"], true, "{got:?}");
    let why = text_of(&got[3]);
    assert!(why.contains("mcp__py__echo") && !why.contains("authority"), "{why}");
    assert_eq!(peer.tools_run(), vec!["add".to_owned()], "only the allowed sum reached the server");
    p.shutdown().await;
}

#[tokio::test]
async fn a_plain_http_tools_arguments_are_held_to_the_policy_before_the_request_leaves() {
    let tools = tool_server().await;
    let f = policy_file(POLICY);
    let p = proxy(&config(&[("weather", &tools.url)], &yaml(f.path()))).await;
    let base = format!("http://{}/http/weather", p.addr);
    let bearer = format!("Bearer {}", DEV.1);
    let headers = [("authorization", bearer.as_str())];
    let (status, _, body) = post(&format!("{base}/v1/forecast"), &headers, r#"{"days":3}"#).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = post(&format!("{base}/v1/forecast"), &headers, r#"{"days":30}"#).await;
    assert_ne!(status, 200, "{body}");
    assert!(body.contains("short-forecasts"), "{body}");
    let seen = tools.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "the long forecast never reached the tool: {seen:?}");
    assert!(seen[0].2.contains("\"days\":3"), "{seen:?}");
    p.shutdown().await;
}

#[test]
fn an_invalid_policy_refuses_the_start() {
    let dir = tempfile::tempdir().unwrap();
    for (policy, says) in [
        (Some("forbid (principal, action, resource) when { context.depth > };"), "authority.policy"),
        (None, "authority.policy"),
    ] {
        let file = dir.path().join("p.cedar");
        match policy {
            Some(text) => std::fs::write(&file, text).unwrap(),
            None => {
                let _ = std::fs::remove_file(&file);
            }
        }
        let config = dir.path().join("c.yaml");
        std::fs::write(
            &config,
            format!("listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0 }}\n{}", yaml(&file)),
        )
        .unwrap();
        let out = portcullis().args(["serve", "--config"]).arg(&config).env(DEV.0, DEV.1).output().unwrap();
        assert!(!out.status.success(), "serve started with {policy:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says) && err.contains("p.cedar"), "{err}");
        assert!(!err.contains("binding listeners"), "{err}");
    }
}

#[test]
fn validate_reports_schema_errors_with_the_policy_that_has_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.cedar");
    std::fs::write(
        &file,
        "@id(\"typo\")\nforbid (principal, action, resource) when { context.dept > 1 };\n\
         @id(\"no-such-action\")\nforbid (principal, action == Portcullis::Action::\"delete\", resource);\n",
    )
    .unwrap();
    let config = dir.path().join("c.yaml");
    std::fs::write(&config, yaml(&file)).unwrap();
    let out = portcullis().args(["validate", "--config"]).arg(&config).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    for want in ["authority.policy", "typo", "dept", "no-such-action", "delete"] {
        assert!(err.contains(want), "missing {want}:\n{err}");
    }
    std::fs::write(&file, POLICY).unwrap();
    let out = portcullis().args(["validate", "--config"]).arg(&config).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn check_names_the_policy_that_denied() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.cedar");
    std::fs::write(&file, POLICY).unwrap();
    let config = dir.path().join("c.yaml");
    std::fs::write(&config, yaml(&file)).unwrap();
    let mut child = portcullis()
        .args(["check", "--agent", "dev", "--config"])
        .arg(&config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = concat!(
        "{\"tool\":\"mcp__py__add\",\"args\":{\"a\":1,\"b\":2}}\n",
        "{\"tool\":\"mcp__py__add\",\"args\":{\"a\":12,\"b\":2}}\n",
    );
    child.stdin.take().unwrap().write_all(lines.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let got: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(got[0]["effect"], "allow", "{got:?}");
    assert_eq!(got[1]["effect"], "deny", "{got:?}");
    assert_eq!(got[1]["rule"], "authority: no-big-sums", "{got:?}");
}
