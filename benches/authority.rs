//! What the authority evaluator costs a call on the allow path (issue 26.1): the guard's whole
//! Layer 1 decision with `evaluator: local` (nothing is done per call) against `cedar` with a
//! small and a large policy file, for a generic tool with arguments and a file tool (its path
//! placed by the jail). The difference is Cedar's per-call cost: the request and context built
//! once, one `is_authorized`.
//!
//! `cargo bench --bench authority`.

use std::io::Write;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};

use portcullis::call::ToolCall;
use portcullis::config::Config;
use portcullis::gate::{Guard, Outcome};
use portcullis::identity::Agent;
use portcullis::mcp::era::Era;
use portcullis::telemetry::Metrics;

const SMALL: &str = r#"
@id("replicas") forbid (principal, action, resource == Portcullis::Tool::"mcp__k8s__scale")
  when { context.args has replicas && context.args.replicas > 100 };
@id("secret") forbid (principal, action == Portcullis::Action::"read", resource)
  when { context.path like "/srv/secret/*" };
@id("depth") forbid (principal, action, resource) when { context.depth > 2 };
"#;

/// `n` policies on other tools, then the small file's.
fn large(n: usize) -> String {
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&format!(
            "@id(\"p{i}\") forbid (principal, action, resource == Portcullis::Tool::\"mcp__t{i}__x\") when {{ context.args has n && context.args.n > {i} }};\n"
        ));
    }
    text + SMALL
}

fn guard(authority: Option<&str>, dir: &std::path::Path) -> Guard {
    let mut yaml = format!(
        "agents: {{ dev: {{ token_env: UNREAD_BENCH_DEV }} }}\njail: {{ root: {:?} }}\n\
         tools: [{{ match: mcp__fs__read, kind: file, path: /path, access: read }}]\n\
         permissions: {{ allow: [\"mcp__*\", \"Read(**)\"] }}\n",
        dir
    );
    if let Some(text) = authority {
        let file = dir.join(format!("p{}.cedar", text.len()));
        std::fs::File::create(&file).unwrap().write_all(text.as_bytes()).unwrap();
        yaml.push_str(&format!("authority: {{ evaluator: cedar, policy: {file:?} }}\n"));
    }
    let c = Config::parse(&yaml, "bench").unwrap_or_else(|e| panic!("{e}"));
    Guard::new(&c.policy, Arc::new(Metrics::new())).unwrap()
}

fn call(up: &str, tool: &str, args: &str) -> ToolCall {
    let raw = serde_json::value::RawValue::from_string(args.to_owned()).unwrap();
    ToolCall::mcp(up.into(), tool, Some(&raw), Era::Legacy)
        .with_agent(Some(Arc::new(Agent::configured("dev".into()))))
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    let scale = call(
        "k8s",
        "scale",
        r#"{"deployment":"web","namespace":"prod","replicas":3,"labels":{"team":"a","tier":"front"}}"#,
    );
    // Two values an upstream may read as another type (`"7"` as 7, `true` as 1): four readings.
    let coerced = call("k8s", "scale", r#"{"deployment":"web","replicas":3,"zone":"7","force":true}"#);
    let read = call("fs", "read", &format!("{{\"path\":{:?}}}", dir.path().join("src/main.rs")));
    let guards = [
        ("local", guard(None, dir.path())),
        ("cedar, 3 policies", guard(Some(SMALL), dir.path())),
        ("cedar, 203 policies", guard(Some(&large(200)), dir.path())),
    ];
    let mut group = c.benchmark_group("authority");
    for (name, g) in &guards {
        for (what, call) in
            [("generic tool", &scale), ("generic tool, 4 readings", &coerced), ("file tool", &read)]
        {
            assert!(matches!(g.pre(call), Outcome::Forward), "{name}: {what} is allowed");
            group.bench_function(format!("{name}: {what}"), |b| b.iter(|| g.pre(std::hint::black_box(call))));
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
