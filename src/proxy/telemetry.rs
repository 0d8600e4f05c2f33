//! Request telemetry: how long the proxy itself took, measured to the response head and net of
//! the upstream's own time (which the upstream service records in the response's extensions).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tower::{Layer, Service};

use super::{BoxError, Resp};
use crate::telemetry::Metrics;

/// Time spent waiting for the upstream's response head, set by the upstream service.
#[derive(Debug, Clone, Copy)]
pub struct UpstreamElapsed(pub Duration);

#[derive(Clone)]
pub struct TelemetryLayer {
    metrics: Arc<Metrics>,
}

impl TelemetryLayer {
    pub fn new(metrics: Arc<Metrics>) -> Self {
        TelemetryLayer { metrics }
    }
}

impl<S> Layer<S> for TelemetryLayer {
    type Service = Telemetry<S>;
    fn layer(&self, inner: S) -> Self::Service {
        Telemetry { inner, metrics: self.metrics.clone() }
    }
}

#[derive(Clone)]
pub struct Telemetry<S> {
    inner: S,
    metrics: Arc<Metrics>,
}

impl<S, R> Service<R> for Telemetry<S>
where
    S: Service<R, Response = Resp, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = Resp;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Resp, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: R) -> Self::Future {
        let start = Instant::now();
        let metrics = self.metrics.clone();
        let fut = self.inner.call(req);
        Box::pin(async move {
            let resp = fut.await?;
            let total = start.elapsed();
            let upstream = resp.extensions().get::<UpstreamElapsed>().map(|u| u.0).unwrap_or_default();
            metrics.overhead(total.saturating_sub(upstream).as_secs_f64());
            Ok(resp)
        })
    }
}
