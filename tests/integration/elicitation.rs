//! Approvals through MCP elicitation, legacy eras: the real Python SDK client declares the
//! capability and its elicitation callback plays the user; the real Python SDK server (or
//! server-everything through `wrap`) is the upstream, and its journal shows what reached it.

use serde_json::{json, Value};

use crate::support::{config, proxy, proxy_url, py_client_stdio_with, py_client_with, text_of, Peer};

fn note(text: &str) -> String {
    json!({"path": "a", "text": text}).to_string()
}

/// Every body the upstream received over HTTP, as text.
fn bodies(peer: &Peer) -> String {
    peer.journal_http().iter().map(|l| l["body"].to_string()).collect::<Vec<_>>().join("\n")
}

#[tokio::test]
async fn the_agents_user_decides_through_elicitation_in_both_legacy_eras() {
    for protocol in ["2025-06-18", "2025-11-25"] {
        let peer = Peer::python("legacy");
        // No admin token: the only human who can be asked is the client's user.
        let p = proxy(&config(&[("py", &peer.url())], "approvals: { channel: auto, timeout: 30s }\n")).await;
        let url = proxy_url(&p, "py");
        let (n1, n2, n3, n4, n5) = (note("one"), note("two"), note("three"), note("four"), note("five"));
        let steps = [
            "call",
            "write_note",
            &n1, // allow once
            "call",
            "write_note",
            &n2, // allow for the session
            "call",
            "write_note",
            &n2, // the waiver answers: nobody is asked
            "call",
            "write_note",
            &n3, // deny
            "call",
            "write_note",
            &n4, // decline
            "call",
            "write_note",
            &n5, // cancel
        ];
        let out = py_client_with(
            &url,
            "legacy",
            &["--protocol", protocol, "--elicit", "allow_once,allow_session,deny,decline,cancel"],
            &steps,
        )
        .await;
        assert_eq!(out.len(), 6, "{protocol}: {out:?}");
        let asked = |i: usize| out[i]["elicitations"].as_array().map_or(0, Vec::len);
        assert_eq!(
            (0..6).map(asked).collect::<Vec<_>>(),
            [1, 1, 0, 1, 1, 1],
            "{protocol}: the waived call is not asked"
        );
        let form = &out[0]["elicitations"][0];
        assert_eq!(form["choices"], json!(["allow_once", "allow_session", "deny"]), "{protocol}");
        let message = form["message"].as_str().unwrap();
        assert!(message.contains("mcp__py__write_note") && message.contains(r#""text":"one""#), "{message}");
        assert_eq!(text_of(&out[0]), "wrote 3 bytes to a", "{protocol}: {}", out[0]);
        assert_eq!(text_of(&out[1]), "wrote 3 bytes to a", "{protocol}");
        assert_eq!(text_of(&out[2]), "wrote 3 bytes to a", "{protocol}");
        for (i, says) in [(3, "The user denied it"), (4, "The user denied it"), (5, "dismissed")] {
            assert_eq!(out[i]["result"]["isError"], true, "{protocol}: {}", out[i]);
            assert!(text_of(&out[i]).contains(says), "{protocol}: {}", out[i]);
        }
        // What ran upstream: the three allowed calls, nothing else; the client's answers to the
        // proxy's elicitations never reached it.
        assert_eq!(peer.tools_run(), ["write_note"; 3], "{protocol}");
        let seen = bodies(&peer);
        assert!(!seen.contains("portcullis-elicit") && !seen.contains("\"action\""), "{protocol}: {seen}");
        assert!(!seen.contains("three") && !seen.contains("four") && !seen.contains("five"), "{protocol}");
        let metrics = String::from_utf8(p.metrics.render()).unwrap();
        for line in [
            r#"portcullis_approvals_total{decision="allow_once"} 1"#,
            r#"portcullis_approvals_total{decision="allow_session"} 1"#,
            r#"portcullis_approvals_total{decision="deny"} 2"#,
            r#"portcullis_approvals_total{decision="cancel"} 1"#,
            "portcullis_waivers_active 1",
        ] {
            assert!(metrics.contains(line), "{protocol}: missing {line}");
        }
    }
}

#[tokio::test]
async fn a_client_without_the_capability_falls_back_to_the_next_channel() {
    let peer = Peer::python("legacy");
    let n = note("x");
    // auto, no operator: headless, and the reason says a human could have allowed it.
    let p = proxy(&config(&[("py", &peer.url())], "approvals: { channel: auto }\n")).await;
    let out = py_client_with(&proxy_url(&p, "py"), "legacy", &[], &["call", "write_note", &n]).await;
    assert_eq!(out[0]["result"]["isError"], true, "{}", out[0]);
    assert!(out[0].get("elicitations").is_none());
    // `channel: elicitation` with a client that cannot: headless as well, never parked.
    let p = proxy(&config(&[("py", &peer.url())], "approvals: { channel: elicitation }\n")).await;
    let out = py_client_with(&proxy_url(&p, "py"), "legacy", &[], &["call", "write_note", &n]).await;
    assert_eq!(out[0]["result"]["isError"], true, "{}", out[0]);
    // `channel: none`: a client that could elicit is not asked.
    let p = proxy(&config(&[("py", &peer.url())], "approvals: { channel: none }\n")).await;
    let out = py_client_with(
        &proxy_url(&p, "py"),
        "legacy",
        &["--elicit", "allow_once"],
        &["call", "write_note", &n],
    )
    .await;
    assert_eq!(out[0]["result"]["isError"], true, "{}", out[0]);
    assert!(out[0].get("elicitations").is_none());
    assert!(peer.tools_run().is_empty(), "no refused call ran");
}

#[tokio::test]
async fn a_configured_deny_is_never_asked_and_a_configured_ask_is_never_waived() {
    let peer = Peer::python("legacy");
    let p = proxy(&config(
        &[("py", &peer.url())],
        "permissions: { deny: [mcp__py__echo], ask: [mcp__py__add] }\napprovals: { channel: elicitation }\n",
    ))
    .await;
    let args = json!({"a": 1, "b": 2}).to_string();
    let out = py_client_with(
        &proxy_url(&p, "py"),
        "legacy",
        &["--elicit", "allow_once,allow_once"],
        &["call", "echo", r#"{"message":"hi"}"#, "call", "add", &args, "call", "add", &args],
    )
    .await;
    assert!(out[0].get("elicitations").is_none(), "a deny is not askable: {}", out[0]);
    assert_eq!(out[0]["result"]["isError"], true);
    // The configured ask offers no session waiver, and allowing once asks again next time.
    assert_eq!(out[1]["elicitations"][0]["choices"], json!(["allow_once", "deny"]));
    assert_eq!(out[1]["result"]["structuredContent"]["result"], 3, "{}", out[1]);
    assert_eq!(out[2]["elicitations"].as_array().map(Vec::len), Some(1), "{}", out[2]);
    assert_eq!(peer.tools_run(), ["add", "add"]);
}

#[tokio::test]
async fn elicitation_works_through_wrap() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("stdin.jsonl");
    let cfg = dir.path().join("portcullis.yaml");
    std::fs::write(&cfg, "approvals: { channel: auto, timeout: 30s }\n").unwrap();
    let server = crate::support::node_module("@modelcontextprotocol/server-everything/dist/index.js");
    let script = format!("tee -a '{}' | exec node '{}' stdio", journal.display(), server.display());
    let argv = serde_json::to_string(&[
        env!("CARGO_BIN_EXE_portcullis"),
        "wrap",
        "--config",
        cfg.to_str().unwrap(),
        "--name",
        "everything",
        "--",
        "sh",
        "-c",
        &script,
    ])
    .unwrap();
    let out = py_client_stdio_with(
        &argv,
        &["--elicit", "allow_session,deny"],
        &[
            "call",
            "echo",
            r#"{"message":"first"}"#, // allow for the session
            "call",
            "echo",
            r#"{"message":"first"}"#, // waived
            "call",
            "echo",
            r#"{"message":"second"}"#, // deny
        ],
    )
    .await;
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(text_of(&out[0]), "Echo: first", "{}", out[0]);
    assert_eq!(text_of(&out[1]), "Echo: first", "{}", out[1]);
    assert!(out[1].get("elicitations").is_none(), "{}", out[1]);
    assert_eq!(out[2]["result"]["isError"], true, "{}", out[2]);
    assert!(text_of(&out[2]).contains("The user denied it"), "{}", out[2]);
    let seen = std::fs::read_to_string(&journal).unwrap();
    let calls: Vec<Value> = seen
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 2, "{seen}");
    assert!(!seen.contains("second") && !seen.contains("portcullis-elicit"), "{seen}");
}

#[tokio::test]
async fn a_waiver_dies_with_the_tool_definition_it_was_armed_for() {
    let peer = Peer::python("legacy");
    let p =
        proxy(&config(&[("py", &peer.url())], "approvals: { channel: elicitation, timeout: 30s }\n")).await;
    let n = note("same");
    let out = py_client_with(
        &proxy_url(&p, "py"),
        "legacy",
        &["--elicit", "allow_session,allow_once,deny"],
        &[
            "list",
            "call",
            "write_note",
            &n, // allow for the session
            "call",
            "write_note",
            &n, // waived
            "call",
            "redefine",
            r#"{"description":"writes a note, and mails it to the author"}"#, // allow once
            "list", // the proxy learns the new definition
            "call",
            "write_note",
            &n, // asked again: deny
        ],
    )
    .await;
    let asked: Vec<usize> = out.iter().map(|l| l["elicitations"].as_array().map_or(0, Vec::len)).collect();
    assert_eq!(asked, [0, 1, 0, 1, 0, 1], "{out:?}");
    assert_eq!(out[5]["result"]["isError"], true, "{}", out[5]);
    assert_eq!(peer.tools_run(), ["write_note", "write_note", "redefine"]);
}
