//! Streamable HTTP through the proxy, both protocol eras, with the Python SDK client and real
//! servers (the Python SDK server, server-everything).

use crate::support::*;

const POLICY: &str =
    "permissions:\n  allow: [\"mcp__*\"]\n  deny: [mcp__py__write_note, mcp__everything__get-env]\nredact: [TOPSECRET-1234]\n";

#[tokio::test]
async fn denied_call_never_reaches_upstream_in_either_era() {
    for era in ["modern", "legacy"] {
        let peer = Peer::python(era);
        let p = proxy(&config(&[("py", &peer.url())], POLICY)).await;
        let out = py_client(
            &proxy_url(&p, "py"),
            era,
            &[
                "list",
                "call",
                "write_note",
                r#"{"path":"a.txt","text":"x"}"#,
                "call",
                "echo",
                r#"{"message":"hi"}"#,
            ],
        )
        .await;
        let denied = &out[1];
        assert_eq!(denied["result"]["isError"], true, "{era}: {denied}");
        assert!(
            text_of(denied).contains("mcp__py__write_note"),
            "{era}: the reason names the tool: {denied}"
        );
        assert_eq!(text_of(&out[2]), "hi", "{era}: an allowed call still works: {}", out[2]);
        // Observed on the upstream side: it ran echo and never saw write_note at all.
        assert_eq!(peer.tools_run(), ["echo"], "{era}");
        assert!(
            !peer.calls_received().iter().any(|n| n == "write_note"),
            "{era}: {:?}",
            peer.calls_received()
        );
        assert!(peer.calls_received().iter().any(|n| n == "echo"));
        let metrics = String::from_utf8(p.metrics.render()).unwrap();
        assert!(
            metrics.contains(r#"outcome="denied",tool="mcp__py__write_note",upstream="py"} 1"#),
            "{metrics}"
        );
    }
}

#[tokio::test]
async fn result_rewrite_replaces_every_copy_in_content_and_structured_content() {
    for era in ["modern", "legacy"] {
        let peer = Peer::python(era);
        let p = proxy(&config(&[("py", &peer.url())], POLICY)).await;
        let out = py_client(&proxy_url(&p, "py"), era, &["list", "call", "leak", "{}"]).await;
        let result = &out[1]["result"];
        let text = result.to_string();
        assert!(!text.contains("TOPSECRET-1234"), "{era}: {text}");
        assert!(text.contains("[guardrail: redacted]"), "{era}: {text}");
        assert!(
            result["structuredContent"]["token"].as_str().unwrap().contains("[guardrail: redacted]"),
            "{era}: {text}"
        );
        assert_eq!(peer.tools_run(), ["leak"], "the tool did run: a post-call rewrite cannot un-run it");
    }
}

#[tokio::test]
async fn progress_notifications_flow_while_the_result_is_held() {
    for era in ["modern", "legacy"] {
        let peer = Peer::python(era);
        let p = proxy(&config(&[("py", &peer.url())], POLICY)).await;
        let out =
            py_client(&proxy_url(&p, "py"), era, &["list", "call-progress", "slow", r#"{"steps":3}"#]).await;
        let step = &out[1];
        assert_eq!(text_of(step), "done", "{era}: {step}");
        let progress: Vec<f64> =
            step["progress"].as_array().unwrap().iter().filter_map(|p| p["progress"].as_f64()).collect();
        assert_eq!(progress, [1.0, 2.0, 3.0], "{era}: {step}");
    }
}

#[tokio::test]
async fn modern_header_body_mismatch_is_refused_before_the_upstream() {
    let peer = Peer::python("modern");
    let p = proxy(&config(&[("py", &peer.url())], POLICY)).await;
    let body = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_note","arguments":{"path":"x","text":"y"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let smuggle =
        [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "echo")];
    let (status, _, text) = post(&proxy_url(&p, "py"), &smuggle, body).await;
    assert_eq!(status, 400, "{text}");
    let v = rpc_body(&text);
    assert_eq!(v["error"]["code"], -32020, "{text}");
    assert_eq!(v["id"], 7);
    let wrong_method =
        [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list"), ("mcp-name", "write_note")];
    let (status, _, _) = post(&proxy_url(&p, "py"), &wrong_method, body).await;
    assert_eq!(status, 400);
    assert!(peer.journal().is_empty(), "nothing reached the upstream: {:?}", peer.journal());
}

#[tokio::test]
async fn batch_arrays_are_refused_and_never_executed_upstream() {
    let peer = Peer::python("legacy");
    let p = proxy(&config(&[("py", &peer.url())], POLICY)).await;
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"a"}}},
                    {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_note","arguments":{}}}]"#;
    let (status, _, text) =
        post(&proxy_url(&p, "py"), &[("mcp-protocol-version", "2025-06-18")], batch).await;
    assert_eq!(status, 400, "{text}");
    assert_eq!(rpc_body(&text)["error"]["code"], -32600, "{text}");
    assert!(peer.journal().is_empty(), "{:?}", peer.journal());
}

#[tokio::test]
async fn server_everything_works_through_the_proxy_and_sees_its_own_host_and_no_origin() {
    let peer = Peer::everything();
    // The agent's origin must be allowed (DNS-rebinding protection) to be served at all.
    let allowed = format!("{POLICY}allowed_hosts: [127.0.0.1, localhost, agent.example]\n");
    let p = proxy(&config(&[("everything", &peer.url())], &allowed)).await;
    let out = py_client_with(
        &proxy_url(&p, "everything"),
        "legacy",
        &["--header", "Origin:https://agent.example"],
        &["list", "call", "echo", r#"{"message":"through the gate"}"#, "call", "get-env", "{}"],
    )
    .await;
    assert!(out[0]["tools"].as_array().is_some_and(|t| t.len() > 5), "{}", out[0]);
    assert_eq!(text_of(&out[1]), "Echo: through the gate", "{}", out[1]);
    assert_eq!(out[2]["result"]["isError"], true, "{}", out[2]);
    let received = peer.calls_received();
    assert_eq!(received, ["echo"], "get-env (which would dump the server's environment) never arrived");
    let http = peer.journal_http();
    assert!(http.iter().any(|l| l["method"] == "GET"), "the client's GET stream passed through");
    for l in &http {
        assert_eq!(l["headers"]["host"], format!("127.0.0.1:{}", peer.port), "{l}");
        assert!(l["headers"].get("origin").is_none(), "the agent's Origin was not forwarded: {l}");
    }
}

#[tokio::test]
async fn a_killed_upstream_yields_a_clear_jsonrpc_error_not_a_dropped_connection() {
    let mut peer = Peer::python("legacy");
    let p = proxy(&config(&[("py", &peer.url())], ALLOW_ALL)).await;
    peer.kill();
    let body =
        r#"{"jsonrpc":"2.0","id":"call-9","method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
    let (status, _, text) = post(&proxy_url(&p, "py"), &[], body).await;
    assert_eq!(status, 200, "{text}");
    let v = rpc_body(&text);
    assert_eq!(v["id"], "call-9");
    assert_eq!(v["error"]["code"], -32001);
    assert!(v["error"]["message"].as_str().unwrap().contains("upstream py is unreachable"), "{text}");
    let metrics = String::from_utf8(p.metrics.render()).unwrap();
    assert!(
        metrics.contains(r#"portcullis_upstream_errors_total{kind="connect",upstream="py"} 1"#),
        "counted by kind: {metrics}"
    );
}

#[tokio::test]
async fn an_oversized_body_is_refused_with_nothing_forwarded() {
    let peer = Peer::python("legacy");
    let p =
        proxy(&config(&[("py", &peer.url())], &format!("{ALLOW_ALL}limits: {{ max_body: 1KiB }}\n"))).await;
    let big = "x".repeat(4096);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{big}"}}}}}}"#
    );
    let (status, _, text) = post(&proxy_url(&p, "py"), &[], body).await;
    assert_eq!(status, 413, "{text}");
    assert_eq!(rpc_body(&text)["error"]["code"], -32600);
    assert!(peer.journal().is_empty(), "{:?}", peer.journal());
}

#[tokio::test]
async fn malformed_jsonrpc_gets_a_clear_error_and_is_not_forwarded() {
    let peer = Peer::python("legacy");
    let p = proxy(&config(&[("py", &peer.url())], POLICY)).await;
    let cases = [
        ("{not json", -32700),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"write_note"}}"#,
            -32600,
        ),
        (r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"write_note"}}"#, -32600),
        ("[]", -32600),
    ];
    for (body, code) in cases {
        let (status, _, text) = post(&proxy_url(&p, "py"), &[], body).await;
        assert_eq!(status, 400, "{body}: {text}");
        assert_eq!(rpc_body(&text)["error"]["code"], code, "{body}: {text}");
    }
    assert!(peer.journal().is_empty(), "{:?}", peer.journal());
}
