//! What the shared state store costs the calls that touch it (issue 14's budget: ≤ 0.3 ms p50 on
//! loopback), against a real `redis-server` this bench starts on a loopback port, with a bare
//! `PING` through the same connection as the baseline measured in the same run.
//!
//! `cargo bench --bench state` (needs `redis-server` on PATH). Prints p50 / p99 / max in µs and
//! each p50 over the PING's.

use std::sync::Arc;
use std::time::{Duration, Instant};

use portcullis::approval::{Approvals, Ask, Settings, Source};
use portcullis::config::state::{Backend, StateSettings};
use portcullis::state::{RedisStore, Store};
use portcullis::telemetry::Metrics;

const N: usize = 2_000;

fn percentiles(mut v: Vec<Duration>) -> (f64, f64, f64) {
    v.sort_unstable();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    (us(v[v.len() / 2]), us(v[v.len() * 99 / 100]), us(*v.last().unwrap()))
}

fn ask(n: usize) -> Ask {
    Ask {
        tool: "mcp__bench__run".into(),
        args: format!("{{\"n\":{n}}}"),
        reason: "bench".into(),
        source: Source::Floor,
        session: Some("bench-session".into()),
        definition: 0,
        agent: None,
    }
}

async fn time<F, Fut>(mut f: F) -> Vec<Duration>
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut out = Vec::with_capacity(N);
    for i in 0..N {
        let t = Instant::now();
        f(i).await;
        out.push(t.elapsed());
    }
    out
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = std::process::Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("redis-server on PATH");
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let settings = StateSettings {
        backend: Backend::Redis { url_env: "UNUSED: the URL is passed in".into() },
        prefix: "bench:".into(),
        timeout: Duration::from_millis(500),
    };
    let metrics = Arc::new(Metrics::new());
    let redis = RedisStore::open(&format!("redis://127.0.0.1:{port}/0"), &settings, metrics.clone()).unwrap();
    let store = Store::redis(redis.clone());
    while redis.run::<String>(&redis::cmd("PING")).await.is_err() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let key = b"0123456789abcdef0123456789abcdef";
    let settings = Settings { channel: portcullis::approval::Channel::Api, ..Settings::default() };
    let (a, b) = (
        Approvals::new(&settings, true, metrics.clone()).with_store(&store, Some(key)),
        Approvals::new(&settings, true, metrics.clone()).with_store(&store, Some(key)),
    );

    let ping = time(|_| {
        let r = redis.clone();
        async move {
            r.run::<String>(&redis::cmd("PING")).await.unwrap();
        }
    })
    .await;
    // A waiver granted at replica A, checked at replica B for the first time (a store hit).
    for i in 0..N {
        a.waivers.arm(&ask(i));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let waiver = time(|i| {
        let b = &b;
        async move {
            assert!(b.waivers.covers(&ask(i)).await, "the waiver armed at A is seen at B");
        }
    })
    .await;
    // A miss (nothing armed): what an ask pays before it is routed to a human.
    let miss = time(|i| {
        let b = &b;
        async move {
            assert!(!b.waivers.covers(&ask(N + i)).await);
        }
    })
    .await;
    // A modern-era state's single use: SET NX PXAT, as `Seals` spends it.
    let nonce = time(|i| {
        let r = redis.clone();
        async move {
            let set = redis::cmd("SET")
                .arg(format!("bench:mrtr:{i}"))
                .arg(1)
                .arg("NX")
                .arg("PXAT")
                .arg(4_000_000_000_000u64)
                .to_owned();
            r.run::<Option<String>>(&set).await.unwrap();
        }
    })
    .await;
    // Parking an ask fleet-wide (id, record, index), and its withdrawal.
    let fleet = a.fleet.clone().unwrap();
    let park = time(|i| {
        let fleet = fleet.clone();
        async move {
            let parked = fleet.park(ask(2 * N + i)).await.unwrap().expect("room");
            drop(parked);
        }
    })
    .await;
    // A flag check: in memory on every call, never a round trip.
    let flag = time(|i| {
        let a = &a;
        async move {
            std::hint::black_box(a.flagged(Some(&format!("s{}", i % 16)), None));
        }
    })
    .await;

    let (base, _, _) = percentiles(ping.clone());
    println!("| operation | p50 µs | p99 µs | max µs | p50 / PING |");
    println!("|---|---:|---:|---:|---:|");
    for (name, v) in [
        ("PING (baseline)", ping),
        ("waiver check, granted at another replica", waiver),
        ("waiver check, miss", miss),
        ("approval state spent (SET NX PXAT)", nonce),
        ("ask parked fleet-wide (INCR, SET, SADD)", park),
        ("flag check (memory)", flag),
    ] {
        let (p50, p99, max) = percentiles(v);
        println!("| {name} | {p50:.1} | {p99:.1} | {max:.1} | {:.2}× |", p50 / base);
    }
    let _ = server.kill();
    let _ = server.wait();
}
