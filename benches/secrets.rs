//! What `secrets:` costs (issue 27.3): the post phase on a typical tool result and the pre-call
//! refusal check on a typical call, with no secrets configured, with three held (no hit), and
//! with a hit; plus the forward step's substitution.
//!
//! `cargo bench --bench secrets`.

// The held values come from the environment, as in production; they are set once, in `main`'s
// thread, before criterion starts any other.
#![allow(clippy::disallowed_methods)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::value::RawValue;

use portcullis::call::ToolCall;
use portcullis::config::Config;
use portcullis::gate::Guard;
use portcullis::mcp::era::Era;
use portcullis::telemetry::Metrics;

const SECRETS: &str = "secrets:\n  - { name: github, env: BENCH_GH, to: [\"mcp__github__*\"] }\n  - { name: stripe, env: BENCH_ST, to: [] }\n  - { name: aws, env: BENCH_AWS, to: [] }\n";

fn guard(yaml: &str) -> Guard {
    std::env::set_var("BENCH_GH", "ghp_R7q2ZkX9vLw3Tn8YbC5mPd1HsGf6Ja4Ue0Qx");
    std::env::set_var("BENCH_ST", "sk_live_51Hq8ZkX9vLw3Tn8YbC5mPd1");
    std::env::set_var("BENCH_AWS", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
    let config = Config::parse(yaml, "bench").unwrap_or_else(|e| panic!("{e}"));
    Guard::new(&config.policy, std::sync::Arc::new(Metrics::new())).expect("no checker")
}

/// A 4 KiB text result, as a search or file read returns.
fn result(with_value: bool) -> serde_json::Value {
    let mut text = "lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(72);
    if with_value {
        text.push_str("token: ghp_R7q2ZkX9vLw3Tn8YbC5mPd1HsGf6Ja4Ue0Qx");
    }
    serde_json::json!({ "content": [{ "type": "text", "text": text }], "isError": false })
}

fn call(args: &str) -> ToolCall {
    let raw = RawValue::from_string(args.to_owned()).unwrap();
    ToolCall::mcp("github".into(), "create_issue", Some(&raw), Era::Legacy)
}

fn bench(c: &mut Criterion) {
    let none = guard("");
    let held = guard(SECRETS);
    let plain = result(false);
    let hit = result(true);
    let mut g = c.benchmark_group("secrets_post");
    for (name, guard, r) in
        [("none", &none, &plain), ("held_no_hit", &held, &plain), ("held_hit", &held, &hit)]
    {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut v = r.clone();
                black_box(guard.post(&call("{}"), &mut v))
            })
        });
    }
    g.finish();

    let args = r#"{"owner":"acme","repo":"widgets","title":"Crash on start","body":"Steps: run it. Expected: no crash. Seen: a crash with a long enough description to be typical of an issue body.","auth":"portcullis:secret:github"}"#;
    let clean = call(&args.replace("portcullis:secret:github", "none"));
    let sentinel = call(args);
    let mut g = c.benchmark_group("secrets_pre");
    g.bench_function("none", |b| b.iter(|| black_box(none.pre(&clean))));
    g.bench_function("held_no_hit", |b| b.iter(|| black_box(held.pre(&clean))));
    g.bench_function("held_sentinel_allowed", |b| b.iter(|| black_box(held.pre(&sentinel))));
    let h = held.secrets().expect("held");
    g.bench_function("unmask_args", |b| b.iter(|| black_box(h.unmask_args(&sentinel, held.kinds(), args))));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
