//! What traces cost an exchange on the allow path (issue 28.6): every span the proxy makes for
//! one allowed MCP call — the exchange (its body probe and the caller's `traceparent`), Layer 1,
//! the upstream call and the context written to the upstream's headers and `_meta` — with
//! `telemetry.otlp` off (`Span::none` after one atomic load) and on at `sample: 1.0` (spans made,
//! ended and queued for the batch exporter, which posts them to an OTLP/HTTP receiver on
//! loopback). `baseline` is the request the proxy has anyway, built and dropped.
//!
//! `cargo bench --bench otel`.

use std::convert::Infallible;
use std::hint::black_box;

use bytes::Bytes;
use criterion::Criterion;
use http::{HeaderMap, Method, Request, Uri};
use http_body_util::Full;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use portcullis::config::telemetry::{Otlp, Settings};
use portcullis::telemetry::otel::{self, spans, ExchangeKind};

const CALL: &[u8] = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"},"_meta":{"progressToken":1}}}"#;
const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

fn request() -> Request<Bytes> {
    let mut req = Request::new(Bytes::from_static(CALL));
    req.headers_mut().insert("mcp-session-id", "a1b2c3d4e5f60718293a4b5c6d7e8f90".parse().unwrap());
    req.headers_mut().insert("traceparent", PARENT.parse().unwrap());
    req
}

/// Every span one allowed MCP call makes, in the order the proxy makes them.
fn one_exchange(upstream: &Uri) -> usize {
    let mut req = request();
    let exchange = otel::exchange(&mut req, "py", ExchangeKind::Mcp);
    let entered = exchange.enter();
    let layer1 = spans::layer1();
    layer1.in_scope(|| black_box(()));
    if !layer1.is_none() {
        spans::layer1_decided(&layer1, "allow", None);
    }
    let call = spans::upstream(req.extensions(), "py", &Method::POST, upstream);
    let mut headers = HeaderMap::new();
    let body = spans::propagate(&call, &mut headers, Some(req.body()));
    call.record("http.response.status_code", 200u16);
    drop((call, layer1, entered));
    exchange.record("http.response.status_code", 200u16);
    body.map_or(0, |b| b.len()) + headers.len()
}

fn bench(c: &mut Criterion, label: &str) {
    let upstream: Uri = "http://127.0.0.1:9/mcp".parse().unwrap();
    let mut g = c.benchmark_group(format!("otel/{label}"));
    g.bench_function("baseline", |b| b.iter(|| black_box(request())));
    g.bench_function("exchange", |b| b.iter(|| black_box(one_exchange(&upstream))));
    g.finish();
}

/// An OTLP/HTTP receiver that accepts everything: the exporter's work is real, its answer cheap.
async fn receiver() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(|_req: Request<hyper::body::Incoming>| async {
                    Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::new())))
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, svc).await;
            });
        }
    });
    port
}

fn main() {
    // As `portcullis serve` installs it: the trace layer under the registry.
    tracing_subscriber::registry().with(otel::layer()).init();
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, "off");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let _entered = rt.enter();
    let port = rt.block_on(receiver());
    let traces_url = format!("http://127.0.0.1:{port}/v1/traces").parse().unwrap();
    otel::start(&Settings { otlp: Some(Otlp { traces_url, sample: 1.0 }) }).unwrap();
    assert!(otel::on());
    bench(&mut c, "on_sample_1");
    otel::flush();
    c.final_summary();
}
