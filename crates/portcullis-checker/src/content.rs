//! What the checker sees of a call, and how a verdict is written back into a result.
//!
//! Arguments: a shell tool's command line as is; anything else as canonical JSON (sorted keys, so
//! reordering cannot change a cache key or dodge a verdict). Results: everything a client shows
//! or a model reads — the text of the `content[]` blocks and embedded resources, a resource
//! `blob` whose bytes are text, a `resource_link`'s title, name, description and URI, every
//! block's annotations and `_meta`, the result's own `_meta` and unknown keys, and
//! `structuredContent` unless a text block carries exactly the same value; anything without
//! `content[]` (an error object, a plain HTTP tool's JSON) as canonical JSON.
//! The local detectors get the *decoded* strings (`scan`), since escaped JSON hides control
//! characters from them.

use serde_json::{Map, Value};

use portcullis_rules::kinds::{canonical_json, KindSpec};

mod blob;
mod rewrite;
#[cfg(test)]
mod tests;

pub use blob::{blob_text, rewrite_text_blobs};
pub use rewrite::{apply_rewrite, mark, rewrite_strings};

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
    let view = as_content(result);
    let result = view.as_ref().unwrap_or(result);
    let mut scan = String::new();
    strings(result, &mut scan);
    let Some(map) = result.as_object().filter(|m| m.get("content").is_some_and(Value::is_array)) else {
        return Content { model: canonical_json(result), scan };
    };
    let mut parts: Vec<String> = Vec::new();
    let mut texts: Vec<&str> = Vec::new();
    for b in map["content"].as_array().into_iter().flatten() {
        if let Some(t) = b.get("text").and_then(Value::as_str) {
            texts.push(t);
        }
        block(b, &mut parts, &mut scan);
    }
    if let Some(sc) = map.get("structuredContent").filter(|v| !v.is_null()) {
        // Servers usually serialise structuredContent into a text block too. Judging it once is
        // sound only because the test is equality: a text block that parses to the very same
        // value is the same data (and is judged verbatim above); anything else is judged too.
        let duplicate = texts.iter().any(|t| serde_json::from_str::<Value>(t).is_ok_and(|v| &v == sc));
        if !duplicate {
            parts.push(canonical_json(sc));
        }
    }
    // `_meta` and any key a hostile server adds: some clients hand the model the whole result.
    let rest: Map<String, Value> = map
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "content" | "structuredContent" | "isError"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !rest.is_empty() {
        parts.push(canonical_json(&Value::Object(rest)));
    }
    Content { model: parts.join("\n\n"), scan }
}

/// A result of another request a client shows, in a tool result's shape, so it is judged block
/// by block: a `resources/read` result's `contents[]` as embedded resources (a text `blob`
/// decoded), a `prompts/get` result's `messages[].content` as its blocks (each message's role
/// and other keys, and the result's other keys, beside them). `None`: judged as it is.
fn as_content(result: &Value) -> Option<Value> {
    let map = result.as_object().filter(|m| !m.contains_key("content"))?;
    let mut rest = map.clone();
    let blocks: Vec<Value> = match (rest.remove("contents"), rest.remove("messages")) {
        (Some(Value::Array(contents)), None) => {
            contents.into_iter().map(|r| serde_json::json!({ "type": "resource", "resource": r })).collect()
        }
        (None, Some(Value::Array(messages))) => {
            let mut blocks = Vec::new();
            let mut others = Vec::new();
            for m in messages {
                let Value::Object(mut m) = m else {
                    others.push(m);
                    continue;
                };
                match m.remove("content") {
                    Some(Value::Array(a)) => blocks.extend(a),
                    Some(b) => blocks.push(b),
                    None => {}
                }
                others.push(Value::Object(m));
            }
            rest.insert("messages".into(), Value::Array(others));
            blocks
        }
        _ => return None,
    };
    rest.insert("content".into(), Value::Array(blocks));
    Some(Value::Object(rest))
}

/// One `content[]` block: its text as text, everything else a client can show (a link's name,
/// title and description, annotations, `_meta`, fields of no known type) as canonical JSON.
/// Image and audio `data` are not text and are not shown to the model; a resource `blob` is
/// decoded when [`blob_text`] says a client would read it as text.
fn block(b: &Value, parts: &mut Vec<String>, scan: &mut String) {
    let Some(obj) = b.as_object() else {
        parts.push(canonical_json(b));
        return;
    };
    let mut rest = obj.clone();
    let kind = rest.remove("type");
    let take = |rest: &mut Map<String, Value>, key: &str, parts: &mut Vec<String>| {
        if let Some(Value::String(t)) = rest.get(key) {
            parts.push(t.clone());
            rest.remove(key);
        }
    };
    match kind.as_ref().and_then(Value::as_str) {
        Some("text") => take(&mut rest, "text", parts),
        Some("image" | "audio") => {
            rest.remove("data");
        }
        Some("resource_link") => {
            for key in ["title", "name", "description", "uri"] {
                take(&mut rest, key, parts);
            }
        }
        Some("resource") => {
            if let Some(Value::Object(r)) = rest.get_mut("resource") {
                if let Some(Value::String(t)) = r.remove("text") {
                    parts.push(t);
                }
                if let Some(Value::String(blob)) = r.get("blob") {
                    let mime = r.get("mimeType").and_then(Value::as_str);
                    if let Some(t) = blob_text(blob, mime) {
                        scan.push_str(&t);
                        scan.push('\n');
                        parts.push(t);
                    }
                    r.remove("blob");
                }
            }
        }
        _ => {
            // An unknown type: whatever a client does with it, the model sees all of it.
            if let Some(k) = kind {
                rest.insert("type".into(), k);
            }
        }
    }
    if !rest.is_empty() {
        parts.push(canonical_json(&Value::Object(rest)));
    }
}
