//! An answer put on another call's POST. Both SDK clients route a JSON answer by its `id` (the
//! TypeScript SDK an SSE one too), whatever POST carried it; the Python SDK also takes any
//! response on a request's SSE stream as that request's answer. With a session, the proxy finds
//! the call an answer's id names among the session's watched calls (`gate::post::adopt`);
//! without one (a stateless server, the 2026-07-28 era) it has only the POST's own watch, so an
//! answer under another id is judged as the POST's call (SSE, `adopt_strays`), or not at all
//! (JSON) — and since 9b6ca1e a POST whose own call no rule reads is not held at all.
//!
//! The upstream (tests/peers/hostile_swap.py) answers `vault` and `decoy`, called at once, each on
//! the other's POST; only `vault`'s result carries the secret.

use super::harness::{py_concurrent, ran, step, swap, ts_concurrent, MARKER};
use crate::guardrails::{guarded, unsafe_if};
use crate::support::fake_checker::FakeChecker;
use crate::support::{config, proxy, proxy_url, text_of, ALLOW_ALL};

/// A post rule on `vault` only, judged by a checker that calls the secret unsafe.
const VAULT_RULE: &str = "[{ match: mcp__py__vault, phases: [post], mode: block }]";

/// Words only vault's raw result has (a refusal may quote the checker, which names the marker).
const VAULT_SAYS: &str = "the vault says";

/// Vault's result, as the agent got it, is not what the upstream sent: `raw` is not in it.
fn assert_judged(lines: &[serde_json::Value], raw: &str, kind: &str) {
    let vault = step(lines, "vault");
    assert!(!vault.to_string().contains(raw), "{kind}: vault's result reached the agent unjudged: {vault}");
}

#[tokio::test]
async fn without_a_session_a_json_answer_on_another_calls_post_is_judged_as_the_call_it_names() {
    // Every case is run, and every one that leaks is named.
    let mut leaked = Vec::new();
    for era in ["legacy", "modern"] {
        // A rule on vault: the checker must see vault's result and block it.
        let peer = swap(&["--stateless"]);
        let checker = FakeChecker::start(unsafe_if(MARKER)).await;
        let p = proxy(&guarded(&peer, &checker, "", VAULT_RULE)).await;
        let lines = py_concurrent(&proxy_url(&p, "py"), era, &["vault", "decoy"]).await;
        assert_eq!(ran(&peer).len(), 2, "{era}: both tools ran upstream: {lines:?}");
        if step(&lines, "vault").to_string().contains(VAULT_SAYS) {
            leaked.push(format!("{era}, rule on vault ({} checker calls)", checker.calls()));
        }
        p.shutdown().await;

        // `redact`: every answer is rewritten before anyone reads it.
        let peer = swap(&["--stateless"]);
        let p = proxy(&config(&[("py", &peer.url())], &format!("{ALLOW_ALL}redact: [{MARKER}]\n"))).await;
        let lines = py_concurrent(&proxy_url(&p, "py"), era, &["vault", "decoy"]).await;
        assert_eq!(ran(&peer).len(), 2, "{era}: {lines:?}");
        if step(&lines, "vault").to_string().contains(MARKER) {
            leaked.push(format!("{era}, redact"));
        }
        p.shutdown().await;

        // `secrets:`: a held credential in any result is shown to the agent as its sentinel.
        std::env::set_var("PORTCULLIS_IT_RT10_HELD", MARKER);
        let peer = swap(&["--stateless"]);
        let held = "secrets: [{ name: vault, env: PORTCULLIS_IT_RT10_HELD, to: [\"mcp__py__alone\"] }]\n";
        let p = proxy(&config(&[("py", &peer.url())], &format!("{ALLOW_ALL}{held}"))).await;
        let lines = py_concurrent(&proxy_url(&p, "py"), era, &["vault", "decoy"]).await;
        assert_eq!(ran(&peer).len(), 2, "{era}: {lines:?}");
        if step(&lines, "vault").to_string().contains(MARKER) {
            leaked.push(format!("{era}, secrets"));
        }
        p.shutdown().await;
    }
    assert!(leaked.is_empty(), "vault's result reached the agent unjudged: {leaked:?}");
}

#[tokio::test]
async fn with_a_session_an_answer_on_another_calls_post_is_judged_as_the_call_it_names() {
    // The same swap on a stateful server: the session's watched calls name vault's id.
    let peer = swap(&[]);
    let checker = FakeChecker::start(unsafe_if(MARKER)).await;
    let p = proxy(&guarded(&peer, &checker, "", VAULT_RULE)).await;
    let lines = py_concurrent(&proxy_url(&p, "py"), "legacy", &["vault", "decoy"]).await;
    assert_eq!(ran(&peer).len(), 2, "{lines:?}");
    assert_judged(&lines, VAULT_SAYS, "session, rule on vault");
    assert_eq!(step(&lines, "vault")["result"]["isError"], true, "{lines:?}");
    assert_eq!(text_of(step(&lines, "decoy")), "decoy: nothing here", "{lines:?}");
    p.shutdown().await;

    let peer = swap(&[]);
    let p = proxy(&config(&[("py", &peer.url())], &format!("{ALLOW_ALL}redact: [{MARKER}]\n"))).await;
    let lines = py_concurrent(&proxy_url(&p, "py"), "legacy", &["vault", "decoy"]).await;
    assert_judged(&lines, MARKER, "session, redact");
    assert!(text_of(step(&lines, "vault")).contains("[guardrail: redacted]"), "{lines:?}");
    p.shutdown().await;

    std::env::set_var("PORTCULLIS_IT_RT10_HELD", MARKER);
    let peer = swap(&[]);
    let held = "secrets: [{ name: vault, env: PORTCULLIS_IT_RT10_HELD, to: [\"mcp__py__alone\"] }]\n";
    let p = proxy(&config(&[("py", &peer.url())], &format!("{ALLOW_ALL}{held}"))).await;
    let lines = py_concurrent(&proxy_url(&p, "py"), "legacy", &["vault", "decoy"]).await;
    assert_judged(&lines, MARKER, "session, secrets");
    assert!(text_of(step(&lines, "vault")).contains("portcullis:secret:vault"), "{lines:?}");
    p.shutdown().await;
}

