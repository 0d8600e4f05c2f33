//! The typed call of each request: a `tools/call`; one Layer 1 decides that names a resource
//! (`resources/read`, `resources/subscribe`) or carries the agent's text to the server
//! (`prompts/get`, `completion/complete`); and one forwarded whose answer is judged.

use serde_json::value::RawValue;

use super::Context;
use crate::call::{Method, ToolCall};
use crate::mcp::jsonrpc::{CallParams, Message};

/// The typed call of a `tools/call` request, or why its params are unusable.
pub(super) fn tool_call(msg: &Message<'_>, cx: &Context<'_>) -> Result<ToolCall, String> {
    let params = match msg.params.map(|p| serde_json::from_str::<CallParams<'_>>(p.get())) {
        Some(Ok(p)) => super::super::tool_name::checked(p)?,
        Some(Err(e)) => return Err(format!("tools/call params: {e}")),
        None => return Err("tools/call needs params".into()),
    };
    let (task, mode) = ToolCall::task_and_mode_in_meta(params.meta);
    Ok(ToolCall::mcp(cx.upstream.clone(), &params.name, params.arguments, cx.era)
        .with_task(task.as_deref())
        .with_user_task(cx.approvals.user_tasks.get(cx.session))
        .with_mode(mode.or(cx.mode))
        .with_session(cx.session.map(str::to_owned))
        .with_caller(cx.principal)
        .with_agent(cx.agent.cloned()))
}

/// The call a forwarded request's answer is judged as (one Layer 1 does not decide): the
/// pseudo-tool `mcp__{upstream}__{method}`, except a task's result or state, judged as the tool
/// the task runs when the proxy saw it created ([`crate::session::task_ids`], red team R10-4).
pub(super) fn answered(method: Method, msg: &Message<'_>, cx: &Context<'_>) -> ToolCall {
    let runs = match method {
        Method::TasksResult | Method::TasksGet => msg
            .params
            .and_then(|p| crate::session::task_ids::named_by(p.get()))
            .and_then(|t| cx.approvals.task_ids.tool(cx.upstream, &t)),
        _ => None,
    };
    match runs {
        Some(tool) => ToolCall { method, ..ToolCall::mcp(cx.upstream.clone(), &tool, None, cx.era) },
        None => ToolCall::route(cx.upstream.clone(), method, None, cx.era),
    }
}

/// The typed call of a request naming a resource (`resources/read`, `resources/subscribe`): the
/// pseudo-tool `mcp__{upstream}__{method}` whose arguments are `{"uri": …}` (what the resource
/// kind reads, the Layer 2 check judges and a waiver is keyed by; `_meta` changes per request).
/// Params whose `uri` is not one string (absent, or given twice, which servers would read
/// differently) are refused.
pub(super) fn routed(method: Method, msg: &Message<'_>, cx: &Context<'_>) -> Result<ToolCall, String> {
    match method {
        Method::PromptsGet | Method::CompletionComplete => carried(method, msg, cx),
        _ => named(method, msg, cx),
    }
}

/// The typed call of a request that names a resource.
fn named(method: Method, msg: &Message<'_>, cx: &Context<'_>) -> Result<ToolCall, String> {
    #[derive(serde::Deserialize)]
    struct Named<'a> {
        #[serde(borrow)]
        uri: std::borrow::Cow<'a, str>,
        #[serde(borrow, default, rename = "_meta")]
        meta: Option<&'a RawValue>,
    }
    let m = method.as_str();
    let params = match msg.params.map(|p| serde_json::from_str::<Named<'_>>(p.get())) {
        Some(Ok(p)) => p,
        Some(Err(e)) => return Err(format!("{m} params: {e}")),
        None => return Err(format!("{m} needs params")),
    };
    let task = ToolCall::task_in_meta(params.meta);
    let args = serde_json::value::to_raw_value(&serde_json::json!({ "uri": params.uri }))
        .map_err(|e| format!("{m} params: {e}"))?;
    Ok(ToolCall::route(cx.upstream.clone(), method, Some(&args), cx.era)
        .with_task(task.as_deref())
        .with_session(cx.session.map(str::to_owned))
        .with_caller(cx.principal)
        .with_agent(cx.agent.cloned()))
}

