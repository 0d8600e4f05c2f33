//! A tool called as a task (SEP-1686): `tools/call` answers with a task, the client polls
//! `tasks/get` and reads the tool's output from `tasks/result` — a different request, watched
//! under the pseudo-tool `mcp__{upstream}__tasks/result`. The real server here is
//! server-everything's `simulate-research-query` (task support required), whose report repeats
//! the topic; the client is the TypeScript SDK's `experimental.tasks.callToolStream`.

use super::harness::ts_task;
use crate::guardrails::{guarded, unsafe_if};
use crate::support::fake_checker::FakeChecker;
use crate::support::{proxy, proxy_url, Peer};

const TOPIC: &str = "TOPIC-MARKER-4417";
const TOOL: &str = "simulate-research-query";
/// Words of the report itself (a refusal may quote the checker, which names the topic).
const REPORT: &str = "Research Report";

/// The task's stream through a proxy whose only post rule is `rule`; returns the stream's
/// messages and how many results the checker was shown.
async fn through(rule: &str) -> (Vec<serde_json::Value>, usize) {
    let peer = Peer::everything();
    let checker = FakeChecker::start(unsafe_if(TOPIC)).await;
    let rules = format!("[{{ match: \"{rule}\", phases: [post], mode: block }}]");
    let p = proxy(&guarded(&peer, &checker, "", &rules)).await;
    let lines = ts_task(&proxy_url(&p, "py"), TOOL, &format!(r#"{{"topic":"{TOPIC}"}}"#)).await;
    p.shutdown().await;
    (lines, checker.calls())
}

#[tokio::test]
async fn a_prefix_rule_judges_a_tasks_output() {
    let (lines, _) = through("mcp__py__*").await;
    let last = lines.last().expect("the stream ended");
    assert!(lines.iter().any(|l| l["type"] == "taskCreated"), "the tool ran as a task: {lines:?}");
    assert!(!last.to_string().contains(REPORT), "the report reached the agent unjudged: {last}");
    assert_eq!(last["type"], "error", "the blocked result is an error: {last}");
}

#[tokio::test]
async fn a_rule_naming_the_tool_judges_its_output_called_as_a_task() {
    let (lines, checked) = through(&format!("mcp__py__{TOOL}")).await;
    let last = lines.last().expect("the stream ended");
    assert!(lines.iter().any(|l| l["type"] == "taskCreated"), "the tool ran as a task: {lines:?}");
    assert!(
        !last.to_string().contains(REPORT),
        "the report reached the agent unjudged ({checked} checker calls): {last}"
    );
}

/// The tool, `flows.private`, read as a task; then its report posted through `echo`, a sink.
/// Returns whether the sink call reached the server.
async fn post_the_report(private: &str) -> bool {
    let peer = Peer::everything();
    let extra = format!(
        "posture: auto\npermissions: {{ allow: [\"mcp__*\"] }}\n\
         egress: {{ sinks: [mcp__py__echo] }}\nflows: {{ private: [\"{private}\"] }}\n"
    );
    let p = proxy(&crate::support::config(&[("py", &peer.url())], &extra)).await;
    let url = proxy_url(&p, "py");
    let lines = ts_task(&url, TOOL, &format!(r#"{{"topic":"{TOPIC}"}}"#)).await;
    let report = lines.last().map(|l| l["result"]["content"][0]["text"].as_str().unwrap_or("").to_owned());
    let report = report.unwrap_or_default();
    assert!(report.contains(REPORT), "the agent read the report: {lines:?}");
    let session = crate::support::open_legacy_session(&url).await;
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": report}}});
    let h = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", crate::support::LEGACY)];
    let _ = crate::support::post(&url, &h, call.to_string()).await;
    p.shutdown().await;
    peer.calls_received().iter().any(|c| c == "echo")
}

#[tokio::test]
async fn a_private_prefix_records_a_tasks_output_and_the_sink_is_refused_it() {
    assert!(!post_the_report("mcp__py__*").await, "the report left through the sink");
}

#[tokio::test]
async fn a_private_tool_called_as_a_task_is_recorded_and_the_sink_is_refused_its_output() {
    assert!(!post_the_report(&format!("mcp__py__{TOOL}")).await, "the report left through the sink");
}
