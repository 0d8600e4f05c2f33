//! What a per-principal `tools/list` costs the proxy: the post gate's whole inspection of one
//! list answer (parse, screen, filter, splice) for a 40-tool list, as today (no rule can deny a
//! tool by name: the list is parsed for its definitions and released as it came), and filtered for
//! an agent with its answers cached (a hit) or judged afresh (a miss: the first list after a
//! reload). Run: `cargo bench --bench visibility`.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use futures_util::FutureExt;
use portcullis::config::Config;
use portcullis::gate::post::{inspect, Envelope, Lister, Release, Watch, Watched};
use portcullis::gate::Guard;
use portcullis::identity::Agent;
use portcullis::mcp::jsonrpc::IdKey;
use portcullis::telemetry::Metrics;
use serde_json::{json, Value};

/// The same rules either way, but only the second can deny a tool by name (for `dev`).
const TODAY: &str = r#"
permissions:
  allow: ["mcp__*"]
  ask: ["mcp__up__tool_3", "Shell(git push:*)"]
  deny: ["mcp__up__tool_5(secret)", "Shell(rm:*)", "File(/etc/**)"]
agents:
  dev: { token_env: DEV_TOKEN }
"#;
const FILTERED: &str = r#"
permissions:
  allow: ["mcp__*"]
  ask: ["mcp__up__tool_3", "Shell(git push:*)"]
  deny: ["mcp__up__tool_5(secret)", "Shell(rm:*)", "File(/etc/**)"]
agents:
  dev: { token_env: DEV_TOKEN, permissions: { deny: ["mcp__up__tool_1", "mcp__up__tool_2*"] } }
"#;

/// A JSON-RPC answer carrying 40 tools, each with a description and an input schema.
fn answer() -> String {
    let tools: Vec<Value> = (0..40)
        .map(|i| {
            json!({
                "name": format!("tool_{i}"),
                "description": format!("Tool number {i}: does one thing to a file or a record, and says what it did."),
                "inputSchema": {"type": "object", "properties": {
                    "path": {"type": "string", "description": "Where."},
                    "count": {"type": "integer", "minimum": 0}
                }, "required": ["path"]}
            })
        })
        .collect();
    json!({"jsonrpc": "2.0", "id": 7, "result": {"tools": tools, "nextCursor": "page-2"}}).to_string()
}

fn guard(yaml: &str) -> Guard {
    let c = Config::parse(yaml, "bench").unwrap_or_else(|e| panic!("{e}"));
    Guard::new(&c.policy, Arc::new(Metrics::new())).unwrap()
}

fn watched(lister: &Lister) -> Watched {
    let id = serde_json::value::RawValue::from_string("7".into()).unwrap();
    Watched::from_iter([(IdKey::new(&id), Watch::List(lister.clone()))])
}

/// One list answer through the post gate; how many tools the agent is shown.
fn inspect_list(text: &str, lister: &Lister, guard: &Guard) -> Release {
    let mut w = watched(lister);
    let answer = Envelope::parse(text);
    inspect(&answer, &mut w, guard).now_or_never().expect("a list waits on nothing").release
}

fn bench(c: &mut Criterion) {
    let text = answer();
    let lister = Lister::new("up".into(), Some(Arc::new(Agent::configured("dev".into()))));
    let today = guard(TODAY);
    let filtered = guard(FILTERED);
    assert!(!today.lists_filtered(lister.agent.as_deref()));
    assert_eq!(inspect_list(&text, &lister, &today), Release::Unchanged);
    let Release::Rewritten(shown) = inspect_list(&text, &lister, &filtered) else { panic!("tools withheld") };
    assert_eq!(
        serde_json::from_str::<Value>(&shown).unwrap()["result"]["tools"].as_array().unwrap().len(),
        28
    );
    let policy = Config::parse(FILTERED, "bench").unwrap().policy;

    let mut g = c.benchmark_group("tools_list_40");
    g.bench_function("today_unfiltered", |b| b.iter(|| inspect_list(&text, &lister, &today)));
    g.bench_function("filtered_cache_hit", |b| b.iter(|| inspect_list(&text, &lister, &filtered)));
    g.bench_function("filtered_cache_miss", |b| {
        // A reloaded guard has no answers yet (the setup is not timed).
        b.iter_batched(
            || filtered.reload(&policy).unwrap(),
            |fresh| inspect_list(&text, &lister, &fresh),
            BatchSize::SmallInput,
        )
    });
    g.finish();

    let result: Value = serde_json::from_str::<Value>(&text).unwrap()["result"].clone();
    let mut g = c.benchmark_group("shown_40");
    g.bench_function("cache_hit", |b| b.iter(|| filtered.shown(&lister, &result)));
    g.bench_function("cache_miss", |b| {
        b.iter_batched(
            || filtered.reload(&policy).unwrap(),
            |fresh| fresh.shown(&lister, &result),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