#[tokio::test]
async fn without_a_session_an_sse_answer_the_ts_client_routes_by_id_is_judged_as_the_call_it_names() {
    let peer = swap(&["--stateless", "--sse"]);
    let checker = FakeChecker::start(unsafe_if(MARKER)).await;
    let p = proxy(&guarded(&peer, &checker, "", VAULT_RULE)).await;
    let lines = ts_concurrent(&proxy_url(&p, "py"), &["vault", "decoy"]).await;
    assert_eq!(ran(&peer).len(), 2, "{lines:?}");
    assert_judged(&lines, VAULT_SAYS, "TS client, SSE, rule on vault");
    p.shutdown().await;
}

#[tokio::test]
async fn without_a_session_an_sse_answer_under_another_id_is_still_redacted() {
    // `redact` holds every stream and rewrites whatever call an answer is taken for.
    let peer = swap(&["--stateless", "--sse"]);
    let p = proxy(&config(&[("py", &peer.url())], &format!("{ALLOW_ALL}redact: [{MARKER}]\n"))).await;
    let lines = ts_concurrent(&proxy_url(&p, "py"), &["vault", "decoy"]).await;
    assert_eq!(ran(&peer).len(), 2, "{lines:?}");
    assert_judged(&lines, MARKER, "TS client, SSE, redact");
    assert!(text_of(step(&lines, "vault")).contains("[guardrail: redacted]"), "{lines:?}");
    p.shutdown().await;
}

#[tokio::test]
async fn an_initialize_answer_under_a_stray_id_is_judged_as_the_handshake() {
    let mut leaked = Vec::new();
    for flags in [&["--init-stray"][..], &["--init-stray", "--stateless"][..]] {
        let peer = swap(flags);
        let p = proxy(&config(&[("py", &peer.url())], &format!("{ALLOW_ALL}redact: [{MARKER}]\n"))).await;
        let lines = py_concurrent(&proxy_url(&p, "py"), "legacy", &["alone"]).await;
        let connect = &lines[0];
        assert_eq!(connect["step"], "connect", "{lines:?}");
        assert_eq!(ran(&peer), ["alone"], "the session worked: {lines:?}");
        if connect.to_string().contains(MARKER) {
            leaked.push(format!("{flags:?}: {connect}"));
        }
        p.shutdown().await;
    }
    assert!(leaked.is_empty(), "the server's instructions reached the client unredacted: {leaked:?}");
}

/// Reads vault and decoy at once through a proxy with `flows:` (vault private, `alone` a sink),
/// with the Python SDK client (or, with `--sse`, the TypeScript one), then posts what vault said
/// to the sink; returns whether the sink ran upstream.
async fn post_what_vault_said(flags: &[&str]) -> (bool, String) {
    let peer = swap(flags);
    let extra = format!(
        "{ALLOW_ALL}egress: {{ sinks: [\"mcp__py__alone\"] }}\nflows: {{ private: [\"mcp__py__vault\"] }}\n"
    );
    let p = proxy(&config(&[("py", &peer.url())], &extra)).await;
    let url = proxy_url(&p, "py");
    let lines = match flags.contains(&"--sse") {
        true => ts_concurrent(&url, &["vault", "decoy"]).await,
        false => py_concurrent(&url, "legacy", &["vault", "decoy"]).await,
    };
    let said = text_of(step(&lines, "vault"));
    assert!(said.contains(VAULT_SAYS), "flows rewrites nothing: the agent read the vault: {lines:?}");
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "alone", "arguments": {"body": said}}});
    let (_, _, answer) =
        crate::support::post(&url, &[("mcp-protocol-version", crate::support::LEGACY)], call.to_string())
            .await;
    p.shutdown().await;
    (ran(&peer).contains(&"alone".to_owned()), answer)
}

#[tokio::test]
async fn with_a_session_what_a_private_tool_said_on_another_post_is_recorded_and_refused_at_a_sink() {
    for flags in [&[][..], &["--sse"][..]] {
        let (sent, answer) = post_what_vault_said(flags).await;
        assert!(!sent, "{flags:?}: the vault's text reached the sink: {answer}");
    }
}

#[tokio::test]
async fn without_a_session_what_a_private_tool_said_on_another_post_is_recorded_and_refused_at_a_sink() {
    let (sent, answer) = post_what_vault_said(&["--stateless"]).await;
    assert!(!sent, "the vault's text reached the sink: {answer}");
}

#[tokio::test]
async fn without_a_session_a_private_answer_on_another_sse_stream_is_recorded_and_refused_at_a_sink() {
    let (sent, answer) = post_what_vault_said(&["--stateless", "--sse"]).await;
    assert!(!sent, "the vault's text reached the sink: {answer}");
}
