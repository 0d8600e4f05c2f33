//! `portcullis connect` and the `/mcp` alias: what connect writes reaches the proxy, a `--write`
//! keeps what the file held (twice is once, a wrong shape is refused), and the alias is one more
//! spelling of the same route — gated, Host-checked and allowlisted exactly as `/mcp/{upstream}`.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::support::{config, post, proxy, py_client_with, text_of, Peer};

const TOKEN: (&str, &str) = ("PORTCULLIS_TEST_CONNECT_DEV", "connect-dev-token-5e4d3c2b1a09");
const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
const ECHO: &str = r#"{"message":"hi"}"#;
const SUM: &str = r#"{"a":1,"b":2}"#;
const DENY_ECHO: &str = "permissions: { allow: [\"mcp__*\"], deny: [\"mcp__e__echo\"] }\n";

fn agents() -> String {
    std::env::set_var(TOKEN.0, TOKEN.1);
    format!("agents:\n  dev: {{ token_env: {} }}\n", TOKEN.0)
}

#[tokio::test]
async fn a_denied_call_through_the_mcp_alias_never_reaches_the_upstream() {
    let peer = Peer::everything();
    let p = proxy(&config(&[("e", &peer.url())], DENY_ECHO)).await;
    for path in ["/mcp", "/e/mcp"] {
        let url = format!("http://{}{path}", p.addr);
        let out = py_client_with(&url, "legacy", &[], &["call", "get-sum", SUM, "call", "echo", ECHO]).await;
        assert_ne!(out[0]["result"]["isError"], true, "{path}: {out:?}");
        assert_eq!(out[1]["result"]["isError"], true, "{path}: {out:?}");
        assert!(text_of(&out[1]).contains("mcp__e__echo"), "{path}: {out:?}");
    }
    assert_eq!(peer.calls_received(), ["get-sum", "get-sum"], "no echo ever left the proxy");
    p.shutdown().await;
}

#[tokio::test]
async fn the_alias_answers_only_allowed_hosts_and_origins() {
    let peer = Peer::everything();
    let p = proxy(&config(&[("e", &peer.url())], DENY_ECHO)).await;
    for path in ["/mcp", "/e/mcp"] {
        let url = format!("http://{}{path}", p.addr);
        for headers in [&[("host", "evil.example.com")][..], &[("origin", "http://evil.example.com")][..]] {
            let (status, _, body) = post(&url, headers, INIT).await;
            assert_eq!(status, 403, "{path} {headers:?}: {body}");
            assert!(body.contains("allowed_hosts"), "{body}");
        }
    }
    assert!(peer.journal_http().is_empty(), "the upstream saw nothing: {:?}", peer.journal_http());
    p.shutdown().await;
}

#[tokio::test]
async fn a_bare_mcp_with_several_upstreams_is_refused_with_the_routes_to_use() {
    let peer = Peer::everything();
    let p = proxy(&config(&[("e", &peer.url()), ("f", &peer.url())], DENY_ECHO)).await;
    let (status, _, body) = post(&format!("http://{}/mcp", p.addr), &[], INIT).await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("/mcp/e, /mcp/f"), "{body}");
    let (status, _, body) = post(&format!("http://{}/f/mcp", p.addr), &[], INIT).await;
    assert_eq!(status, 200, "{body}");
    assert!(peer.journal_http().len() == 1, "only the named route reached it");
    p.shutdown().await;
}

#[tokio::test]
async fn a_delegated_agent_reaches_no_other_upstream_through_the_alias() {
    let peer = Peer::everything();
    let p =
        proxy(&config(&[("e", &peer.url()), ("other", &peer.url())], &format!("{DENY_ECHO}{}", agents())))
            .await;
    let mint = json!({"name": "kid", "upstreams": ["e"], "ttl": "15m"}).to_string();
    let auth = format!("Bearer {}", TOKEN.1);
    let (status, _, text) =
        post(&format!("http://{}/delegations", p.addr), &[("authorization", &auth)], mint).await;
    assert_eq!(status, 201, "{text}");
    let kid: Value = serde_json::from_str(&text).unwrap();
    let kid = format!("Bearer {}", kid["token"].as_str().unwrap());
    let (status, _, text) =
        post(&format!("http://{}/other/mcp", p.addr), &[("authorization", &kid)], INIT).await;
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("outside the upstreams"), "{text}");
    assert!(peer.journal_http().is_empty(), "nothing reached the upstream");
    let (status, _, _) = post(&format!("http://{}/e/mcp", p.addr), &[("authorization", &kid)], INIT).await;
    assert_eq!(status, 200);
    p.shutdown().await;
}

