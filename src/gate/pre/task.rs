//! The user's task (`_meta["portcullis/task"]`) is for the checker, never for the tool server: a
//! hostile server that read it would learn what the user is after and could shape its injection
//! to it. Every request the gate forwards goes without it (the rest of the bytes as received).

use serde_json::value::RawValue;

use crate::call::TASK_META_KEY;
use crate::mcp::jsonrpc::{Message, Payload};

/// `text` without the task in any message's `params._meta` (a `_meta` left empty is dropped
/// too); `None` when no message carries one, so the bytes go as received.
pub fn sans_task(text: &[u8], payload: &Payload<'_>) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(text).ok()?;
    // The key as written, or spelt with escapes (`portcullis\/t\u0061sk` is the same key): a
    // body with neither is forwarded without a second look (the allow path's usual case).
    if !text.contains(TASK_META_KEY) && !text.contains('\\') {
        return None;
    }
    let messages: &[Message<'_>] = match payload {
        Payload::Single(m) => std::slice::from_ref(m),
        Payload::Batch(v) => v,
    };
    let mut cuts: Vec<(usize, usize, String)> = messages.iter().filter_map(|m| cut(text, m)).collect();
    if cuts.is_empty() {
        return None;
    }
    cuts.sort_by_key(|c| c.0);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, new) in cuts {
        if start < at {
            return None;
        }
        out.push_str(&text[at..start]);
        out.push_str(&new);
        at = end;
    }
    out.push_str(&text[at..]);
    Some(out.into_bytes())
}

/// `params` without the task in its `_meta` (a `_meta` left empty is dropped): for a request the
/// gate rebuilds rather than forwards as received.
pub fn sans_task_value(mut params: serde_json::Value) -> serde_json::Value {
    if let Some(object) = params.as_object_mut() {
        let emptied = match object.get_mut("_meta").and_then(serde_json::Value::as_object_mut) {
            Some(meta) => {
                meta.remove(TASK_META_KEY);
                meta.is_empty()
            }
            None => false,
        };
        if emptied {
            object.remove("_meta");
        }
    }
    params
}

/// Where one message's params sit in `text` and what replaces them: the same members, each value
/// byte for byte as received (arguments are never re-encoded), without the task.
fn cut(text: &str, m: &Message<'_>) -> Option<(usize, usize, String)> {
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow, default, rename = "_meta")]
        meta: Option<&'a RawValue>,
    }
    let params = m.params?;
    let meta = serde_json::from_str::<Params<'_>>(params.get()).ok()?.meta?;
    if !meta.get().contains(TASK_META_KEY) && !meta.get().contains('\\') {
        return None;
    }
    // Members by their decoded names, values as raw text.
    type Members = std::collections::BTreeMap<String, Box<RawValue>>;
    let mut inner: Members = serde_json::from_str(meta.get()).ok()?;
    inner.remove(TASK_META_KEY)?;
    let mut whole: Members = serde_json::from_str(params.get()).ok()?;
    match inner.is_empty() {
        true => whole.remove("_meta"),
        false => whole.insert("_meta".into(), serde_json::value::to_raw_value(&inner).ok()?),
    };
    let start = (params.get().as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let end = start.checked_add(params.get().len())?;
    (text.get(start..end)? == params.get())
        .then(|| serde_json::to_string(&whole).ok().map(|new| (start, end, new)))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::jsonrpc::parse;

    #[test]
    fn a_rebuilt_request_loses_the_task_and_keeps_the_rest_of_its_meta() {
        let params =
            serde_json::json!({"name": "send", "_meta": {"portcullis/task": "pay rent", "progressToken": 7}});
        assert_eq!(
            sans_task_value(params),
            serde_json::json!({"name": "send", "_meta": {"progressToken": 7}})
        );
        let only = serde_json::json!({"name": "send", "_meta": {"portcullis/task": "t"}});
        assert_eq!(sans_task_value(only), serde_json::json!({"name": "send"}));
    }

    fn stripped(text: &str) -> Option<String> {
        let payload = parse(text.as_bytes()).unwrap();
        sans_task(text.as_bytes(), &payload).map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn the_task_never_reaches_the_server_and_nothing_else_changes() {
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send","arguments":{"to":"x"},"_meta":{"portcullis/task":"pay rent","progressToken":7}}}"#;
        let out = stripped(call).unwrap();
        assert!(!out.contains("pay rent") && !out.contains("portcullis/task"), "{out}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["params"]["_meta"]["progressToken"], 7);
        assert_eq!(v["params"]["arguments"]["to"], "x");
        assert!(out.starts_with(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"#), "{out}");
        // Arguments go byte for byte: a number no f64 holds, spacing and key order as sent.
        let exact = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"a","arguments":{"z": 123456789012345678901234567890, "a": 1.50},"_meta":{"portcullis/task":"t"}}}"#;
        let out = stripped(exact).unwrap();
        assert!(out.contains(r#""arguments":{"z": 123456789012345678901234567890, "a": 1.50}"#), "{out}");
        let only = r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"memo://a","_meta":{"portcullis/task":"t"}}}"#;
        let v: serde_json::Value = serde_json::from_str(&stripped(only).unwrap()).unwrap();
        assert!(v["params"].get("_meta").is_none(), "an emptied _meta goes too: {v}");
        let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"portcullis/task":"one"}}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b","_meta":{"portcullis/task":"two"}}}]"#;
        let out = stripped(batch).unwrap();
        assert!(!out.contains("one") && !out.contains("two") && out.contains(r#""name":"b""#), "{out}");
        let escaped = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a","_meta":{"portcullis\/t\u0061sk":"secret plan"}}}"#;
        assert!(!stripped(escaped).unwrap().contains("secret plan"), "an escaped spelling of the key");
        for untouched in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":1}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"note":"portcullis/task"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ] {
            assert_eq!(stripped(untouched), None, "{untouched}");
        }
    }
}