/// The typed call of `prompts/get` (`{"name", "arguments"}`) or `completion/complete`
/// (`{"ref", "argument", "context"}`): the pseudo-tool `mcp__{upstream}__{method}` whose arguments
/// are the params the server acts on, `_meta` left out. Each field is read once, strictly (a field
/// given twice, or of another shape, is refused); what is judged is what the server receives.
fn carried(method: Method, msg: &Message<'_>, cx: &Context<'_>) -> Result<ToolCall, String> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Prompt<'a> {
        #[serde(borrow)]
        name: std::borrow::Cow<'a, str>,
        #[serde(borrow, default)]
        arguments: Option<&'a RawValue>,
        #[serde(borrow, default, rename = "_meta")]
        meta: Option<&'a RawValue>,
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Completion<'a> {
        #[serde(borrow, rename = "ref")]
        reference: &'a RawValue,
        #[serde(borrow)]
        argument: &'a RawValue,
        #[serde(borrow, default)]
        context: Option<&'a RawValue>,
        #[serde(borrow, default, rename = "_meta")]
        meta: Option<&'a RawValue>,
    }
    let m = method.as_str();
    let text = msg.params.ok_or_else(|| format!("{m} needs params"))?.get();
    let (args, meta) = match method {
        Method::PromptsGet => {
            let p: Prompt<'_> = serde_json::from_str(text).map_err(|e| format!("{m} params: {e}"))?;
            (serde_json::json!({ "name": p.name, "arguments": p.arguments }), p.meta)
        }
        _ => {
            let p: Completion<'_> = serde_json::from_str(text).map_err(|e| format!("{m} params: {e}"))?;
            (serde_json::json!({ "ref": p.reference, "argument": p.argument, "context": p.context }), p.meta)
        }
    };
    let task = ToolCall::task_in_meta(meta);
    let args = serde_json::value::to_raw_value(&args).map_err(|e| format!("{m} params: {e}"))?;
    Ok(ToolCall::route(cx.upstream.clone(), method, Some(&args), cx.era)
        .with_task(task.as_deref())
        .with_session(cx.session.map(str::to_owned))
        .with_caller(cx.principal)
        .with_agent(cx.agent.cloned()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::Value;

    use super::super::{block_on, decide, Plan};
    use super::*;
    use crate::approval::Approvals;
    use crate::mcp::era::Era;
    use crate::mcp::jsonrpc::{code, parse};

    fn refusal_json(d: Plan) -> (Value, bool) {
        match d {
            Plan::Refuse(r) => (serde_json::from_slice(&r.body).unwrap(), r.invalid),
            Plan::Forward(_) | Plan::Ask(_) | Plan::Rewrite(..) => panic!("not refused"),
        }
    }

    #[test]
    fn a_refused_resource_request_is_a_json_rpc_error_and_other_routes_are_watched() {
        let decide_with = |policy: &str, text: &str| {
            let up: Arc<str> = "up".into();
            let approvals = Approvals::headless();
            let cx = Context::headless(&up, &approvals, Era::Legacy);
            let guard = crate::gate::guard::tests::guard(policy);
            block_on(decide(&parse(text.as_bytes()).unwrap(), &cx, &guard))
        };
        let policy = "permissions: { allow: [\"mcp__up__*\"], deny: [\"File(/etc/**)\"] }\n";
        let read = |uri: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{{"uri":"{uri}"}}}}"#)
        };
        let (v, invalid) = refusal_json(decide_with(policy, &read("file://localhost/etc/%2e%2e/etc/shadow")));
        assert!(!invalid, "a policy refusal, not a protocol error");
        assert_eq!((&v["id"], &v["error"]["code"]), (&Value::from("r"), &Value::from(code::REFUSED)), "{v}");
        assert!(v["error"]["message"].as_str().unwrap().contains("mcp__up__resources/read"), "{v}");
        let meta = r#"{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"file:///tmp/x","_meta":{"progressToken":7}}}"#;
        let Plan::Forward(w) = decide_with(policy, meta) else { panic!("allowed") };
        let (_, call) = w.calls().next().expect("watched");
        assert_eq!(call.method, Method::ResourcesRead);
        let args = call.args.as_deref().map(RawValue::get);
        assert_eq!(
            args,
            Some(r#"{"uri":"file:///tmp/x"}"#),
            "what is judged and keyed is the URI, not _meta"
        );
        for method in
            ["resources/list", "resources/templates/list", "prompts/list", "tasks/get", "tasks/list"]
        {
            let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{}}}}"#);
            let Plan::Forward(w) = decide_with(policy, &text) else { panic!("{method} is forwarded") };
            let name = w.calls().next().map(|(_, c)| c.qualified.clone());
            assert_eq!(name, Some(format!("mcp__up__{method}")), "its answer is watched");
        }
        for text in [
            r#"{"jsonrpc":"2.0","method":"resources/read","params":{"uri":"file:///etc/shadow"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///tmp/x","uri":"file:///etc/shadow"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":7}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read"}"#,
        ] {
            let (_, invalid) = refusal_json(decide_with(policy, text));
            assert!(invalid, "{text}");
        }
    }

    #[test]
    fn a_prompt_or_a_completion_is_decided_on_what_the_server_receives() {
        let up: Arc<str> = "up".into();
        let approvals = Approvals::headless();
        let cx = Context::headless(&up, &approvals, Era::Legacy);
        let policy = "permissions: { allow: [\"mcp__up__*\"], deny: [\"mcp__up__prompts/get\"] }\n";
        let guard = crate::gate::guard::tests::guard(policy);
        let decide_text = |text: &str| block_on(decide(&parse(text.as_bytes()).unwrap(), &cx, &guard));
        let prompt = r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"brief","arguments":{"who":"x"}}}"#;
        let (v, invalid) = refusal_json(decide_text(prompt));
        assert!(!invalid && v["error"]["message"].as_str().unwrap().contains("mcp__up__prompts/get"), "{v}");
        let complete = r#"{"jsonrpc":"2.0","id":2,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"brief"},"argument":{"name":"who","value":"a"},"_meta":{"progressToken":1}}}"#;
        let Plan::Forward(w) = decide_text(complete) else { panic!("allowed") };
        let (_, call) = w.calls().next().expect("watched");
        assert_eq!(call.qualified, "mcp__up__completion/complete");
        let args: Value = serde_json::from_str(call.args.as_deref().unwrap().get()).unwrap();
        assert_eq!(args["argument"]["value"], "a", "{args}");
        assert!(args.get("_meta").is_none(), "{args}");
        for text in [
            r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"a","name":"b"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"a","extra":1}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{}}}"#,
        ] {
            let (_, invalid) = refusal_json(decide_text(text));
            assert!(invalid, "{text}");
        }
    }
}