#[tokio::test]
async fn what_connect_writes_for_claude_code_reaches_the_upstream_with_the_agents_token() {
    let peer = Peer::everything();
    let p = proxy(&config(&[("e", &peer.url())], &format!("{DENY_ECHO}{}", agents()))).await;
    let mut c = config(&[("e", &peer.url())], &agents());
    c.listen = p.addr;
    let opts = portcullis::connect::Options { agent: Some("dev".into()), ..Default::default() };
    let servers = portcullis::connect::plan(&c, &opts).unwrap();
    let doc: Value = serde_json::from_str(
        &portcullis::connect::json::merge(portcullis::connect::Client::ClaudeCode, "", &servers).unwrap(),
    )
    .unwrap();
    let entry = &doc["mcpServers"]["portcullis-e"];
    let header = entry["headers"]["Authorization"].as_str().unwrap();
    assert_eq!(header, format!("Bearer ${{{}}}", TOKEN.0), "a reference, never the secret");
    // What Claude Code does with `${VAR}` when it starts the server.
    let expanded = header.replace(&format!("${{{}}}", TOKEN.0), TOKEN.1);
    let url = entry["url"].as_str().unwrap();
    let out = py_client_with(
        url,
        "legacy",
        &["--header", &format!("Authorization: {expanded}")],
        &["call", "get-sum", SUM],
    )
    .await;
    assert_ne!(out[0]["result"]["isError"], true, "{out:?}");
    assert_eq!(peer.calls_received(), ["get-sum"]);
    let (status, _, _) = post(url, &[], INIT).await;
    assert_eq!(status, 401, "without the token the door stays shut");
    p.shutdown().await;
}

fn connect(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .arg("connect")
        .args(args)
        .current_dir(dir)
        .env(TOKEN.0, TOKEN.1)
        .env("PORTCULLIS_LOG", "warn")
        .output()
        .unwrap()
}

fn config_file(dir: &Path) -> String {
    let path = dir.join("portcullis.yaml");
    let yaml = format!(
        "listen: 127.0.0.1:8686\nupstreams:\n  fs: {{ url: \"http://127.0.0.1:9/mcp\" }}\n  web: {{ url: \"http://127.0.0.1:9/mcp\" }}\nagents:\n  dev: {{ token_env: {} }}\n",
        TOKEN.0
    );
    std::fs::write(&path, yaml).unwrap();
    path.display().to_string()
}

