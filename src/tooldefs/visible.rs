//! Per-principal tool visibility: a `tools/list` answer shows each caller only the tools it may
//! call. A tool Layer 1 denies to this caller whatever the arguments (a deny naming it, a
//! readonly profile over a tool that never reads, a delegation's narrowing or its upstreams) is
//! taken out of the list; its calls are still refused, with the reason, by the pre gate.
//!
//! Why: a listed tool gets called. An agent shown tools it may never call keeps calling them, and
//! the refusals pile up until the repeated-denial breaker trips on a caller who did nothing wrong
//! but believe the list. Only a certain deny withholds ([`crate::rules::Engine::denies_by_name`]):
//! a tool whose fate depends on its arguments (`Shell(git push:*)`) or a human (an `ask`) stays.
//!
//! This module is the list surgery and the table of answers; the gate's guard asks the engine
//! (`Guard::shown`). Answers are kept per (engine, tool name) for as long as the policy lives (the
//! guard holds the table, and a reload builds a new guard), so a list is judged once per caller,
//! not per request. The name is the whole question: Layer 1 reads nothing else of a definition
//! (the definition's digest keys the guardrail screen's verdict instead, [`super::screen`]).
//! Bounded: full, the table starts over. Nothing here waits: the stdio relay inspects lists on
//! their first poll.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// Answers kept, in all (engines × tools); the table starts over when full.
const MAX_JUDGED: usize = 16_384;

/// Layer 1's name-level answers under one policy: engine key → qualified tool → why it is
/// withheld (`None`: shown).
#[derive(Debug, Default)]
pub struct Judged {
    table: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    by_engine: HashMap<Arc<str>, HashMap<String, Option<Arc<str>>>>,
    len: usize,
}

/// What a list of `upstream` shows the caller whose engine is `engine`: `Some(result)` when some
/// tool is withheld from it, `None` when the result goes as it is. `denied` answers, for a
/// qualified tool name, why every call of it is denied (`None`: it may be called); it is asked
/// once per tool and engine. Every other member of the result (`nextCursor`, `_meta`) is kept, so
/// a paged list stays paged (a page may come out empty; its cursor still leads on).
pub fn filter(
    judged: &Judged,
    engine: &Arc<str>,
    upstream: &str,
    result: &Value,
    denied: impl Fn(&str) -> Option<String>,
) -> Option<Value> {
    let tools = result.get("tools").and_then(Value::as_array)?;
    let mut table = judged.table.lock().unwrap_or_else(|p| p.into_inner());
    let mut kept: Option<Vec<Value>> = None;
    for (i, tool) in tools.iter().enumerate() {
        // A tool without a name is the screen's to judge: nothing calls it by name.
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            if let Some(k) = kept.as_mut() {
                k.push(tool.clone());
            }
            continue;
        };
        let qualified = format!("mcp__{upstream}__{name}");
        let withheld = match table.by_engine.get(engine).and_then(|t| t.get(&qualified)) {
            Some(answer) => answer.clone(),
            None => {
                let answer: Option<Arc<str>> = denied(&qualified).map(Arc::from);
                table.remember(engine, qualified, answer.clone());
                answer
            }
        };
        match withheld {
            Some(why) => {
                tracing::debug!(upstream, tool = name, reason = %why, "withheld from a tool list");
                kept.get_or_insert_with(|| tools[..i].to_vec());
            }
            None => {
                if let Some(k) = kept.as_mut() {
                    k.push(tool.clone());
                }
            }
        }
    }
    kept.map(|k| with_tools(result, k))
}

/// The list with the operator's descriptions in place of the upstream's: `described` answers,
/// for a qualified tool name, what the caller reads. `Some` when a description changed.
pub fn describe<'a>(
    upstream: &str,
    result: &Value,
    described: impl Fn(&str) -> Option<&'a str>,
) -> Option<Value> {
    let tools = result.get("tools").and_then(Value::as_array)?;
    let mut out: Option<Vec<Value>> = None;
    for (i, tool) in tools.iter().enumerate() {
        let Some(name) = tool.get("name").and_then(Value::as_str) else { continue };
        let Some(text) = described(&format!("mcp__{upstream}__{name}")) else { continue };
        if tool.get("description").and_then(Value::as_str) == Some(text) || !tool.is_object() {
            continue;
        }
        let list = out.get_or_insert_with(|| tools.clone());
        list[i]["description"] = Value::String(text.to_owned());
    }
    out.map(|k| with_tools(result, k))
}

