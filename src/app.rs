//! The one place the proxy's tower stack is assembled, and the proxy started.
//!
//! Outermost first — each layer says why it sits where it does:
//!
//! 1. **rescue** — turns every error below into a protocol-correct response, so the service the
//!    server sees cannot fail and no connection is dropped on an error.
//! 2. **telemetry** — outside everything that can take time, so overhead includes limits and
//!    gating; it subtracts the upstream's own time, which the upstream service reports.
//! 3. **concurrency limit** — bounds work in flight before any body is read.
//! 4. **route** — cheap and path-only: unknown upstreams are refused before reading a body.
//! 5. **body limit** — reads the body whole, bounded in bytes and time; nothing oversized or
//!    half-sent goes further, and below here a request is plain bytes.
//! 6. **pre gate** — parses JSON-RPC once, checks routing headers, decides each `tools/call`;
//!    a refusal is answered here and never reaches the layers below.
//! 7. **post gate** — wraps the response so a watched result is inspected before release.
//! 8. **upstream** — the pooled client.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use http::Request;
use http_body::Body as HttpBody;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tower::limit::ConcurrencyLimitLayer;
use tower::{Service, ServiceBuilder};

use crate::config::Config;
use crate::gate::Guard;
use crate::proxy::error::RescueLayer;
use crate::proxy::limit::BodyLimitLayer;
use crate::proxy::post::PostGateLayer;
use crate::proxy::pre::PreGateLayer;
use crate::proxy::route::{RouteLayer, Targets};
use crate::proxy::sessions::Sessions;
use crate::proxy::telemetry::TelemetryLayer;
use crate::proxy::{BoxError, Resp, Shared};
use crate::telemetry::Metrics;
use crate::upstream::Upstream;
use crate::{admin, server};

/// Builds the proxy service for `config`, recording into `metrics`.
pub fn proxy<B>(
    config: &Config,
    metrics: Arc<Metrics>,
) -> impl Service<Request<B>, Response = Resp, Error = Infallible, Future: Send + 'static> + Clone + Send + 'static
where
    B: HttpBody<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let shared = Arc::new(Shared {
        guard: Guard::new(&config.policy, metrics.clone()),
        metrics: metrics.clone(),
        sessions: Sessions::default(),
        limits: config.limits.clone(),
    });
    let targets = Arc::new(Targets::from_config(config));
    ServiceBuilder::new()
        .layer(RescueLayer)
        .layer(TelemetryLayer::new(metrics.clone()))
        .layer(ConcurrencyLimitLayer::new(config.limits.concurrency))
        .layer(RouteLayer::new(targets))
        .layer(BodyLimitLayer::new(config.limits.max_body, config.limits.client_header_timeout * 3))
        .layer(PreGateLayer::new(shared.clone()))
        .layer(PostGateLayer::new(shared))
        .service(Upstream::new(&config.limits, metrics))
}

/// A proxy running in the background.
pub struct Running {
    /// Where agents connect.
    pub addr: SocketAddr,
    /// The admin listener (`/metrics`, `/healthz`, `/readyz`).
    pub admin_addr: SocketAddr,
    pub metrics: Arc<Metrics>,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl Running {
    /// Stops accepting, drains in-flight calls (up to the configured grace) and returns.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        for t in self.tasks {
            let _ = t.await;
        }
    }

    /// Runs until `signal` resolves, then shuts down gracefully.
    pub async fn run_until(self, signal: impl Future<Output = ()>) {
        signal.await;
        tracing::info!("shutting down: draining in-flight calls");
        self.shutdown().await;
    }
}

/// Binds both listeners and starts serving.
pub async fn start(config: &Config) -> std::io::Result<Running> {
    let metrics = Arc::new(Metrics::new());
    let listener = TcpListener::bind(config.listen).await?;
    let admin_listener = TcpListener::bind(config.admin.listen).await?;
    let addr = listener.local_addr()?;
    let admin_addr = admin_listener.local_addr()?;
    for (what, a) in [("proxy", addr), ("admin", admin_addr)] {
        if !a.ip().is_loopback() {
            tracing::warn!(%a, "{what} listener is not on loopback: anything that can reach it can use it");
        }
    }
    let (stop, stopped) = watch::channel(false);
    let limits = config.limits.clone();
    let svc = proxy(config, metrics.clone());
    let admin_svc = admin::service(metrics.clone());
    let signal = |mut rx: watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let tasks = vec![
        tokio::spawn(server::serve(listener, svc, limits.clone(), signal(stopped.clone()))),
        tokio::spawn(server::serve(admin_listener, admin_svc, limits, signal(stopped))),
    ];
    Ok(Running { addr, admin_addr, metrics, stop, tasks })
}
