use std::sync::Arc;

use serde_json::{json, Value};

use super::*;
use crate::call::ToolCall;
use crate::gate::guard::tests::guard;
use crate::gate::Outcome;
use crate::mcp::era::Era;

const AGENTS: &str = "permissions: { allow: [\"mcp__*\"], deny: [mcp__up__drop] }\n\
    agents:\n  \
      reader: { token_env: READER_TOKEN, profile: readonly }\n  \
      writer: { token_env: WRITER_TOKEN, permissions: { deny: [mcp__up__send], ask: [mcp__up__echo] } }\n";

fn lister(agent: Option<&str>) -> Lister {
    Lister::new("up".into(), agent.map(|a| Arc::new(Agent::configured(a.into()))))
}

fn list() -> Value {
    // (also the fallback of a list that went as sent)
    json!({"tools": [
        {"name": "echo", "description": "Echo."},
        {"name": "send", "description": "Send mail."},
        {"name": "drop", "description": "Drop a table."},
        {"description": "no name"},
    ], "nextCursor": "page-2", "_meta": {"k": 1}})
}

fn names(v: &Value) -> Vec<&str> {
    v["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect()
}

#[test]
fn each_agent_is_shown_only_what_it_may_call_and_the_rest_of_the_answer_stays() {
    let g = guard(AGENTS);
    let anonymous = g.shown(&lister(None), &list()).expect("drop is denied to everyone");
    assert_eq!(names(&anonymous), ["echo", "send"]);
    assert_eq!(anonymous["tools"].as_array().unwrap().len(), 3, "a nameless tool is the screen's");
    assert_eq!((&anonymous["nextCursor"], &anonymous["_meta"]), (&json!("page-2"), &json!({"k": 1})));
    // Readonly: a generic tool is never proven read-only, so nothing is left to call.
    let reader = g.shown(&lister(Some("reader")), &list()).unwrap();
    assert_eq!(names(&reader), Vec::<&str>::new());
    assert_eq!(reader["nextCursor"], "page-2", "an emptied page still leads on");
    // An ask stays listed: a human may allow it.
    let writer = g.shown(&lister(Some("writer")), &list()).unwrap();
    assert_eq!(names(&writer), ["echo"]);
}

#[test]
fn a_withheld_tools_call_is_still_refused_with_its_reason() {
    let g = guard(AGENTS);
    let writer = Arc::new(Agent::configured("writer".into()));
    let call = ToolCall::mcp("up".into(), "send", None, Era::Legacy).with_agent(Some(writer));
    let Outcome::Refuse(d) = g.pre(&call) else { panic!("send is denied to writer") };
    assert!(d.reason.contains("mcp__up__send"), "{}", d.reason);
}

#[test]
fn a_list_nothing_is_withheld_from_goes_as_sent() {
    let g = guard(
        "permissions: { allow: [\"mcp__*\"], deny: [\"mcp__up__echo(secret)\"], ask: [mcp__up__send] }\n",
    );
    assert!(!g.lists_filtered(None), "no deny without a specifier: lists are not even looked at");
    assert!(g.shown(&lister(None), &list()).is_none());
    let g = guard("permissions: { deny: [mcp__other__echo] }\n");
    assert!(g.lists_filtered(None));
    assert!(g.shown(&lister(None), &list()).is_none(), "another upstream's deny withholds nothing here");
}

#[test]
fn answers_are_kept_per_caller_until_the_policy_reloads() {
    let g = guard(AGENTS);
    g.shown(&lister(Some("writer")), &list());
    assert_eq!(g.lists_judged().len(), 3, "one answer per named tool");
    g.shown(&lister(Some("writer")), &list());
    assert_eq!(g.lists_judged().len(), 3, "the second list is answered from the table");
    g.shown(&lister(Some("reader")), &list());
    assert_eq!(g.lists_judged().len(), 6, "another caller, other answers");
    let c = crate::config::Config::parse(
        "permissions: { allow: [\"mcp__*\"] }\nagents: { writer: { token_env: WRITER_TOKEN } }\n",
        "test",
    )
    .unwrap();
    let reloaded = g.reload(&c.policy).unwrap();
    assert!(reloaded.lists_judged().is_empty());
    assert!(reloaded.shown(&lister(Some("writer")), &list()).is_none(), "nothing is denied now");
}

#[test]
fn an_agent_the_policy_no_longer_knows_is_shown_nothing() {
    let g = guard(AGENTS);
    assert!(g.lists_filtered(Some(&Agent::configured("gone".into()))));
    let out = g.shown(&lister(Some("gone")), &list()).unwrap();
    assert_eq!(out["tools"], json!([]));
}

#[test]
fn the_operators_descriptions_are_what_each_caller_reads_of_what_it_is_shown() {
    let g = guard(&format!(
        "{AGENTS}tool_descriptions:\n  \
           - {{ tool: mcp__up__echo, description: Echoes. Logged. }}\n  \
           - {{ tool: mcp__up__echo, agents: [writer], description: Echoes for the writer. }}\n  \
           - {{ tool: mcp__up__send, agents: [writer], description: never shown }}\n"
    ));
    assert!(g.lists_filtered(Some(&Agent::configured("writer".into()))));
    let described = |agent: Option<&str>| -> Vec<(String, String)> {
        let out = g.shown(&lister(agent), &list()).unwrap_or_else(list);
        let tools = out["tools"].as_array().unwrap().iter();
        tools
            .filter_map(|t| Some((t["name"].as_str()?.to_owned(), t["description"].as_str()?.to_owned())))
            .collect()
    };
    let pair = |n: &str, d: &str| (n.to_owned(), d.to_owned());
    assert_eq!(described(Some("writer")), [pair("echo", "Echoes for the writer.")]);
    assert_eq!(described(None), [pair("echo", "Echoes. Logged."), pair("send", "Send mail.")]);
}
