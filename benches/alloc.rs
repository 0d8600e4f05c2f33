//! Allocations per allowed `tools/call` through the gate: `gate::pre::decide` on the request and
//! `gate::post::inspect` on its JSON response, pass-through (no checker), in a session with a
//! principal. A count, not a time: it does not move when the machine is busy, so a change to the
//! allow path can be judged on a shared machine. Run: `cargo bench --bench alloc`.

#![allow(unsafe_code)] // a global allocator is an `unsafe impl`; nothing else here is unsafe

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use futures_util::FutureExt;
use portcullis::approval::Approvals;
use portcullis::config::Config;
use portcullis::gate::post::inspect;
use portcullis::gate::pre::{decide, Context, Plan};
use portcullis::gate::Guard;
use portcullis::mcp::era::Era;
use portcullis::mcp::jsonrpc::parse;
use portcullis::telemetry::Metrics;

/// The system allocator, counting every allocation and reallocation.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const CONFIG: &str = "permissions: { allow: [\"mcp__up__*\"], deny: [mcp__up__rm] }\n";
const REQUEST: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/work/README.md","limit":4096}}}"#;
const RESPONSE: &str = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"portcullis: a guardrail proxy"}],"isError":false}}"#;

/// One allowed call, request and response; panics if it is not allowed and released unchanged.
fn one(cx: &Context<'_>, guard: &Guard) {
    let payload = parse(REQUEST.as_bytes()).expect("request parses");
    let decision = decide(&payload, cx, guard).now_or_never().expect("no pending check");
    let Plan::Forward(mut watched) = decision else { panic!("the call is allowed") };
    let inspection = inspect(&portcullis::gate::post::Envelope::parse(RESPONSE), &mut watched, guard)
        .now_or_never()
        .expect("no pending check");
    assert_eq!(inspection.release, portcullis::gate::post::Release::Unchanged);
}

fn main() {
    let config = Config::parse(CONFIG, "bench").expect("config");
    let metrics = Arc::new(Metrics::new());
    let guard = Guard::new(&config.policy, metrics.clone()).expect("guard");
    // Outcomes are counted as the proxy counts them: part of an allowed call's cost.
    let counter: portcullis::gate::tally::SharedCounter = metrics;
    let approvals = Approvals::headless();
    let upstream: Arc<str> = "up".into();
    for (label, session, principal) in [
        ("no session, no principal", None, None),
        ("session + principal", Some("session-1"), Some("Bearer token")),
    ] {
        let cx = Context {
            agent: None,
            upstream: &upstream,
            era: Era::Legacy,
            negotiated: None,
            session,
            approvals: &approvals,
            elicits: false,
            principal,
            counter: Some(&counter),
            explain: false,
            mode: portcullis::call::Mode::Act,
        };
        // Warm up: first-use tables, label handles, the flags table's first entries.
        for _ in 0..100 {
            one(&cx, &guard);
        }
        const N: u64 = 10_000;
        let (a0, b0) = (ALLOCS.load(Ordering::Relaxed), BYTES.load(Ordering::Relaxed));
        for _ in 0..N {
            one(&cx, &guard);
        }
        let (a1, b1) = (ALLOCS.load(Ordering::Relaxed), BYTES.load(Ordering::Relaxed));
        println!(
            "allowed tools/call, decide + inspect, {label}: {:.1} allocations, {:.0} bytes per call",
            (a1 - a0) as f64 / N as f64,
            (b1 - b0) as f64 / N as f64
        );
    }
}
