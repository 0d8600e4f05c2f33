//! A small OTLP/HTTP receiver on loopback: accepts `POST /v1/traces` (protobuf), decodes every
//! export with the `opentelemetry-proto` types, and keeps the spans for the test to read.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use prost::Message;
use tokio::net::TcpListener;

/// One span as received, with its attributes read into strings.
#[derive(Debug, Clone)]
pub struct Received {
    pub name: String,
    pub kind: i32,
    pub trace_id: String,
    pub span_id: String,
    pub parent_span_id: String,
    pub attributes: BTreeMap<String, String>,
    /// The spans it links to: (trace id, span id).
    pub links: Vec<(String, String)>,
    /// The resource's `service.name`.
    pub service: String,
}

impl Received {
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

/// The receiver: spans received, and the path and content type of every export.
pub struct Receiver {
    pub port: u16,
    spans: Arc<Mutex<Vec<Received>>>,
    exports: Arc<Mutex<Vec<(String, String)>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    pub async fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (spans, exports) = (Arc::<Mutex<Vec<Received>>>::default(), Arc::<Mutex<Vec<_>>>::default());
        let (s, e) = (spans.clone(), exports.clone());
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (s, e) = (s.clone(), e.clone());
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                        let (s, e) = (s.clone(), e.clone());
                        async move {
                            let path = req.uri().path().to_owned();
                            let kind = req
                                .headers()
                                .get("content-type")
                                .and_then(|v| v.to_str().ok())
                                .unwrap_or("")
                                .to_owned();
                            let body =
                                req.into_body().collect().await.map(|c| c.to_bytes()).unwrap_or_default();
                            e.lock().unwrap().push((path, kind));
                            let status = match ExportTraceServiceRequest::decode(body) {
                                Ok(export) => {
                                    s.lock().unwrap().extend(read(export));
                                    200
                                }
                                Err(_) => 400,
                            };
                            let resp = http::Response::builder()
                                .status(status)
                                .header("content-type", "application/x-protobuf")
                                .body(Full::new(Bytes::new()))
                                .unwrap();
                            Ok::<_, Infallible>(resp)
                        }
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, svc).await;
                });
            }
        });
        Receiver { port, spans, exports, task }
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn spans(&self) -> Vec<Received> {
        self.spans.lock().unwrap().clone()
    }

    /// Every export's path and content type.
    pub fn exports(&self) -> Vec<(String, String)> {
        self.exports.lock().unwrap().clone()
    }
}

fn read(export: ExportTraceServiceRequest) -> Vec<Received> {
    let mut out = Vec::new();
    for rs in export.resource_spans {
        let resource = rs.resource.map(|r| strings(r.attributes)).unwrap_or_default();
        let service = resource.get("service.name").cloned().unwrap_or_default();
        for ss in rs.scope_spans {
            for span in ss.spans {
                out.push(Received {
                    name: span.name,
                    kind: span.kind,
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: hex(&span.parent_span_id),
                    attributes: strings(span.attributes),
                    links: span.links.iter().map(|l| (hex(&l.trace_id), hex(&l.span_id))).collect(),
                    service: service.clone(),
                });
            }
        }
    }
    out
}

fn strings(kvs: Vec<opentelemetry_proto::tonic::common::v1::KeyValue>) -> BTreeMap<String, String> {
    kvs.into_iter()
        .map(|kv| {
            let v = match kv.value.and_then(|v| v.value) {
                Some(Value::StringValue(s)) => s,
                Some(Value::IntValue(i)) => i.to_string(),
                Some(Value::BoolValue(b)) => b.to_string(),
                Some(Value::DoubleValue(d)) => d.to_string(),
                other => format!("{other:?}"),
            };
            (kv.key, v)
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
