//! The headless ask reviewer end to end (issue 26.2): the proxy in front of the real Python SDK
//! server, with no human to ask, putting floor asks to the fake checker model (a real HTTP server
//! on the Chat Completions wire). Every claim is observed on the far side — the upstream's journal
//! says what ran, the model's request log says what it was asked — and in the metrics.

use std::time::Duration;

use serde_json::json;

use crate::guardrails::{metric, Session};
use crate::support::fake_checker::{FakeChecker, Reply, Request};
use crate::support::{config, proxy, proxy_url, text_of, Peer};

/// The model's answer by a word in the call it is shown.
fn script(r: &Request) -> (Reply, Option<Duration>) {
    let d = r.data();
    match () {
        _ if d.contains("allow-me") => (Reply::Safe, None),
        _ if d.contains("deny-me") => (Reply::Unsafe("it sends data away".into()), None),
        _ if d.contains("prose") => {
            (Reply::Verdict("Sure! {\"safe\": true, \"reason\": \"ok\"}".into()), None)
        }
        _ if d.contains("five-hundred") => {
            (Reply::Status(500, "{\"error\":{\"message\":\"boom\"}}".into()), None)
        }
        // Safe, but after the checker's timeout: a late allow is no allow.
        _ if d.contains("slow") => (Reply::Safe, Some(Duration::from_secs(3))),
        _ => (Reply::Unsafe("unexpected".into()), None),
    }
}

/// No allow rule (so `echo` asks by the floor), an operator's `ask` on `write_note`, a checker
/// model whose only guardrail never fires on these calls, and nobody to ask.
fn reviewed(peer: &Peer, checker: &FakeChecker) -> portcullis::config::Config {
    reviewed_with(peer, checker, "")
}

fn reviewed_with(peer: &Peer, checker: &FakeChecker, extra: &str) -> portcullis::config::Config {
    let yaml = format!(
        "permissions: {{ ask: [\"mcp__py__write_note\"] }}\nguardrails:\n  checker: {{ base_url: \"{}\", model: reviewer, timeout: 1s }}\n  rules: [{{ match: mcp__py__never_called, phases: [post] }}]\n{extra}",
        checker.url
    );
    config(&[("py", &peer.url())], &yaml)
}

fn chats(checker: &FakeChecker) -> usize {
    checker.requests().iter().filter(|r| r.path == "/v1/chat/completions").count()
}

/// Two agents, so two callers can be told apart (anonymous callers on one address are one).
const ONE: &str = "Bearer reviewer-one-6b1f0e9d2c";
const ANOTHER: &str = "Bearer reviewer-another-4a7c3e81";

fn agents() -> &'static str {
    std::env::set_var("PORTCULLIS_TEST_REVIEWER_ONE", &ONE["Bearer ".len()..]);
    std::env::set_var("PORTCULLIS_TEST_REVIEWER_ANOTHER", &ANOTHER["Bearer ".len()..]);
    "agents:\n  one: { token_env: PORTCULLIS_TEST_REVIEWER_ONE }\n  another: { token_env: PORTCULLIS_TEST_REVIEWER_ANOTHER }\n"
}

#[tokio::test]
async fn the_reviewer_allows_one_floor_ask_at_a_time_fails_safe_and_trips_after_three() {
    let peer = Peer::python("legacy");
    let checker = FakeChecker::start(script).await;
    let p = proxy(&reviewed_with(&peer, &checker, agents())).await;
    p.shared.approvals.enable_reviewer();
    let url = proxy_url(&p, "py");
    let mut s = Session::open_as(&url, ONE).await;
    let mut call = async |word: &str| {
        let (_, _, msg) = s.call("echo", json!({ "message": word }), &[("authorization", ONE)]).await;
        msg
    };
    // (word, runs upstream, model asked): the identical allowed call is asked again (never learned).
    let steps = [
        ("allow-me", true, true),
        ("allow-me", true, true),
        ("deny-me", false, true),
        ("prose", false, true),
        ("allow-me", true, true), // resets the streak
        ("five-hundred", false, true),
        ("slow", false, true),
        ("deny-me", false, true), // the third in a row: tripped
        ("allow-me", false, false),
    ];
    let mut asked = 0;
    let mut ran = 0;
    for (i, (word, runs, reviewed)) in steps.into_iter().enumerate() {
        let msg = call(word).await;
        asked += usize::from(reviewed);
        ran += usize::from(runs);
        assert_eq!(chats(&checker), asked, "step {i} ({word}): the model was asked {asked} times");
        assert_eq!(peer.tools_run().len(), ran, "step {i} ({word}): {msg}");
        match runs {
            true => assert_eq!(text_of(&msg), word, "step {i}: {msg}"),
            false => {
                assert_eq!(msg["result"]["isError"], true, "step {i} ({word}): {msg}");
                assert!(text_of(&msg).contains("ask reviewer"), "step {i}: {msg}");
                assert!(
                    !text_of(&msg).contains("sends data away"),
                    "the model's words never reach the agent: {msg}"
                );
            }
        }
    }
    assert!(text_of(&call("allow-me").await).contains("no longer asked here"));
    // The breaker is the session's and the caller's: another session of the same caller is not
    // reviewed (a fresh id buys no fresh streak), another caller is.
    let mut again = Session::open_as(&url, ONE).await;
    let (_, _, msg) = again.call("echo", json!({ "message": "allow-me" }), &[("authorization", ONE)]).await;
    assert!(text_of(&msg).contains("no longer asked here"), "{msg}");
    assert_eq!(chats(&checker), asked, "{msg}");
    let mut other = Session::open_as(&url, ANOTHER).await;
    let (_, _, msg) =
        other.call("echo", json!({ "message": "allow-me" }), &[("authorization", ANOTHER)]).await;
    assert_eq!(text_of(&msg), "allow-me", "{msg}");
    for (outcome, n) in [
        ("allow", 4.0),
        ("deny", 2.0),
        ("malformed", 1.0),
        ("error", 1.0),
        ("timeout", 1.0),
        ("tripped", 3.0),
    ] {
        let line = format!("portcullis_ask_reviewer_total{{outcome=\"{outcome}\"}}");
        assert_eq!(metric(&p, &line), n, "{line}");
    }
}

