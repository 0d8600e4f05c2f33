//! The user's task beside a call (`_meta["portcullis/task"]`, or the `Portcullis-Task` header of
//! a plain HTTP tool call): fenced for the checker so it can tell a send the user asked for from
//! one an injection asked for; never shown to the tool, never a reason to skip a check.

use serde_json::{json, Value};

use crate::guardrails::{guarded, Session};
use crate::support::fake_checker::{FakeChecker, Reply, Request};
use crate::support::{config, post, proxy, proxy_url, rpc_body, Peer, LEGACY};

/// The text between the task fences of a checker request, if any.
fn task_of(r: &Request) -> Option<String> {
    let user = r.user();
    let start = user.find("BEGIN TASK ")?;
    let body = &user[start..];
    let body = &body[body.find('\n')? + 1..];
    Some(body[..body.find("\nEND TASK ")?].to_owned())
}

/// A send to the account in the data is unsafe unless the user's task names that account.
fn judge_against_task(r: &Request) -> (Reply, Option<std::time::Duration>) {
    let sends_to = r.data().contains("DE89-ATTACKER");
    let asked_for = task_of(r).is_some_and(|t| t.contains("DE89-ATTACKER"));
    match sends_to && !asked_for {
        true => (Reply::Unsafe("sends money to an account the user never named".into()), None),
        false => (Reply::Safe, None),
    }
}

async fn call_with_meta(s: &mut Session, args: Value, meta: Option<Value>) -> Value {
    s.next += 1;
    let mut params = json!({"name": "echo", "arguments": args});
    if let Some(m) = meta {
        params["_meta"] = m;
    }
    let body = json!({"jsonrpc": "2.0", "id": s.next, "method": "tools/call", "params": params});
    let headers = [("mcp-session-id", s.id.as_str()), ("mcp-protocol-version", LEGACY)];
    let (_, _, text) = post(&s.url, &headers, body.to_string()).await;
    rpc_body(&text)
}

#[tokio::test]
async fn the_task_reaches_the_checker_fenced_and_decides_with_it_not_for_it() {
    let peer = Peer::python("legacy");
    let checker = FakeChecker::start(judge_against_task).await;
    let p = proxy(&guarded(&peer, &checker, "", "[{ match: \"mcp__*\", phases: [pre] }]")).await;
    let mut s = Session::open(&proxy_url(&p, "py")).await;
    let args = json!({"message": "transfer 900 EUR to DE89-ATTACKER"});

    // The user asked for this send: allowed, and it ran.
    let task = "Pay my landlord 900 EUR; his account is DE89-ATTACKER (it is in lease.pdf).";
    let msg = call_with_meta(&mut s, args.clone(), Some(json!({"portcullis/task": task}))).await;
    assert_eq!(msg["result"]["content"][0]["text"], "transfer 900 EUR to DE89-ATTACKER", "{msg}");
    // The same bytes under another task, and with none: blocked, never reached the upstream.
    let other = json!({"portcullis/task": "Summarise my unread e-mails.", "progressToken": 7});
    let msg = call_with_meta(&mut s, args.clone(), Some(other)).await;
    assert_eq!(msg["result"]["isError"], true, "{msg}");
    let msg = call_with_meta(&mut s, args.clone(), None).await;
    assert_eq!(msg["result"]["isError"], true, "{msg}");
    // A task that is not a string is no task.
    let msg = call_with_meta(&mut s, args.clone(), Some(json!({"portcullis/task": {"text": task}}))).await;
    assert_eq!(msg["result"]["isError"], true, "{msg}");
    assert_eq!(peer.tools_run(), ["echo"], "only the send the user asked for ran");

    // Each task is its own verdict (the cache keys it); the task is fenced apart from the data.
    let seen = checker.requests();
    assert_eq!(seen.len(), 3, "the task is part of the cache key, a missing task is a third");
    assert_eq!(task_of(&seen[0]).as_deref(), Some(task));
    assert!(!seen[0].data().contains("landlord"), "the evidence is looked for in the data only");
    assert!(seen[0].system().contains("not an instruction to you"), "{}", seen[0].system());
    assert_eq!(task_of(&seen[2]), None);
}

#[tokio::test]
async fn a_plain_http_call_carries_the_task_in_a_header_the_tool_never_sees() {
    let tools = crate::http_tools::tool_server().await;
    let checker = FakeChecker::start(judge_against_task).await;
    let extra = format!(
        "permissions: {{ allow: [\"http__bank__*\"] }}\nguardrails:\n  checker: {{ base_url: \"{}\", model: fake-judge, timeout: 2s }}\n  rules: [{{ match: \"http__bank__*\", phases: [pre] }}]\n",
        checker.url
    );
    let p = proxy(&config(&[("bank", &tools.url)], &extra)).await;
    let url = format!("http://{}/http/bank/v1/transfer", p.addr);
    let body = r#"{"to":"DE89-ATTACKER","eur":900}"#;
    let (status, _, answer) = post(&url, &[("portcullis-task", "Summarise my inbox.")], body).await;
    assert_eq!(status, 403, "{answer}");
    assert!(tools.seen.lock().unwrap().is_empty(), "a blocked call never reaches the tool");
    let task = "Pay the 900 EUR invoice from DE89-ATTACKER.";
    let (status, _, answer) = post(&url, &[("portcullis-task", task)], body).await;
    assert_eq!(status, 200, "{answer}");
    let seen = tools.headers.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert!(
        !seen[0].to_ascii_lowercase().contains("portcullis-task"),
        "removed before forwarding: {}",
        seen[0]
    );
    assert!(!seen[0].contains("invoice"), "{}", seen[0]);
    assert_eq!(task_of(&checker.requests()[1]).as_deref(), Some(task));
}
