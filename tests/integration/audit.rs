//! The audit log against real traffic: the Python SDK client through the proxy to the Python SDK
//! server. Every decision is exactly one line; planted secrets never appear in the log.

use serde_json::{json, Value};

use crate::support::{config, proxy, proxy_url, py_client_with, text_of, Peer};

#[tokio::test]
async fn every_decision_is_one_line_and_no_secret_reaches_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let peer = Peer::python("legacy");
    // Secrets the local detectors know by shape, built at run time so no scanner flags this file.
    let token = format!("ghp_{}", "Zq7XwR2kLm9PvT4nBc8YdF3sHj6Ga1Ue5Ko0");
    let openai = format!("sk-proj-{}", "Qm3Vx8Lr2Tk7Wn4Pz9Bc6Hd1Fs5Gj0Ya".repeat(2));
    let p = proxy(&config(
        &[("py", &peer.url())],
        &format!(
            "permissions: {{ allow: [mcp__py__echo, mcp__py__leak], deny: [mcp__py__write_note] }}\n\
             redact: [TOPSECRET-1234]\naudit: {{ to: \"{}\" }}\n",
            log.display()
        ),
    ))
    .await;
    let echo = json!({ "message": format!("deploy with {token} and {openai}") }).to_string();
    let note = json!({ "path": "creds", "text": format!("token={token}") }).to_string();
    let out = py_client_with(
        &proxy_url(&p, "py"),
        "legacy",
        &["--no-validate"],
        &["call", "echo", &echo, "call", "write_note", &note, "call", "leak", "{}"],
    )
    .await;
    assert_eq!(out.len(), 3, "{out:?}");
    let denied_reason = text_of(&out[1]);
    assert!(denied_reason.contains("portcullis denied"), "{}", out[1]);

    // The writer is a thread behind a queue: wait (bounded) for the five lines.
    let log = &log;
    let lines: Vec<Value> = crate::support::eventually("five audit lines", || async move {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<Value> =
            text.lines().map(|l| serde_json::from_str(l).expect("each line is JSON")).collect();
        (lines.len() >= 5).then_some(lines)
    })
    .await;
    let summary: Vec<(String, String, String)> = lines
        .iter()
        .map(|l| {
            let s = |k: &str| l[k].as_str().unwrap_or("").to_owned();
            (s("phase"), s("tool"), s("outcome"))
        })
        .collect();
    let want = |phase: &str, tool: &str, outcome: &str| {
        (phase.to_owned(), format!("mcp__py__{tool}"), outcome.to_owned())
    };
    assert_eq!(
        summary,
        [
            want("pre", "echo", "forwarded"),
            want("post", "echo", "forwarded"),
            want("pre", "write_note", "denied"),
            want("pre", "leak", "forwarded"),
            want("post", "leak", "rewritten"),
        ],
        "exactly one line per decision: {lines:#?}"
    );
    // Arguments and results as digests and masked previews; the denial as the agent read it.
    let text = std::fs::read_to_string(log).unwrap();
    for secret in [token.as_str(), openai.as_str(), "TOPSECRET-1234"] {
        assert!(!text.contains(secret), "{secret} leaked into the audit log:\n{text}");
    }
    assert!(lines[0]["preview"].as_str().unwrap().contains("deploy with [secret:"), "{}", lines[0]);
    assert_eq!(lines[0]["digest"].as_str().map(str::len), Some(32));
    assert_eq!(lines[2]["reason"], denied_reason.as_str());
    assert!(lines[2]["rule"].as_str().unwrap().contains("write_note"), "{}", lines[2]);
    assert!(lines.iter().all(|l| l["upstream"] == "py" && l["session"].is_string() && l["ts"].is_u64()));
}
