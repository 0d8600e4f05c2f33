//! Writing a verdict back into a result: the checker's rewrite in place of every copy, the mark,
//! and a string-by-string rewrite for local sanitizing.

use serde_json::{Map, Value};

use super::MARK;

/// Replaces a result's content with the checker's rewrite: every text block and embedded
/// resource goes (non-text blocks too: the checker judged none of them), one marked text block
/// carries the rewrite, and `structuredContent` becomes the rewrite if it is a JSON object, or is
/// removed — no copy of the original survives.
pub fn apply_rewrite(result: &mut Value, rewrite: &str) {
    let marked = format!("{MARK}\n{rewrite}");
    match result {
        Value::Object(map) if map.contains_key("content") => {
            map.insert("content".into(), serde_json::json!([{ "type": "text", "text": marked }]));
            if map.contains_key("structuredContent") {
                match serde_json::from_str::<Value>(rewrite) {
                    Ok(v @ Value::Object(_)) => {
                        map.insert("structuredContent".into(), v);
                    }
                    _ => {
                        map.remove("structuredContent");
                    }
                }
            }
        }
        // A resource read: one text resource (under the first one's URI) carries the rewrite.
        Value::Object(map) if map.get("contents").is_some_and(Value::is_array) => {
            let uri = map["contents"].get(0).and_then(|c| c.get("uri")).cloned().unwrap_or_default();
            map.insert(
                "contents".into(),
                serde_json::json!([{ "uri": uri, "mimeType": "text/plain", "text": marked }]),
            );
        }
        // A prompt: one user message carries the rewrite.
        Value::Object(map) if map.get("messages").is_some_and(Value::is_array) => {
            let text = serde_json::json!({ "type": "text", "text": marked });
            map.insert("messages".into(), serde_json::json!([{ "role": "user", "content": text }]));
            map.remove("description");
        }
        // An error object: its message is the rewrite, its data goes.
        Value::Object(map) if map.contains_key("code") && map.contains_key("message") => {
            map.insert("message".into(), Value::String(marked));
            map.remove("data");
        }
        other => *other = Value::String(marked),
    }
}

/// Puts [`MARK`] in front of the first text block (after a local rewrite in place).
pub fn mark(result: &mut Value) {
    // A tool result's first text block, a resource read's first text, a prompt's first message.
    let first = match result.get("content").is_some() {
        true => result
            .get_mut("content")
            .and_then(Value::as_array_mut)
            .and_then(|a| a.iter_mut().find_map(|b| b.get_mut("text"))),
        false => match result.get("contents").is_some() {
            true => result
                .get_mut("contents")
                .and_then(Value::as_array_mut)
                .and_then(|a| a.iter_mut().find_map(|b| b.get_mut("text"))),
            false => result
                .get_mut("messages")
                .and_then(Value::as_array_mut)
                .and_then(|a| a.iter_mut().find_map(|m| m.pointer_mut("/content/text"))),
        },
    };
    if let Some(Value::String(t)) = first {
        *t = format!("{MARK}\n{t}");
        return;
    }
    match result {
        Value::String(t) => *t = format!("{MARK}\n{t}"),
        Value::Object(map) => {
            if let Some(Value::String(m)) = map.get_mut("message") {
                *m = format!("{MARK}\n{m}");
            }
        }
        _ => {}
    }
}

/// Applies `f` to every string in `v` (keys included); stops and returns `false` as soon as `f`
/// does.
pub fn rewrite_strings(v: &mut Value, f: &mut dyn FnMut(&str) -> Option<Option<String>>) -> bool {
    match v {
        Value::String(s) => match f(s) {
            None => false,
            Some(Some(new)) => {
                *s = new;
                true
            }
            Some(None) => true,
        },
        Value::Array(a) => a.iter_mut().all(|v| rewrite_strings(v, f)),
        Value::Object(m) => {
            let old = std::mem::take(m);
            let mut out = Map::new();
            let mut ok = true;
            for (k, mut val) in old {
                let k = match f(&k) {
                    None => {
                        ok = false;
                        k
                    }
                    Some(Some(new)) => new,
                    Some(None) => k,
                };
                ok = ok && rewrite_strings(&mut val, f);
                out.insert(k, val);
            }
            *m = out;
            ok
        }
        _ => true,
    }
}
