//! The one place the proxy's tower stack is assembled, and the proxy started.
//!
//! Outermost first — each layer says why it sits where it does:
//!
//! 1. **rescue** — turns every error below into a protocol-correct response, so the service the
//!    server sees cannot fail and no connection is dropped on an error.
//! 2. **telemetry** — outside everything that can take time, so overhead includes limits and
//!    gating; it subtracts the upstream's own time, which the upstream service reports.
//! 3. **host** — `Host` and `Origin` must name an allowed host (DNS-rebinding protection):
//!    headers only, before a request takes a concurrency slot; below here nothing a browser on
//!    another site sent is served, and the upstream (which never sees either header) need not check.
//! 4. **concurrency limit** — bounds work in flight before any body is read.
//! 5. **route** — cheap and path-only: unknown upstreams are refused before reading a body, and
//!    a plain HTTP tool's path is normalised here, once, for both the gate and the upstream.
//! 6. **body limit** — reads the body whole, bounded in bytes and time; nothing oversized or
//!    half-sent goes further, and below here a request is plain bytes.
//! 7. **pre gate** — parses JSON-RPC once, checks routing headers, decides each `tools/call`;
//!    a refusal is answered here and never reaches the layers below.
//! 8. **post gate** — wraps the response so a watched result is inspected before release.
//! 9. **upstream** — the pooled client.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use http::Request;
use http_body::Body as HttpBody;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch, Semaphore};
use tokio::task::JoinHandle;
use tower::limit::GlobalConcurrencyLimitLayer;
use tower::{Service, ServiceBuilder};

use crate::config::Config;
use crate::gate::Guard;
use crate::proxy::error::RescueLayer;
use crate::proxy::host::HostLayer;
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

/// What every worker's stack shares: the policy, metrics, the session table, the upstreams and
/// the concurrency budget. Built once per proxy.
#[derive(Clone)]
pub struct Parts {
    shared: Arc<Shared>,
    targets: Arc<Targets>,
    in_flight: Arc<Semaphore>,
    metrics: Arc<Metrics>,
}

impl Parts {
    /// Fails only when the guardrails cannot be built (a checker API key variable is unset).
    /// `operator`: an admin token is configured, so parked asks can be answered.
    pub fn new(config: &Config, metrics: Arc<Metrics>, operator: bool) -> Result<Parts, String> {
        let audit = Arc::new(
            crate::audit::Audit::start(&config.audit, metrics.clone())
                .map_err(|e| format!("the audit log cannot be opened: {e}"))?,
        );
        let shared = Arc::new(Shared {
            guard: arc_swap::ArcSwap::from_pointee(
                Guard::new(&config.policy, metrics.clone())?.with_audit(audit.clone()),
            ),
            metrics: metrics.clone(),
            approvals: crate::approval::Approvals::new(&config.approvals, operator, metrics.clone())
                .with_audit(audit),
            sessions: Sessions::default(),
            stream_order: Default::default(),
            limits: config.limits.clone(),
        });
        Ok(Parts {
            shared,
            targets: Arc::new(Targets::from_config(config)),
            in_flight: Arc::new(Semaphore::new(config.limits.concurrency)),
            metrics,
        })
    }
}

/// The admin bearer token, from the variable `admin.token_env` names (never from the file).
/// Unset or empty: the token-protected endpoints are disabled.
pub fn admin_token(config: &Config) -> Option<String> {
    let var = config.admin.token_env.as_deref()?;
    std::env::var(var).ok().filter(|t| !t.trim().is_empty())
}

/// Builds one proxy stack over `parts`. Each worker builds its own, so its upstream connection
/// pool lives on its own thread.
pub fn proxy<B>(
    config: &Config,
    parts: &Parts,
) -> impl Service<Request<B>, Response = Resp, Error = Infallible, Future: Send + 'static> + Clone + Send + 'static
where
    B: HttpBody<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    ServiceBuilder::new()
        .layer(RescueLayer::new(parts.metrics.clone()))
        .layer(TelemetryLayer::new(parts.metrics.clone()))
        .layer(HostLayer::new(Arc::new(config.allowed_hosts.clone().with_listen(config.listen))))
        .layer(GlobalConcurrencyLimitLayer::with_semaphore(parts.in_flight.clone()))
        .layer(RouteLayer::new(parts.targets.clone()))
        .layer(BodyLimitLayer::new(config.limits.max_body, config.limits.client_header_timeout * 3))
        .layer(PreGateLayer::new(parts.shared.clone()))
        .layer(PostGateLayer::new(parts.shared.clone()))
        .service(Upstream::new(&config.limits, parts.metrics.clone()))
}

