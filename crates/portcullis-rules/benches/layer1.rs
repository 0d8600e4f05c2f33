//! Layer 1 alone, per call: parse, effects, rules, floor — the issue-23 targets (a simple
//! command under 10 µs, one line of eight commands under 30 µs). Run:
//! `cargo bench -p portcullis-rules --bench layer1`. The same files run on an older commit for a
//! before/after (they use only the engine's public API of both).

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;

#[path = "common/layer1.rs"]
mod common;

fn bench(c: &mut Criterion) {
    let e = common::engine();
    for (name, line) in common::CASES {
        let args = json!({ "command": line });
        c.bench_function(name, |b| b.iter(|| e.decide("claude", "Bash", std::hint::black_box(&args))));
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
