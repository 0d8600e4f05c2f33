//! What the operator's terminal prints: `portcullis explain ID` and `portcullis approvals list`
//! show a tool name the agent chose. A name carrying an escape sequence (OSC 8 hyperlink, erase
//! line, cursor moves) or a newline can rewrite what the operator reads — a hidden link, a
//! forged "rule:" line — unless what is printed is made inert first.
//!
//! Fixed twice: such a name is no tool's, so the gate refuses the call as invalid before it is
//! decided, parked or recorded (src/gate/tool_name.rs); and every printer shows agent-chosen
//! text [`portcullis::inert`] — the arguments, a reason, a rule still carry the agent's bytes,
//! so each test also sends its escapes, C1 controls and bidi overrides that way.

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

/// Arguments carrying what a terminal obeys that JSON does not escape: CSI as the one-byte C1
/// control (U+009B), a bidi override, an isolate, a zero-width space, and the forged line.
fn hostile_args() -> serde_json::Value {
    json!({"path": "a", "text": "x\u{9b}2K\u{9b}1A\u{202e}evorppa\u{2066}\u{200b}\r\n  rule:      allowed by the operator"})
}

/// Bidi and zero-width characters printed raw.
fn invisible(text: &str) -> Vec<char> {
    text.chars().filter(|c| portcullis::inert::escaped(*c) && *c != '\n').collect()
}

/// The hostile name is refused as no tool's name: an invalid request naming the character,
/// never decided (no decision cited), never parked, never sent.
async fn the_hostile_name_is_refused(url: &str, session: &str, peer: &Peer, admin: Option<&Admin>) {
    let refused = call(url, session, HOSTILE, json!({"path": "a", "text": "b"})).await.unwrap();
    let message = refused["error"]["message"].as_str().unwrap_or_else(|| panic!("not refused: {refused}"));
    assert!(message.contains("U+001B") && message.contains("tool name"), "{message}");
    assert!(!message.contains('\u{1b}') && !message.contains("decision "), "{message}");
    assert!(peer.calls_received().is_empty(), "the call never reached the server");
    if let Some(admin) = admin {
        let (_, v) = admin.get("/approvals").await;
        assert_eq!(v["pending"].as_array().map(Vec::len), Some(0), "nothing parked: {v}");
    }
}

async fn cli(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_portcullis")).args(args).output().await.unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[tokio::test]
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
    the_hostile_name_is_refused(&url, &session, &peer, None).await;
    // The agent's bytes still reach the record through the arguments.
    let refused = call(&url, &session, "write_note", hostile_args()).await.unwrap();
    let said = refused["result"]["content"][0]["text"].as_str().unwrap_or("").to_owned();
    let at = said.find("(decision ").unwrap_or_else(|| panic!("no decision cited: {refused}")) + 10;
    let id = said[at..at + 12].to_owned();
    assert!(peer.calls_received().is_empty(), "the denied call never reached the server");

    let admin = format!("http://{}", p.admin_addr);
    let (ok, text) = cli(&["explain", &id, "--admin", &admin, "--token-env", token_env]).await;
    assert!(ok, "{text}");
    assert!(text.contains("deny"), "the explanation is shown: {text}");
    assert!(controls(&text).is_empty(), "control characters printed raw: {:?}\n{text}", controls(&text));
    assert!(invisible(&text).is_empty(), "format characters printed raw: {:?}\n{text}", invisible(&text));
    assert!(text.contains("\\u{9b}2K") && text.contains("\\u{202e}evorppa"), "shown escaped:\n{text}");
    assert!(!forged(&text), "a forged line reads as the explanation's own:\n{text}");
}

#[tokio::test]
async fn approvals_list_prints_no_escape_sequence_or_forged_line_from_a_tool_name_the_agent_chose() {
    let (token_env, token) = ("PORTCULLIS_TEST_R8_TERM_B", "r8-terminal-operator-token-b");
    std::env::set_var(token_env, token);
    let peer = Peer::python("legacy");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), token_env, &peer.url(), "");
    let p = serve(&config, None).await;
    let (url, admin) = (proxy_url(&p, "py"), Admin::of(&p, token));
    let session = open_legacy_session(&url).await;
    the_hostile_name_is_refused(&url, &session, &peer, Some(&admin)).await;
    let pending = call(&url, &session, "write_note", hostile_args());
    let id = admin.parked_one().await;

    let (ok, text) = cli(&["approvals", "--admin", &admin.base, "--token-env", token_env, "list"]).await;
    assert!(ok, "{text}");
    assert!(text.contains(&format!("{id}")), "the ask is listed: {text}");
    assert!(text.contains("\\u009b2K") && text.contains("\\u202eevorppa"), "shown escaped, as JSON:\n{text}");
    assert!(invisible(&text).is_empty(), "format characters printed raw: {:?}\n{text}", invisible(&text));
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
    // RLO reverses what follows it: a bidi-aware terminal would show `…write_)}1:"a"{(add`. Such
    // a name is refused; the same override in the arguments reaches the rule, so it is sent there.
    let refused = call(&url, &session, "write_\u{202e}dda", json!({"a": 1})).await.unwrap();
    assert!(refused["error"]["message"].as_str().is_some_and(|m| m.contains("U+202E")), "{refused}");
    let pending = call(&url, &session, "write_note", json!({"a": "\u{202e}ydaer"}));
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
    assert!(text.contains("rule:") && text.contains("\\u{202e}ydaer"), "the preview was shown: {text}");
    assert!(bidi(&text).is_empty(), "bidi controls printed raw: {:?}\n{text}", bidi(&text));
}

/// Over stdio (`portcullis wrap` in front of a server that only journals its stdin), the same
/// names are refused as invalid, and the server never reads them.
#[tokio::test]
async fn over_stdio_a_tool_name_with_a_control_or_format_character_never_reaches_the_server() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let dir = tempfile::tempdir().unwrap();
    let (config, journal) = (dir.path().join("portcullis.yaml"), dir.path().join("stdin.jsonl"));
    std::fs::write(&config, "permissions: { allow: [\"mcp__journal__*\"] }\n").unwrap();
    let script = format!("cat >> '{}'", journal.display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["wrap", "--config", config.to_str().unwrap(), "--name", "journal", "--", "sh", "-c", &script])
        .env("PORTCULLIS_LOG", "warn")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let names = [(1, HOSTILE, "U+001B"), (2, "write_\u{202e}dda", "U+202E"), (3, "a\u{2028}b", "U+2028")];
    for (id, name, code) in names {
        let line = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":{"m":"n4me"}}});
        stdin.write_all(format!("{line}\n").as_bytes()).await.unwrap();
        let answer =
            tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line()).await.unwrap();
        let answer: serde_json::Value = serde_json::from_str(&answer.unwrap().unwrap()).unwrap();
        assert_eq!(
            (answer["id"].as_i64(), answer["error"]["code"].as_i64()),
            (Some(id), Some(-32600)),
            "{answer}"
        );
        assert!(answer["error"]["message"].as_str().is_some_and(|m| m.contains(code)), "{answer}");
    }
    drop(stdin);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait()).await;
    let seen = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(!seen.contains("n4me"), "a call with such a name reached the server's stdin:\n{seen}");
}
