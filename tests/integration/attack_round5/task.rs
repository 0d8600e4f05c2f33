//! The user's own task channel (issue 27.4): the agent's `_meta["portcullis/task"]` must never
//! reach the tool server, and the task a trusted channel recorded for one session must never be
//! read for a call the agent makes under another.

use serde_json::{json, Value};

use super::{parse, Target};
use crate::support::fake_checker::{FakeChecker, Reply, Request};
use crate::support::{config, post, proxy, proxy_url, rpc_body, Peer};

const MODERN: &str = "2026-07-28";
const KEY: &str = "io.portcullis/approval";
const MARKER: &str = "TASK-MARKER-7f3a the user wants the quarterly numbers";

/// A modern `tools/call` of write_note carrying the agent's task in `_meta`, from a client that
/// can elicit; `extra` params (a retry's state and answers) merged in.
async fn modern_call(url: &str, id: u64, extra: Value) -> Value {
    let mut params = json!({"name": "write_note", "arguments": {"path": "p", "text": "hello"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                  "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
                  "portcullis/task": MARKER}});
    if let (Some(p), Value::Object(e)) = (params.as_object_mut(), extra) {
        p.extend(e);
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let h = [
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tools/call"),
        ("mcp-name", "write_note"),
        ("authorization", "Bearer agent-token"),
    ];
    let (status, _, text) = post(url, &h, body.to_string()).await;
    assert_eq!(status, 200, "{text}");
    rpc_body(&text)
}

#[tokio::test]
async fn an_approved_retry_in_the_modern_era_never_carries_the_agents_task_upstream() {
    let peer = Peer::python("modern");
    let p =
        proxy(&config(&[("py", &peer.url())], "approvals: { channel: elicitation, timeout: 30s }\n")).await;
    let url = proxy_url(&p, "py");
    let first = modern_call(&url, 1, json!({})).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let answer = json!({"requestState": state,
        "inputResponses": {KEY: {"action": "accept", "content": {"decision": "allow_once"}}}});
    let ok = modern_call(&url, 2, answer).await;
    assert_eq!(ok["result"]["content"][0]["text"], "wrote 5 bytes to p", "{ok}");
    assert_eq!(peer.tools_run(), ["write_note"]);
    let seen: Vec<String> = peer.journal_http().iter().map(|l| l["body"].to_string()).collect();
    assert!(
        seen.iter().all(|b| !b.contains("TASK-MARKER") && !b.contains("portcullis/task")),
        "the upstream read the agent's task: {seen:#?}"
    );
}

const TOKEN_ENV: &str = "PORTCULLIS_TEST_ADMIN_TOKEN_ROUND5";
const TOKEN: &str = "round5-operator-token";
const ACCOUNT: &str = "DE89-3704-0044-0532-0130-00";

/// The text between `BEGIN USER TASK` and `END USER TASK` of a checker request.
fn user_task(r: &Request) -> Option<String> {
    let user = r.user();
    let body = &user[user.find("BEGIN USER TASK ")?..];
    let body = &body[body.find('\n')? + 1..];
    Some(body[..body.find("\nEND USER TASK ")?].to_owned())
}

/// A model that follows the prompt: a send to the account is the user's intent only when the
/// user's own task names it.
fn judge(r: &Request) -> (Reply, Option<std::time::Duration>) {
    let intended = user_task(r).is_some_and(|t| t.contains(ACCOUNT));
    match r.data().contains(ACCOUNT) && !intended {
        true => (Reply::Unsafe("sends money to an account the user never named".into()), None),
        false => (Reply::Safe, None),
    }
}

#[tokio::test]
async fn an_agent_cannot_name_a_hook_sessions_key_to_borrow_the_users_task() {
    std::env::set_var(TOKEN_ENV, TOKEN);
    let checker = FakeChecker::start(judge).await;
    let bank = Target::start(None).await;
    let p = proxy(&parse(&format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {TOKEN_ENV} }}\n\
         approvals: {{ channel: none }}\nupstreams:\n  bank: {{ url: \"{}\" }}\n\
         permissions: {{ allow: [\"http__*\"] }}\n\
         guardrails:\n  checker: {{ base_url: \"{}\", model: fake-judge, timeout: 2s }}\n  min_content_bytes: 0\n\
         \x20 rules: [{{ match: \"http__*\", phases: [pre] }}]\n",
        bank.base(),
        checker.url
    )))
    .await;
    // The user, in Claude Code session cc-9, asks for the payment (the hook records it).
    let auth = format!("Bearer {TOKEN}");
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "cc-9", "cwd": "/w",
        "prompt": format!("Pay my landlord 900 EUR to {ACCOUNT}")});
    let (status, _, text) = post(
        &format!("http://{}/hook/prompt", p.admin_addr),
        &[("authorization", &auth)],
        prompt.to_string(),
    )
    .await;
    assert_eq!(status, 200, "{text}");

    // Another agent, anonymous, with no token, sends the same payment and names that key.
    let transfer = format!("http://{}/http/bank/transfer", p.addr);
    let body = json!({"to": ACCOUNT, "eur": 900}).to_string();
    let (status, _, text) = post(&transfer, &[], body.clone()).await;
    assert_eq!(status, 403, "the control: without the user's task the send is blocked: {text}");
    let (status, _, text) = post(&transfer, &[("mcp-session-id", "hook:cc-9")], body).await;
    let asked = checker.requests();
    assert!(
        asked.iter().all(|r| user_task(r).is_none()),
        "the checker read the user's task for another caller's call: {:?}",
        asked.iter().map(user_task).collect::<Vec<_>>()
    );
    assert_eq!(status, 403, "{text}");
    assert!(bank.seen().is_empty(), "the payment reached the bank: {:?}", bank.seen());
}
