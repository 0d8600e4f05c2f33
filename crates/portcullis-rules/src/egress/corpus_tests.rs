//! False positives of the defaults on the development corpora (`tests/corpus`): benign tool
//! calls, benign shell lines, and benign tool outputs forwarded through a sink. Prints the
//! figures (`cargo test -p portcullis-rules egress::corpus -- --nocapture`).

use std::path::PathBuf;

use serde_json::{json, Value};

use super::{Egress, Sink};
use crate::kinds::{KindSpec, ToolKinds};
use crate::{Effect, Engine, EngineParts, Posture};

fn corpus(file: &str) -> String {
    // `EGRESS_CORPUS` names another copy of the corpora (the shared development split).
    let dir = std::env::var_os("EGRESS_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus"));
    let path = dir.join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every tool a sink, `bash` a shell tool: the strictest reading of the defaults.
fn engine() -> Engine {
    let kinds = ToolKinds::new([("bash".to_owned(), KindSpec::bash("/command"))]);
    let parts = EngineParts { kinds, posture: Posture::Strict, ..EngineParts::default() };
    Engine::new(parts).with_egress(Egress { sinks: vec![Sink::new("sink__*", None)], ..Egress::default() })
}

/// (benign rows, refused as a sink, refused unmarked) with the refusals' reasons.
fn measure(rows: &[(String, Value)]) -> (usize, Vec<String>, Vec<String>) {
    let e = engine();
    let (mut as_sink, mut unmarked) = (Vec::new(), Vec::new());
    for (tool, args) in rows {
        let sink_name = if tool == "bash" { tool.clone() } else { format!("sink__{tool}") };
        if let Some(d) = e.egress_decision("", &sink_name, args).filter(|d| d.effect > Effect::Allow) {
            as_sink.push(d.reason);
        }
        // Unmarked: the same arguments to a tool nothing marks (a shell line as a generic tool's).
        let plain = if tool == "bash" { "run" } else { tool.as_str() };
        if let Some(d) = e.egress_decision("", plain, args).filter(|d| d.effect > Effect::Allow) {
            unmarked.push(d.reason);
        }
    }
    (rows.len(), as_sink, unmarked)
}

fn jsonl(file: &str, label: &str) -> Vec<Value> {
    corpus(file)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["label"] == label)
        .collect()
}

#[test]
fn the_defaults_refuse_no_benign_call_of_the_corpora() {
    let calls: Vec<(String, Value)> = jsonl("exfil.dev.jsonl", "benign")
        .into_iter()
        .chain(jsonl("exfil_shell.dev.jsonl", "benign"))
        .map(|v| (v["tool"].as_str().unwrap_or("").to_owned(), v["args"].clone()))
        .collect();
    let readonly: Vec<(String, Value)> = corpus("shell-readonly.dev.tsv")
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next())
        .map(|cmd| ("bash".to_owned(), json!({ "command": cmd.replace("\\n", "\n").replace("\\t", "\t") })))
        .collect();
    let outputs: Vec<(String, Value)> = jsonl("injection.dev.jsonl", "benign")
        .into_iter()
        .chain(jsonl("injection_bipia.dev.jsonl", "benign"))
        .map(|v| ("forward".to_owned(), json!({ "to": "me@example.com", "body": v["text"] })))
        .collect();
    for (name, rows) in
        [("benign tool calls", calls), ("shell lines", readonly), ("benign tool outputs forwarded", outputs)]
    {
        let (n, as_sink, unmarked) = measure(&rows);
        println!("{name}: {n} rows; refused as a sink {}, unmarked {}", as_sink.len(), unmarked.len());
        for r in as_sink.iter().chain(&unmarked) {
            println!("  {r}");
        }
        assert!(unmarked.is_empty(), "{name}: an unmarked tool is refused only metadata: {unmarked:?}");
        assert!(as_sink.len() * 100 <= n, "{name}: at most 1% refused: {as_sink:?}");
    }
}
