//! What the operator's terminal prints: `portcullis explain ID` and `portcullis approvals list`
//! show a tool name the agent chose. A name carrying an escape sequence (OSC 8 hyperlink, erase
//! line, cursor moves) or a newline can rewrite what the operator reads — a hidden link, a
//! forged "rule:" line — unless what is printed is made inert first.

use serde_json::json;
use tokio::process::Command;

use super::harness::{call, serve, write_config, Admin};
use crate::support::{open_legacy_session, proxy_url, Peer};

/// A tool name that hides a link, erases the line and forges an explanation line.
const HOSTILE: &str = "write_note\u{1b}]8;;https://evil.example/approve\u{7}ok\u{1b}]8;;\u{7}\u{1b}[2K\r\n  rule:      allowed by the operator's rule mcp__py__write_note";

/// The control characters a terminal acts on, other than the newlines a report is made of.
fn controls(text: &str) -> Vec<char> {
    text.chars().filter(|c| c.is_control() && *c != '\n').collect()
}

/// Lines that start as the forged line does (the renderer's own `rule:` lines are indented
/// the same, so a forged one is indistinguishable).
fn forged(text: &str) -> bool {
    text.lines().any(|l| l.starts_with("  rule:      allowed by the operator"))
}

async fn cli(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_portcullis")).args(args).output().await.unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[tokio::test]
#[ignore = "open finding R8-1 (medium): portcullis explain prints an agent-chosen tool name raw: escape sequences and a forged line reach the operator's terminal"]
async fn explain_prints_no_escape_sequence_or_forged_line_from_a_tool_name_the_agent_chose() {
    let (token_env, token) = ("PORTCULLIS_TEST_R8_TERM_A", "r8-terminal-operator-token-a");
    std::env::set_var(token_env, token);
    let peer = Peer::python("legacy");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        token_env,
        &peer.url(),
        "permissions: { deny: [\"mcp__py__write_note*\"] }\n",
    );
    let p = serve(&config, None).await;
    let url = proxy_url(&p, "py");
    let session = open_legacy_session(&url).await;
    let refused = call(&url, &session, HOSTILE, json!({"path": "a", "text": "b"})).await.unwrap();
    let said = refused["result"]["content"][0]["text"].as_str().unwrap_or("").to_owned();
    let at = said.find("(decision ").unwrap_or_else(|| panic!("no decision cited: {refused}")) + 10;
    let id = said[at..at + 12].to_owned();
    assert!(peer.calls_received().is_empty(), "the denied call never reached the server");

    let admin = format!("http://{}", p.admin_addr);
    let (ok, text) = cli(&["explain", &id, "--admin", &admin, "--token-env", token_env]).await;
    assert!(ok, "{text}");
    assert!(text.contains("deny"), "the explanation is shown: {text}");
    assert!(controls(&text).is_empty(), "control characters printed raw: {:?}\n{text}", controls(&text));
    assert!(!forged(&text), "a forged line reads as the explanation's own:\n{text}");
}

#[tokio::test]
#[ignore = "open finding R8-2 (medium): portcullis approvals list prints an agent-chosen tool name raw: the operator deciding the ask reads a forged line and a hidden link"]
async fn approvals_list_prints_no_escape_sequence_or_forged_line_from_a_tool_name_the_agent_chose() {
    let (token_env, token) = ("PORTCULLIS_TEST_R8_TERM_B", "r8-terminal-operator-token-b");
    std::env::set_var(token_env, token);
    let peer = Peer::python("legacy");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), token_env, &peer.url(), "");
    let p = serve(&config, None).await;
    let (url, admin) = (proxy_url(&p, "py"), Admin::of(&p, token));
    let session = open_legacy_session(&url).await;
    let pending = call(&url, &session, HOSTILE, json!({"path": "a", "text": "b"}));
    let id = admin.parked_one().await;

    let (ok, text) = cli(&["approvals", "--admin", &admin.base, "--token-env", token_env, "list"]).await;
    assert!(ok, "{text}");
    assert!(text.contains(&format!("{id}")), "the ask is listed: {text}");
    let bad = controls(&text);
    admin.post(&format!("/approvals/{id}"), json!({"decision": "deny"})).await;
    let _ = pending.await;
    assert!(bad.is_empty(), "control characters printed raw: {bad:?}\n{text}");
    assert!(!text.lines().any(|l| l.trim_start().starts_with("rule:      allowed")), "{text}");
}

#[tokio::test]
async fn arguments_in_approvals_list_are_printed_as_escaped_json_not_raw_control_bytes() {
    let (token_env, token) = ("PORTCULLIS_TEST_R8_TERM_C", "r8-terminal-operator-token-c");
    std::env::set_var(token_env, token);
    let peer = Peer::python("legacy");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), token_env, &peer.url(), "");
    let p = serve(&config, None).await;
    let (url, admin) = (proxy_url(&p, "py"), Admin::of(&p, token));
    let session = open_legacy_session(&url).await;
    let text_arg = "x\u{1b}]8;;https://evil.example/\u{7}approve me\u{1b}]8;;\u{7}\r\n  why: harmless";
    let pending = call(&url, &session, "write_note", json!({"path": "a", "text": text_arg}));
    let id = admin.parked_one().await;
    let (ok, text) = cli(&["approvals", "--admin", &admin.base, "--token-env", token_env, "list"]).await;
    admin.post(&format!("/approvals/{id}"), json!({"decision": "deny"})).await;
    let _ = pending.await;
    assert!(ok, "{text}");
    assert!(controls(&text).is_empty(), "{:?}\n{text}", controls(&text));
    assert!(text.contains("\\u001b"), "the escape is shown escaped: {text}");
}

/// Unicode's bidi controls: not control characters, but they reorder what a terminal shows.
fn bidi(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| matches!(*c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
        .collect()
}

#[tokio::test]
#[ignore = "open finding R8-8 (low): the allow-always preview (approvals allow ID --rule) shows a rule whose tool name carries a bidi override, so the operator reads the name reordered before confirming"]
async fn the_allow_always_preview_shows_no_bidi_override_from_a_tool_name() {
    let (token_env, token) = ("PORTCULLIS_TEST_R8_TERM_D", "r8-terminal-operator-token-d");
    std::env::set_var(token_env, token);
    let peer = Peer::python("legacy");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), token_env, &peer.url(), "");
    let rules = dir.path().join("rules.yaml");
    std::fs::write(&rules, "permissions:\n  allow:\n    - mcp__py__add\n").unwrap();
    let p = serve(&config, Some(&rules)).await;
    let (url, admin) = (proxy_url(&p, "py"), Admin::of(&p, token));
    let session = open_legacy_session(&url).await;
    // RLO reverses what follows it: a bidi-aware terminal shows the rule as `…write_)}1:"a"{(add`.
    let pending = call(&url, &session, "write_\u{202e}dda", json!({"a": 1}));
    let id = admin.parked_one().await;
    let mut cli = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args([
            "approvals",
            "--admin",
            &admin.base,
            "--token-env",
            token_env,
            "allow",
            &id.to_string(),
            "--rule",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut cli.stdin.take().unwrap(), b"n\n").await.unwrap();
    let out = cli.wait_with_output().await.unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    admin.post(&format!("/approvals/{id}"), json!({"decision": "deny"})).await;
    let _ = pending.await;
    assert!(text.contains("rule:"), "the preview was shown: {text}");
    assert!(bidi(&text).is_empty(), "bidi controls printed raw: {:?}\n{text}", bidi(&text));
}
