//! The exporter's HTTP client: the proxy's own hyper stack (rustls, the same web PKI roots as
//! upstreams), run on the tokio runtime that started telemetry — the batch processor exports
//! from a thread of its own, where no runtime is entered.

use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use opentelemetry_http::{HttpClient, HttpError};

/// A collector's answer is a small protobuf (partial success at most): anything longer is not read.
const MAX_ANSWER: usize = 64 << 10;

#[derive(Clone)]
pub(super) struct Client {
    inner: hyper_util::client::legacy::Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    runtime: tokio::runtime::Handle,
    timeout: Duration,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("otel::Client").field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

impl Client {
    pub(super) fn new(runtime: tokio::runtime::Handle, timeout: Duration) -> Client {
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(timeout));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let inner = hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build(https);
        Client { inner, runtime, timeout }
    }
}

#[async_trait::async_trait]
impl HttpClient for Client {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (client, timeout) = (self.inner.clone(), self.timeout);
        let (parts, body) = request.into_parts();
        let request = Request::from_parts(parts, Full::new(body));
        let exchange = async move {
            let answer = client.request(request).await?;
            let (parts, body) = answer.into_parts();
            let body = Limited::new(body, MAX_ANSWER).collect().await?.to_bytes();
            Ok::<_, HttpError>(Response::from_parts(parts, body))
        };
        // The timer too is made on the runtime: the exporter's thread has none.
        let task = self.runtime.spawn(async move { tokio::time::timeout(timeout, exchange).await });
        match task.await? {
            Ok(answer) => answer,
            Err(_) => Err(format!("the collector did not answer within {timeout:?}").into()),
        }
    }
}
