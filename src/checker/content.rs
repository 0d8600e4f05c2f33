//! What the checker sees of a call, and how a verdict is written back into a result.
//!
//! Arguments: a shell tool's command line as is; anything else as canonical JSON (sorted keys, so
//! reordering cannot change a cache key or dodge a verdict). Results: the text of the `content[]`
//! blocks and embedded resources, plus `structuredContent` unless a text block already carries it;
//! anything without `content[]` (an error object, a plain HTTP tool's JSON) as canonical JSON.
//! The local detectors get the *decoded* strings (`scan`), since escaped JSON hides control
//! characters from them.

use serde_json::{Map, Value};

use crate::rules::kinds::{canonical_json, KindSpec};

/// Marks content the checker rewrote.
pub const MARK: &str = "[guardrail: redacted unsafe content]";

/// The text a check judges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Content {
    /// What the model is shown (inside the fence).
    pub model: String,
    /// Every decoded string, newline-joined, for the local detectors.
    pub scan: String,
}

impl Content {
    pub fn len(&self) -> usize {
        self.model.len().max(self.scan.len())
    }

    pub fn is_empty(&self) -> bool {
        self.model.trim().is_empty() && self.scan.trim().is_empty()
    }
}

fn strings(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        Value::Object(m) => m.iter().for_each(|(k, v)| {
            // Keys can carry text too (`{"ignore previous instructions": 1}`).
            if k.len() > 16 {
                out.push_str(k);
                out.push('\n');
            }
            strings(v, out)
        }),
        _ => {}
    }
}

/// A call's arguments as the checker sees them.
pub fn of_args(kind: &KindSpec, args: &Value) -> Content {
    if let KindSpec::Shell { command, .. } = kind {
        if let Some(c) = args.pointer(command).and_then(Value::as_str) {
            return Content { model: c.to_owned(), scan: c.to_owned() };
        }
    }
    let mut scan = String::new();
    strings(args, &mut scan);
    Content { model: canonical_json(args), scan }
}

/// A result (or error object) as the checker sees it.
pub fn of_result(result: &Value) -> Content {
    let mut scan = String::new();
    strings(result, &mut scan);
    let Some(blocks) = result.get("content").and_then(Value::as_array) else {
        return Content { model: canonical_json(result), scan };
    };
    let mut model = String::new();
    let mut texts: Vec<&str> = Vec::new();
    for b in blocks {
        let text = b.get("text").or_else(|| b.pointer("/resource/text")).and_then(Value::as_str);
        if let Some(t) = text {
            texts.push(t);
        }
    }
    for t in &texts {
        if !model.is_empty() {
            model.push_str("\n\n");
        }
        model.push_str(t);
    }
    if let Some(sc) = result.get("structuredContent").filter(|v| !v.is_null()) {
        // Servers usually serialise structuredContent into a text block too; judge it once.
        let duplicate = texts.iter().any(|t| serde_json::from_str::<Value>(t).is_ok_and(|v| &v == sc));
        if !duplicate {
            if !model.is_empty() {
                model.push_str("\n\n");
            }
            model.push_str(&canonical_json(sc));
        }
    }
    Content { model, scan }
}

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
    let first = result
        .get_mut("content")
        .and_then(Value::as_array_mut)
        .and_then(|a| a.iter_mut().find_map(|b| b.get_mut("text")));
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shell_arguments_are_the_command_and_others_canonical_json() {
        let sh = KindSpec::Shell { command: "/command".into(), allowlist: None };
        let c = of_args(&sh, &json!({"command": "git push", "cwd": "/x"}));
        assert_eq!(c.model, "git push");
        let c = of_args(&KindSpec::Generic, &json!({"b": "two", "a": "one\u{1b}[2J"}));
        assert_eq!(c.model, r#"{"a":"one\u001b[2J","b":"two"}"#);
        assert!(c.scan.contains("one\u{1b}[2J"), "detectors see decoded text");
    }

    #[test]
    fn results_are_their_text_once() {
        let r = json!({"content":[{"type":"text","text":"{\"k\":1}"},{"type":"resource","resource":{"uri":"f","text":"body"}}],
                       "structuredContent":{"k":1}});
        assert_eq!(of_result(&r).model, "{\"k\":1}\n\nbody");
        let r = json!({"content":[{"type":"text","text":"summary"}], "structuredContent":{"k":"v"}});
        assert_eq!(of_result(&r).model, "summary\n\n{\"k\":\"v\"}");
        let e = json!({"code": 1, "message": "boom"});
        assert_eq!(of_result(&e).model, r#"{"code":1,"message":"boom"}"#);
    }

    #[test]
    fn a_rewrite_replaces_every_copy() {
        let mut r = json!({"content":[{"type":"text","text":"evil"},{"type":"image","data":"AAAA"}],
                           "structuredContent":{"page":"evil"},"isError":false});
        apply_rewrite(&mut r, "clean");
        assert_eq!(r["content"], json!([{"type":"text","text":format!("{MARK}\nclean")}]));
        assert!(r.get("structuredContent").is_none());
        assert_eq!(r["isError"], false);
        let mut r = json!({"content":[],"structuredContent":{"page":"evil"}});
        apply_rewrite(&mut r, r#"{"page":"clean"}"#);
        assert_eq!(r["structuredContent"], json!({"page":"clean"}));
        assert!(!r.to_string().contains("evil"));
    }
}