/// Each client's file with someone else's server and key in it.
fn existing(client: &str) -> (&'static str, &'static str) {
    match client {
        "codex" => ("config.toml", "# mine\nmodel = \"o3\"\n\n[mcp_servers.mine]\ncommand = \"x\"\n"),
        "vscode" => ("mcp.json", r#"{"servers": {"mine": {"type": "stdio", "command": "x"}}, "inputs": []}"#),
        _ => ("mcp.json", r#"{"mcpServers": {"mine": {"command": "x"}}, "theme": "dark"}"#),
    }
}

#[test]
fn connect_write_merges_into_every_clients_file_keeping_what_is_there_and_twice_is_once() {
    for client in ["claude-code", "claude-desktop", "cursor", "vscode", "codex", "windsurf"] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config_file(dir.path());
        let (name, before) = existing(client);
        let file = dir.path().join(name);
        std::fs::write(&file, before).unwrap();
        let args = ["--config", &cfg, "--agent", "dev", "--write", "--file", file.to_str().unwrap()];
        let first = connect(dir.path(), &[&[client][..], &args].concat());
        assert!(first.status.success(), "{client}: {}", String::from_utf8_lossy(&first.stderr));
        assert!(String::from_utf8_lossy(&first.stdout).contains("updated"), "{client}");
        let once = std::fs::read_to_string(&file).unwrap();
        let second = connect(dir.path(), &[&[client][..], &args].concat());
        assert!(String::from_utf8_lossy(&second.stdout).contains("unchanged"), "{client}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), once, "{client}: twice is once");
        assert!(!once.contains(TOKEN.1), "{client}: the secret is never written unasked:\n{once}");
        assert!(once.contains(TOKEN.0) || client == "vscode", "{client}: the variable is named:\n{once}");
        let entries = if client == "codex" {
            let doc: toml_edit::DocumentMut = once.parse().unwrap();
            assert!(doc.to_string().starts_with("# mine\nmodel = \"o3\""), "{once}");
            let list = doc["mcp_servers"].as_table().unwrap();
            list.iter().map(|(k, _)| k.to_owned()).collect::<Vec<_>>()
        } else {
            let doc: Value = serde_json::from_str(&once).unwrap();
            let key = if client == "vscode" { "servers" } else { "mcpServers" };
            if client != "vscode" {
                assert_eq!(doc["theme"], "dark", "{client}");
            }
            doc[key].as_object().unwrap().keys().cloned().collect()
        };
        assert_eq!(entries, ["mine", "portcullis-fs", "portcullis-web"], "{client}");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains("portcullis-connect"))
            .collect();
        assert!(leftovers.is_empty(), "{client}: no temporary file is left behind");
    }
}

#[test]
fn connect_refuses_a_file_of_the_wrong_shape_and_leaves_it_as_it_was() {
    for (client, text) in [
        ("cursor", r#"{"mcpServers": ["not", "a", "map"]}"#),
        ("vscode", "// comments are JSONC\n{\"servers\": {}}\n"),
        ("codex", "mcp_servers = \"no\"\n"),
        ("windsurf", "[1]"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config_file(dir.path());
        let file = dir.path().join("target-file");
        std::fs::write(&file, text).unwrap();
        let out = connect(
            dir.path(),
            &[client, "--config", &cfg, "--agent", "dev", "--write", "--file", file.to_str().unwrap()],
        );
        assert!(!out.status.success(), "{client}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("left unchanged"),
            "{client}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text, "{client}: never clobbered");
    }
}

#[test]
fn connect_without_an_agent_when_agents_are_configured_says_which_to_pass() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config_file(dir.path());
    let out = connect(dir.path(), &["cursor", "--config", &cfg]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--agent NAME (one of dev)"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = connect(dir.path(), &["cursor", "--config", &cfg, "--agent", "dev", "--inline-token"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains(TOKEN.1), "asked for, the token is written");
    let file = dir.path().join("new/mcp.json");
    let args = ["cursor", "--config", &cfg, "--agent", "dev", "--inline-token", "--write", "--file"];
    let out = connect(dir.path(), &[&args[..], &[file.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "a new file holding the token is private");
    }
}

/// Claude Code's own CLI (the test peers' `@anthropic-ai/claude-code`, pinned in
/// tests/peers/package.json; its config commands need no login or network) reads the `.mcp.json`
/// connect wrote.
#[test]
fn claude_code_reads_the_mcp_json_connect_wrote() {
    let claude = std::env::var("PORTCULLIS_TEST_CLAUDE")
        .unwrap_or_else(|_| crate::support::node_module(".bin/claude").display().to_string());
    let version = Command::new(&claude).arg("--version").output();
    assert!(
        version.is_ok_and(|v| v.status.success()),
        "no claude CLI at {claude}: run npm ci --prefix tests/peers (scripts/test does)"
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = config_file(dir.path());
    let out = connect(dir.path(), &["claude-code", "--config", &cfg, "--agent", "dev", "--write"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got = Command::new(&claude)
        .args(["mcp", "get", "portcullis-fs"])
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&got.stdout);
    assert!(got.status.success(), "{text}{}", String::from_utf8_lossy(&got.stderr));
    for want in [
        "Type: http",
        "URL: http://127.0.0.1:8686/mcp/fs",
        &format!("Authorization: Bearer ${{{}}}", TOKEN.0),
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
}
