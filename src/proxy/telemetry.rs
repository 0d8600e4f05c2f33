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
    type Future = Timed<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: R) -> Self::Future {
        Timed { start: Instant::now(), metrics: self.metrics.clone(), fut: self.inner.call(req) }
    }
}

pin_project_lite::pin_project! {
    /// The call below, timed to its response head (a future of its own rather than a boxed
    /// `async` block: one allocation fewer per request).
    pub struct Timed<F> {
        #[pin]
        fut: F,
        start: Instant,
        metrics: Arc<Metrics>,
    }
}

impl<F> Future for Timed<F>
where
    F: Future<Output = Result<Resp, BoxError>>,
{
    type Output = Result<Resp, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let resp = std::task::ready!(this.fut.poll(cx))?;
        let total = this.start.elapsed();
        let upstream = resp.extensions().get::<UpstreamElapsed>().map(|u| u.0).unwrap_or_default();
        this.metrics.overhead(total.saturating_sub(upstream).as_secs_f64());
        Poll::Ready(Ok(resp))
    }
}
