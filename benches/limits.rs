//! What a `limits.per_agent` check costs a call on the allow path (issue 25): the limiter alone,
//! with nothing configured, with entries that do not name the call, with each bound on this
//! replica's counters, with a crowd of wildcard entries, on the refusal path, and — when
//! `redis-server` is on PATH — with the windows shared through a real store on a loopback port.
//!
//! `cargo bench --bench limits`.

use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use futures_util::FutureExt;

use portcullis::call::ToolCall;
use portcullis::config::Config;
use portcullis::identity::Agent;
use portcullis::limits::Limiter;
use portcullis::mcp::era::Era;
use portcullis::telemetry::Metrics;

const BIG: u64 = 4_000_000_000;

fn limiter(entries: &str, store: Option<Arc<portcullis::state::RedisStore>>) -> Limiter {
    // `agent: "*"` counts the calling agent (`dev`) under its own name, as a named entry would.
    let yaml = format!("limits:\n  per_agent:\n{entries}");
    let config = Config::parse(&yaml, "bench").unwrap_or_else(|e| panic!("{e}"));
    Limiter::new(&config.limits.per_agent, store, Some(Arc::new(Metrics::new())))
}

fn call() -> ToolCall {
    ToolCall::mcp("github".into(), "create_issue", None, Era::Legacy)
        .with_agent(Some(Arc::new(Agent::configured("dev".into()))))
}

/// Admits on this replica's counters: nothing is awaited, so the future is ready at once.
fn admit_now(l: &Limiter, c: &ToolCall) -> bool {
    match l.admit(c).now_or_never() {
        Some(r) => r.is_ok(),
        None => unreachable!("a local check never waits"),
    }
}

fn bench(c: &mut Criterion) {
    let call = call();
    let cases: Vec<(&str, Limiter)> = vec![
        ("none configured", Limiter::default()),
        ("no entry names the call", limiter("    - { agent: \"*\", tool: \"mcp__fs__*\", per_minute: 5 }\n", None)),
        (
            "per_minute, local",
            limiter(&format!("    - {{ agent: \"*\", tool: \"mcp__github__*\", per_minute: {BIG} }}\n"), None),
        ),
        (
            "per_minute + per_day + concurrent, local",
            limiter(
                &format!(
                    "    - {{ agent: \"*\", tool: \"mcp__github__*\", per_minute: {BIG}, per_day: {BIG}, concurrent: 64 }}\n"
                ),
                None,
            ),
        ),
        (
            "8 wildcard entries, 2 match, local",
            limiter(
                &(0..6)
                    .map(|i| format!("    - {{ agent: \"*\", tool: \"mcp__other{i}__*\", per_minute: 5 }}\n"))
                    .chain([
                        format!("    - {{ agent: \"*\", tool: \"mcp__github__*\", per_minute: {BIG} }}\n"),
                        format!("    - {{ agent: \"*\", tool: \"*\", per_day: {BIG} }}\n"),
                    ])
                    .collect::<String>(),
                None,
            ),
        ),
    ];
    let mut g = c.benchmark_group("limits allow path");
    for (name, l) in &cases {
        assert!(admit_now(l, &call), "{name} admits");
        g.bench_function(*name, |b| b.iter(|| admit_now(std::hint::black_box(l), &call)));
    }
    g.finish();

    // A day's budget, not a minute's: the run must not cross the window's end.
    let refusing = limiter("    - { agent: \"*\", tool: \"mcp__github__*\", per_day: 1 }\n", None);
    admit_now(&refusing, &call);
    c.bench_function("limits refusal path (per_day, local)", |b| {
        b.iter(|| assert!(!admit_now(&refusing, &call)))
    });

    shared(c, &call);
}

/// The same check with the windows in a real `redis-server` (skipped without one on PATH).
fn shared(c: &mut Criterion, call: &ToolCall) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let Ok(mut server) = std::process::Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .stdout(std::process::Stdio::null())
        .spawn()
    else {
        eprintln!("redis-server is not on PATH: the shared case is skipped");
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let l = rt.block_on(async {
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let settings = portcullis::config::state::StateSettings {
            backend: portcullis::config::state::Backend::Redis { url_env: "UNUSED".into() },
            prefix: "bench:".into(),
            timeout: Duration::from_millis(500),
        };
        let redis = portcullis::state::RedisStore::open(
            &format!("redis://127.0.0.1:{port}/0"),
            &settings,
            Arc::new(Metrics::new()),
        )
        .unwrap();
        while !redis.up() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        limiter(
            &format!(
                "    - {{ agent: \"*\", tool: \"mcp__github__*\", per_minute: {BIG}, per_day: {BIG} }}\n"
            ),
            Some(redis),
        )
    });
    assert!(rt.block_on(l.admit(call)).is_ok());
    c.bench_function("limits allow path: per_minute + per_day, shared through redis", |b| {
        b.iter(|| rt.block_on(l.admit(call)).is_ok())
    });
    let _ = server.kill();
    let _ = server.wait();
}

criterion_group!(benches, bench);
criterion_main!(benches);
