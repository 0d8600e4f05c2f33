//! The heap given back after a load drains (issue 29): streams held open through the proxy to a
//! real upstream that keeps them open (scripts/sse-peers.py, as `scripts/bench-memory` uses),
//! then closed; the heap watcher must have trimmed the allocator once they drained, and not
//! before. Read on `/metrics`, never timed.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use super::support::*;

/// `scripts/sse-peers.py upstream` on a free port (killed on drop).
struct HoldingUpstream {
    child: Child,
    port: u16,
}

impl HoldingUpstream {
    fn start() -> HoldingUpstream {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/sse-peers.py");
        let mut child = Command::new("python3")
            .arg(script)
            .args(["upstream", "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| panic!("sse-peers printed {line:?}, not a port"));
        HoldingUpstream { child, port }
    }

    async fn open_streams(&self) -> u64 {
        let (_, _, body) = get(&format!("http://127.0.0.1:{}/stats", self.port), &[]).await;
        serde_json::from_str::<serde_json::Value>(&body).unwrap()["open"].as_u64().unwrap()
    }
}

impl Drop for HoldingUpstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The value of the series `name`, its labels (if any) spelled as `/metrics` prints them.
async fn metric(admin: std::net::SocketAddr, name: &str) -> Option<f64> {
    let (_, _, text) = get(&format!("http://{admin}/metrics"), &[]).await;
    text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

const STREAMS: usize = 12;

#[tokio::test]
async fn closing_held_streams_trims_the_heap_once_they_drain_and_not_before() {
    let up = HoldingUpstream::start();
    let p = proxy(&config(&[("bench", &format!("http://127.0.0.1:{}/mcp", up.port))], ALLOW_ALL)).await;
    let url = proxy_url(&p, "bench");
    let hold = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hold","arguments":{}}}"#;
    let mut streams = Vec::new();
    for i in 0..STREAMS {
        let session = format!("heap-{i}");
        let (status, mut s) = post_streaming(&url, &[("mcp-session-id", &session)], hold).await;
        assert_eq!(status, 200, "{}", s.text());
        assert!(s.read_until(|t| t.contains("open ")).await, "the stream's first event: {}", s.text());
        streams.push(s);
    }
    assert_eq!(up.open_streams().await, STREAMS as u64);
    eventually("the heap watcher to sample every stream in flight", || async {
        (metric(p.admin_addr, "portcullis_in_flight").await == Some(STREAMS as f64)).then_some(())
    })
    .await;
    assert_eq!(
        metric(p.admin_addr, "portcullis_heap_trims_total").await,
        Some(0.0),
        "no trim while they are open"
    );
    let in_use = metric(p.admin_addr, "portcullis_heap_bytes{state=\"in_use\"}").await;
    assert!(in_use.is_some_and(|b| b > 0.0), "the allocator's figures are exported: {in_use:?}");

    drop(streams);
    eventually("the proxy to hang up on every upstream stream", || async {
        (up.open_streams().await == 0).then_some(())
    })
    .await;
    eventually("a trim once the streams drained", || async {
        metric(p.admin_addr, "portcullis_heap_trims_total").await.filter(|n| *n >= 1.0)
    })
    .await;
    eventually("the watcher to sample none in flight", || async {
        (metric(p.admin_addr, "portcullis_in_flight").await == Some(0.0)).then_some(())
    })
    .await;
    // However the closes fell across samples, 12 streams make one drain (a trim leaves at most
    // 4 in flight, and 4 more closing is less than a drain).
    assert_eq!(metric(p.admin_addr, "portcullis_heap_trims_total").await, Some(1.0), "one drain, one trim");
}