/// A proxy running in the background.
pub struct Running {
    /// Where agents connect.
    pub addr: SocketAddr,
    /// The admin listener (`/metrics`, `/healthz`, `/readyz`).
    pub admin_addr: SocketAddr,
    pub metrics: Arc<Metrics>,
    /// The policy and what the workers share; a reload swaps `shared.guard`.
    pub shared: Arc<Shared>,
    stop: watch::Sender<bool>,
    admin: JoinHandle<()>,
    workers: Vec<oneshot::Receiver<()>>,
}

impl Running {
    /// Reloads the policy when its files change, until shutdown (see [`crate::reload`]).
    pub fn reload_on_change(&self, reload: crate::reload::Reload) {
        let stopped = self.stop.subscribe();
        tokio::spawn(crate::reload::run(self.shared.clone(), reload, stop_signal(stopped)));
    }

    /// Stops accepting, drains in-flight calls (up to the configured grace) and returns.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        for w in self.workers {
            let _ = w.await;
        }
        let _ = self.admin.await;
    }

    /// Runs until `signal` resolves, then shuts down gracefully.
    pub async fn run_until(self, signal: impl Future<Output = ()>) {
        signal.await;
        tracing::info!("shutting down: draining in-flight calls");
        self.shutdown().await;
    }
}

/// A listening socket that others may share (`SO_REUSEPORT`): the kernel spreads connections
/// over the workers' sockets.
fn shared_listener(addr: SocketAddr) -> std::io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    s.set_reuse_address(true)?;
    s.set_reuse_port(true)?;
    s.set_nonblocking(true)?;
    s.bind(&addr.into())?;
    s.listen(1024)?;
    Ok(s.into())
}

/// Binds the listeners and starts serving.
///
/// The proxy runs one single-threaded runtime per worker (`limits.workers`, default one per
/// CPU), each with its own listening socket on the same port and its own upstream pool, so a
/// call is accepted, gated, forwarded and answered on one thread: no cross-thread wake-ups on
/// the hot path (the benchmark showed them as the largest cost of a work-stealing runtime).
/// The policy, metrics, session table and concurrency budget are shared.
pub async fn start(config: &Config) -> std::io::Result<Running> {
    start_with_token(config, admin_token(config)).await
}

/// As [`start`], with the admin token given rather than read from `admin.token_env` (the demo
/// generates one).
pub async fn start_with_token(config: &Config, token: Option<String>) -> std::io::Result<Running> {
    let metrics = Arc::new(Metrics::new());
    let first = shared_listener(config.listen)?;
    let addr = first.local_addr()?;
    let mut listeners = vec![first];
    for _ in 1..config.limits.workers {
        listeners.push(shared_listener(addr)?);
    }
    let admin_listener = TcpListener::bind(config.admin.listen).await?;
    let admin_addr = admin_listener.local_addr()?;
    for (what, a) in [("proxy", addr), ("admin", admin_addr)] {
        if !a.ip().is_loopback() {
            tracing::warn!(%a, "{what} listener is not on loopback: anything that can reach it can use it");
        }
    }
    // The stack allows the address it is reached at (the bound port, when 0 was asked for).
    let config = &Config { listen: addr, ..config.clone() };
    let (stop, stopped) = watch::channel(false);
    let parts = Parts::new(config, metrics.clone(), token.is_some()).map_err(std::io::Error::other)?;
    let mut workers = Vec::new();
    for (i, std_listener) in listeners.into_iter().enumerate() {
        let (done, finished) = oneshot::channel();
        let (config, parts, stopped) = (config.clone(), parts.clone(), stopped.clone());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        std::thread::Builder::new().name(format!("portcullis-worker-{i}")).spawn(move || {
            runtime.block_on(async move {
                match TcpListener::from_std(std_listener) {
                    Ok(listener) => {
                        let svc = proxy(&config, &parts);
                        server::serve(listener, svc, config.limits.clone(), stop_signal(stopped)).await;
                    }
                    Err(e) => tracing::error!(error = %e, "worker could not register its listener"),
                }
            });
            let _ = done.send(());
        })?;
        workers.push(finished);
    }
    let admin_svc = admin::service(metrics.clone(), parts.shared.clone(), token);
    let admin =
        tokio::spawn(server::serve(admin_listener, admin_svc, config.limits.clone(), stop_signal(stopped)));
    Ok(Running { addr, admin_addr, metrics, shared: parts.shared.clone(), stop, admin, workers })
}

async fn stop_signal(mut rx: watch::Receiver<bool>) {
    let _ = rx.wait_for(|s| *s).await;
}
