//! The `tools/call` result: building refusals and rewriting content.

use serde_json::{Map, Value};

use super::era::Era;

/// A `CallToolResult` with `isError: true` and one text item, as a JSON object string.
///
/// A refusal is a *result*, not a JSON-RPC error: clients show it to the model, which can read
/// the reason and adapt, and the session lives on.
pub fn refusal(reason: &str, era: Era) -> String {
    refusal_value(reason, era).to_string()
}

/// [`refusal`] as a value, to put in place of a result.
pub fn refusal_value(reason: &str, era: Era) -> Value {
    let mut result = Map::new();
    result
        .insert("content".into(), Value::Array(vec![serde_json::json!({ "type": "text", "text": reason })]));
    result.insert("isError".into(), Value::Bool(true));
    if era == Era::Modern {
        // 2026-07-28 results carry their type; absent means "complete" but the schema requires it.
        result.insert("resultType".into(), Value::String("complete".into()));
    }
    Value::Object(result)
}

/// Replaces every occurrence of every needle in every string of `value` (object keys included),
/// so a secret cannot survive in `structuredContent`, a resource's text or an annotation.
/// Returns how many replacements were made.
pub fn replace_everywhere(value: &mut Value, needles: &[String], with: &str) -> usize {
    match value {
        Value::String(s) => replace_in(s, needles, with),
        Value::Array(items) => items.iter_mut().map(|v| replace_everywhere(v, needles, with)).sum(),
        Value::Object(map) => {
            let mut n = 0;
            let keys_hit = map.keys().any(|k| needles.iter().any(|x| k.contains(x.as_str())));
            if keys_hit {
                let old = std::mem::take(map);
                for (mut k, v) in old {
                    n += replace_in(&mut k, needles, with);
                    map.insert(k, v);
                }
            }
            n + map.values_mut().map(|v| replace_everywhere(v, needles, with)).sum::<usize>()
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

fn replace_in(s: &mut String, needles: &[String], with: &str) -> usize {
    let mut n = 0;
    for needle in needles {
        if needle.is_empty() || !s.contains(needle.as_str()) {
            continue;
        }
        n += s.matches(needle.as_str()).count();
        *s = s.replace(needle.as_str(), with);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refusals_are_error_results_and_carry_result_type_in_the_modern_era() {
        let legacy: Value = serde_json::from_str(&refusal("no", Era::Legacy)).unwrap();
        assert_eq!(legacy, json!({"content":[{"type":"text","text":"no"}],"isError":true}));
        let modern: Value = serde_json::from_str(&refusal("no", Era::Modern)).unwrap();
        assert_eq!(modern["resultType"], "complete");
    }

    #[test]
    fn replacement_reaches_every_copy() {
        let mut v = json!({
            "content": [{"type":"text","text":"key=S3CRET and S3CRET"},
                        {"type":"resource","resource":{"uri":"x","text":"S3CRET"}}],
            "structuredContent": {"token":"S3CRET","nested":[{"S3CRET-key": 1}]},
            "isError": false
        });
        let n = replace_everywhere(&mut v, &["S3CRET".into()], "[x]");
        assert_eq!(n, 5);
        assert!(!v.to_string().contains("S3CRET"));
        assert_eq!(v["structuredContent"]["nested"][0]["[x]-key"], 1);
    }

    #[test]
    fn empty_needles_change_nothing() {
        let mut v = json!({"a":"b"});
        assert_eq!(replace_everywhere(&mut v, &[String::new()], "x"), 0);
        assert_eq!(v, json!({"a":"b"}));
    }
}
