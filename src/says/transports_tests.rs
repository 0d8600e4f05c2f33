//! The golden file of how one decision reads on every transport: `tests/golden/refusals.txt`
//! holds a Layer 1 deny and an ask nobody can answer as an MCP result over HTTP and stdio (one
//! rendering: the gate's bytes), in the modern era, as a JSON-RPC error for a resource read, as a
//! plain HTTP tool's 403, and as Claude Code's hook answer — each decided by the real gate.
//! Regenerate with `PORTCULLIS_BLESS=1 cargo test --lib says`.

use std::sync::Arc;

use crate::approval::Approvals;
use crate::call::ToolCall;
use crate::gate::pre::typed::{decide_typed, CallPlan};
use crate::gate::pre::{block_on, decide, Context, Plan};
use crate::mcp::era::Era;

const POLICY: &str = "permissions: { allow: [\"mcp__up__*\", \"http__up__*\"], deny: [\"mcp__up__rm\", \"http__up__rm\", \"File(/etc/**)\"], ask: [\"mcp__up__push\", \"http__up__push\"] }\n";

fn jsonrpc(guard: &crate::gate::Guard, era: Era, body: &str) -> String {
    let (up, approvals): (Arc<str>, _) = ("up".into(), Approvals::headless());
    let payload = crate::mcp::jsonrpc::parse(body.as_bytes()).unwrap();
    match block_on(decide(&payload, &Context::headless(&up, &approvals, era), guard)) {
        Plan::Refuse(r) => String::from_utf8(r.body).unwrap(),
        other => panic!("not refused: {other:?}"),
    }
}

fn plain_http(guard: &crate::gate::Guard, path: &str) -> String {
    let (up, approvals): (Arc<str>, _) = ("up".into(), Approvals::headless());
    let call = ToolCall::http(up.clone(), path, None);
    match block_on(decide_typed(call, &Context::headless(&up, &approvals, Era::Legacy), guard)) {
        CallPlan::Refuse(_, d) => {
            let (body, decision) = crate::proxy::pre::http_refusal(&d);
            format!("403 x-portcullis-decision: {decision}\n{body}")
        }
        other => panic!("not refused: {other:?}"),
    }
}

fn hook(guard: &crate::gate::Guard, tool: &str) -> String {
    // As the hook hands it to the gate: Claude Code runs the tool itself.
    let call = ToolCall {
        transport: crate::call::Transport::Hook,
        ..ToolCall::mcp("up".into(), tool, None, Era::Legacy)
    };
    let (outcome, d) = guard.pre_explained(&call);
    crate::hook::decide::settled(&call, outcome, &d).to_json().to_string()
}

fn rendered() -> String {
    let guard = crate::gate::guard::tests::guard(POLICY);
    let call = |name: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"{name}","arguments":{{}}}}}}"#
        )
    };
    let modern = |name: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"{name}","arguments":{{}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}}}"#
        )
    };
    let read = r#"{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"file:///etc/shadow"}}"#;
    let rows = [
        ("deny, MCP over HTTP or stdio", jsonrpc(&guard, Era::Legacy, &call("rm"))),
        ("deny, MCP modern era", jsonrpc(&guard, Era::Modern, &modern("rm"))),
        ("deny, resources/read", jsonrpc(&guard, Era::Legacy, read)),
        ("deny, plain HTTP", plain_http(&guard, "/rm")),
        ("deny, hook", hook(&guard, "rm")),
        ("headless ask, MCP over HTTP or stdio", jsonrpc(&guard, Era::Legacy, &call("push"))),
        ("headless ask, plain HTTP", plain_http(&guard, "/push")),
        ("ask, hook (Claude Code asks its user)", hook(&guard, "push")),
    ];
    // Each call's decision id is new: the golden file spells them `ID`.
    rows.iter().map(|(name, text)| format!("## {name}\n{}\n\n", crate::decision::ids_masked(text))).collect()
}

#[test]
fn every_transport_renders_the_same_decision_as_the_golden_file_says() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/refusals.txt");
    let now = rendered();
    if std::env::var_os("PORTCULLIS_BLESS").is_some() {
        std::fs::write(&path, &now).unwrap();
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(golden, now, "a refusal's rendering changed: review, then bless (PORTCULLIS_BLESS=1)");
}
