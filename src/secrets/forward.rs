//! The last step before forwarding: each `tools/call` in a decided payload gets the values of
//! the sentinels its destination may receive, every other byte of the payload as the agent sent
//! it. Every transport calls this (through the guard) after the gate decided: HTTP, parked
//! approvals, stdio, plain HTTP tools.

use std::sync::Arc;

use serde_json::value::RawValue;

use super::Held;
use crate::call::ToolCall;
use crate::mcp::era::Era;
use crate::mcp::jsonrpc::{CallParams, Message};
use crate::rules::kinds::ToolKinds;

/// `body` (one JSON-RPC message or a batch of them) with every held value in it masked (the gate
/// refused calls carrying one; other messages are not decided) and then its calls' arguments
/// unmasked for `upstream`; `None` when nothing changes (the common case costs one automaton pass over the
/// body).
pub fn unmask_payload(
    held: &Held,
    kinds: &ToolKinds,
    upstream: &Arc<str>,
    era: Era,
    body: &[u8],
) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(body).ok()?;
    // A sentinel or a value may be written with JSON escapes; a body with none needs no parse.
    if !held.carries_sentinel(text) && !held.holds_value(text) && !text.contains('\\') {
        return None;
    }
    // A value in a message the gate decides nothing about (a notification, `initialize`, a
    // method no route names) leaves as its sentinel: only the swap below puts values in.
    let masked = super::unmask::rewrite_strings(text, &|s| held.mask_str(s));
    let text = masked.as_deref().unwrap_or(text);
    let messages: Vec<&RawValue> = match text.trim_start().starts_with('[') {
        true => serde_json::from_str(text).ok()?,
        false => vec![serde_json::from_str(text).ok()?],
    };
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for raw in messages {
        let Ok(m) = serde_json::from_str::<Message<'_>>(raw.get()) else { continue };
        if m.method.as_deref() != Some("tools/call") {
            continue;
        }
        let Some(params) = m.params.and_then(|p| serde_json::from_str::<CallParams<'_>>(p.get()).ok()) else {
            continue;
        };
        let Some(args) = params.arguments else { continue };
        let call = ToolCall::mcp(upstream.clone(), &params.name, Some(args), era);
        if let Some(new) = held.unmask_args(&call, kinds, args.get()) {
            let start = (args.get().as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
            edits.push((start, start + args.get().len(), new));
        }
    }
    if edits.is_empty() {
        return masked.map(String::into_bytes);
    }
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for (start, end, new) in edits {
        out.push_str(text.get(at..start)?);
        out.push_str(&new);
        at = end;
    }
    out.push_str(&text[at..]);
    Some(out.into_bytes())
}

/// A plain HTTP tool's body: its JSON strings unmasked, or (not JSON) its text.
pub fn unmask_http(held: &Held, kinds: &ToolKinds, call: &ToolCall, body: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(body).ok()?;
    if serde_json::from_str::<&RawValue>(text).is_ok() {
        return held.unmask_args(call, kinds, text).map(String::into_bytes);
    }
    let url = held.destination(call, kinds, &serde_json::Value::Null);
    let allowed = |i: usize| held.allows(i, &call.qualified, url.as_deref());
    held.unmask_str(text, &allowed).map(String::into_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::held::tests::held;

    #[test]
    fn values_in_undecided_messages_leave_as_sentinels_and_allowed_sentinels_as_values() {
        let h = held();
        let kinds = ToolKinds::default();
        let up: Arc<str> = Arc::from("github");
        let body = br#"[{"jsonrpc":"2.0","method":"notifications/x","params":{"v":"gh\u0070_Zq8LmN3vT0xY"}},
            {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create","arguments":{"a":"portcullis:secret:github"}}}]"#;
        let out = String::from_utf8(unmask_payload(&h, &kinds, &up, Era::Legacy, body).unwrap()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v[0]["params"]["v"], "portcullis:secret:github", "{out}");
        assert_eq!(v[1]["params"]["arguments"]["a"], "ghp_Zq8LmN3vT0xY", "{out}");
        let plain = br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
        assert!(unmask_payload(&h, &kinds, &up, Era::Legacy, plain).is_none(), "nothing to change");
    }
}
