//! The pre gate on JSON-RPC text: refusals carry their id, allowed calls are watched, invalid calls and batches are refused.

use super::*;
use crate::mcp::jsonrpc::parse;
use serde_json::Value;

fn guard() -> Guard {
    crate::gate::guard::tests::guard("permissions: { allow: [\"mcp__up__*\"], deny: [mcp__up__rm] }\n")
}

fn decide_text(text: &str, negotiated: Option<Version>) -> Plan {
    let up: Arc<str> = "up".into();
    let approvals = Approvals::headless();
    let cx = Context { negotiated, ..Context::headless(&up, &approvals, Era::Legacy) };
    block_on(decide(&parse(text.as_bytes()).unwrap(), &cx, &guard()))
}

fn refusal_json(d: Plan) -> (Value, bool) {
    match d {
        Plan::Refuse(r) => (serde_json::from_slice(&r.body).unwrap(), r.invalid),
        Plan::Forward(_) | Plan::Ask(_) | Plan::Rewrite(..) => panic!("not refused"),
    }
}

#[test]
fn a_denied_call_is_answered_with_an_error_result_carrying_its_id() {
    let (v, invalid) = refusal_json(decide_text(
        r#"{"jsonrpc":"2.0","id":"x-1","method":"tools/call","params":{"name":"rm","arguments":{}}}"#,
        None,
    ));
    assert!(!invalid);
    assert_eq!(v["id"], "x-1");
    assert_eq!(v["result"]["isError"], true);
    assert!(v["result"]["content"][0]["text"].as_str().unwrap().contains("mcp__up__rm"));
}

#[test]
fn allowed_calls_and_initialize_are_watched() {
    let Plan::Forward(w) =
        decide_text(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ls"}}"#, None)
    else {
        panic!()
    };
    assert_eq!(w.len(), 1);
    let Plan::Forward(w) = decide_text(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#, None)
    else {
        panic!()
    };
    assert_eq!(w.len(), 1);
    let Plan::Forward(w) = decide_text(r#"{"jsonrpc":"2.0","method":"notifications/x"}"#, None) else {
        panic!()
    };
    assert!(w.is_empty());
}

#[test]
fn tools_call_without_a_usable_id_or_params_is_invalid() {
    for text in [
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"ls"}}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"ls"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ls","name":"rm"}}"#,
    ] {
        let (_, invalid) = refusal_json(decide_text(text, None));
        assert!(invalid, "{text}");
    }
}

#[test]
fn batches_are_refused_unless_the_session_negotiated_2025_03_26() {
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ls"}}]"#;
    for v in [None, Some(Version::V2025_06_18), Some(Version::V2025_11_25)] {
        let (json, invalid) = refusal_json(decide_text(batch, v));
        assert!(invalid);
        assert_eq!(json["error"]["code"], code::INVALID_REQUEST);
    }
    assert!(matches!(decide_text(batch, Some(Version::V2025_03_26)), Plan::Forward(_)));
}

#[test]
fn one_denied_element_refuses_the_whole_batch_with_an_answer_per_request() {
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ls"}},
                    {"jsonrpc":"2.0","method":"notifications/progress"},
                    {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rm"}}]"#;
    let (v, invalid) = refusal_json(decide_text(batch, Some(Version::V2025_03_26)));
    assert!(!invalid);
    let arr = v.as_array().unwrap();
    assert_eq!(arr.len(), 2);
    assert_eq!(arr[0]["id"], 1);
    assert!(arr[0]["error"].is_object());
    assert_eq!(arr[1]["id"], 2);
    assert_eq!(arr[1]["result"]["isError"], true);
}