#[tokio::test]
async fn a_configured_ask_never_reaches_the_reviewer() {
    let peer = Peer::python("legacy");
    let checker = FakeChecker::replying(Reply::Safe).await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let p =
        proxy(&reviewed_with(&peer, &checker, &format!("audit: {{ to: \"{}\" }}\n", log.display()))).await;
    p.shared.approvals.enable_reviewer();
    let mut s = Session::open(&proxy_url(&p, "py")).await;
    let (_, _, msg) = s.call("write_note", json!({ "path": "x", "text": "allow-me" }), &[]).await;
    assert_eq!(msg["result"]["isError"], true, "{msg}");
    assert!(text_of(&msg).contains("headless"), "refused as any headless ask: {msg}");
    assert_eq!(chats(&checker), 0, "the model was never asked");
    assert!(peer.tools_run().is_empty(), "never forwarded");
    // The same model allows a floor ask: the difference is where the ask came from.
    let (_, _, msg) = s.call("echo", json!({ "message": "hi" }), &[]).await;
    assert_eq!(text_of(&msg), "hi", "{msg}");
    assert_eq!(chats(&checker), 1);
    // One audit line names the reviewer, for the echo only.
    let log = &log;
    let reviews: Vec<serde_json::Value> =
        crate::support::eventually("the reviewer's audit line", || async move {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            let lines: Vec<serde_json::Value> =
                text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
            let reviews: Vec<serde_json::Value> =
                lines.into_iter().filter(|l| l["channel"] == "ask_reviewer").collect();
            (!reviews.is_empty()).then_some(reviews)
        })
        .await;
    assert_eq!(reviews.len(), 1, "{reviews:?}");
    assert_eq!(
        (reviews[0]["tool"].as_str(), reviews[0]["outcome"].as_str(), reviews[0]["rule"].as_str()),
        (Some("mcp__py__echo"), Some("allow"), Some("ask_reviewer")),
        "{}",
        reviews[0]
    );
}

#[tokio::test]
async fn a_command_the_shell_parser_could_not_read_is_never_put_to_the_reviewer() {
    // `echo` is a shell tool here. A line that parses (`touch allow-me`, not proven read-only) is
    // a floor ask the reviewer answers; a line that does not parse is refused headless unasked:
    // a model reading the same unparsed text proves nothing about what bash will run.
    let peer = Peer::python("legacy");
    let checker = FakeChecker::start(script).await;
    let p = proxy(&reviewed_with(
        &peer,
        &checker,
        "tools: [{ match: mcp__py__echo, kind: shell, command: /message }]\n",
    ))
    .await;
    p.shared.approvals.enable_reviewer();
    let mut s = Session::open(&proxy_url(&p, "py")).await;
    for line in ["echo allow-me $(", "touch allow-me 'unclosed", "if true; then touch allow-me"] {
        let (_, _, msg) = s.call("echo", json!({ "message": line }), &[]).await;
        assert_eq!(msg["result"]["isError"], true, "{line}: {msg}");
        assert!(text_of(&msg).contains("could not be parsed"), "{line}: {msg}");
        assert_eq!(chats(&checker), 0, "{line}: the model was not asked");
    }
    assert!(peer.tools_run().is_empty(), "nothing unparsed ran");
    let (_, _, msg) = s.call("echo", json!({ "message": "touch allow-me" }), &[]).await;
    assert_eq!(text_of(&msg), "touch allow-me", "a parsed floor ask is reviewed: {msg}");
    assert_eq!(chats(&checker), 1);
}

#[tokio::test]
async fn without_the_flag_a_floor_ask_is_refused_headless_and_the_model_is_not_asked() {
    let peer = Peer::python("legacy");
    let checker = FakeChecker::replying(Reply::Safe).await;
    let p = proxy(&reviewed(&peer, &checker)).await;
    let mut s = Session::open(&proxy_url(&p, "py")).await;
    let (_, _, msg) = s.call("echo", json!({ "message": "hi" }), &[]).await;
    assert_eq!(msg["result"]["isError"], true, "{msg}");
    assert_eq!(chats(&checker), 0);
    assert!(peer.tools_run().is_empty());
}

#[test]
fn serve_with_the_flag_and_no_checker_model_refuses_to_start_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain.yaml");
    std::fs::write(&file, "listen: 127.0.0.1:0\nadmin: { listen: 127.0.0.1:0 }\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["serve", "--ask-reviewer", "--config"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success(), "started without a model");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--ask-reviewer needs a checker model"), "{err}");
}