/// The list with no tool in it (for a caller nothing is allowed to), or `None` if it has none.
pub fn withhold_all(result: &Value) -> Option<Value> {
    let tools = result.get("tools").and_then(Value::as_array)?;
    (!tools.is_empty()).then(|| with_tools(result, Vec::new()))
}

/// `result` with `tools` in place of its own (its other members cloned, in their order; the old
/// tools are never copied).
fn with_tools(result: &Value, tools: Vec<Value>) -> Value {
    let Some(members) = result.as_object() else { return Value::Array(tools) };
    let mut tools = Some(Value::Array(tools));
    let out = members.iter().map(|(k, v)| match k.as_str() {
        "tools" => (k.clone(), tools.take().unwrap_or(Value::Null)),
        _ => (k.clone(), v.clone()),
    });
    Value::Object(out.collect())
}

impl Table {
    fn remember(&mut self, engine: &Arc<str>, qualified: String, answer: Option<Arc<str>>) {
        if self.len >= MAX_JUDGED {
            self.by_engine.clear();
            self.len = 0;
        }
        self.by_engine.entry(engine.clone()).or_default().insert(qualified, answer);
        self.len += 1;
    }
}

impl Judged {
    /// How many answers are kept.
    pub fn len(&self) -> usize {
        self.table.lock().unwrap_or_else(|p| p.into_inner()).len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn list(n: usize) -> Value {
        let tools: Vec<Value> = (0..n).map(|i| json!({"name": format!("t{i}")})).collect();
        json!({"tools": tools, "nextCursor": "c"})
    }

    #[test]
    fn each_tool_is_asked_about_once_per_engine() {
        let judged = Judged::default();
        let asked = std::cell::Cell::new(0);
        let odd = |q: &str| {
            asked.set(asked.get() + 1);
            q.ends_with(['1', '3']).then(|| format!("{q} is denied"))
        };
        let a: Arc<str> = "a".into();
        let out = filter(&judged, &a, "up", &list(4), odd).unwrap();
        assert_eq!(out, json!({"tools": [{"name": "t0"}, {"name": "t2"}], "nextCursor": "c"}));
        assert_eq!(filter(&judged, &a, "up", &list(4), odd), Some(out));
        assert_eq!(asked.get(), 4, "the second list is answered from the table");
        filter(&judged, &"b".into(), "up", &list(4), odd);
        assert_eq!((asked.get(), judged.len()), (8, 8), "another engine is asked again");
    }

    #[test]
    fn a_full_table_starts_over_and_still_answers() {
        let judged = Judged::default();
        let none = |_: &str| None;
        for e in 0..(MAX_JUDGED / 100 + 1) {
            assert!(filter(&judged, &e.to_string().into(), "up", &list(100), none).is_none());
        }
        let (len, asked) = (judged.len(), (MAX_JUDGED / 100 + 1) * 100);
        assert!(len > 0 && len <= MAX_JUDGED && len < asked, "{len} of {asked} kept");
    }

    #[test]
    fn the_operators_description_replaces_the_upstreams_and_nothing_else() {
        let result = json!({"tools": [{"name": "t0", "description": "up", "title": "T"}, {"name": "t1"}]});
        let ours = |q: &str| (q == "mcp__up__t0").then_some("ours");
        let out = describe("up", &result, ours).unwrap();
        assert_eq!(
            out,
            json!({"tools": [{"name": "t0", "description": "ours", "title": "T"}, {"name": "t1"}]})
        );
        assert_eq!(describe("up", &out, ours), None, "already so: nothing changes");
        assert_eq!(describe("other", &result, ours), None);
    }

    #[test]
    fn a_list_of_nothing_is_left_as_it_is() {
        assert_eq!(withhold_all(&json!({"tools": []})), None);
        assert_eq!(withhold_all(&json!({"x": 1})), None);
        assert_eq!(withhold_all(&list(2)), Some(json!({"tools": [], "nextCursor": "c"})));
    }
}
