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
//!    Then the `/mcp` **alias** rewrites `/mcp` and `/{upstream}/mcp` to `/mcp/{upstream}`, so
//!    every layer that reads the upstream name from the path reads the same one.
//! 4. **authenticate** — with agents configured, the agent's bearer token is checked and taken
//!    out of the request, and the [`crate::identity::Agent`] rides in its extensions; headers
//!    only, so an unauthenticated flood takes no concurrency slot and reads no body. Serves the
//!    proxy's protected-resource metadata.
//! 5. **delegations** — `POST /delegations` and `DELETE /delegations/{id}` are the proxy's own
//!    API, answered here (reading a small body, bounded) right where the caller is known; and a
//!    delegated agent is kept off the upstreams outside its allowlist before any of its requests
//!    takes a slot or reaches the gate.
//! 6. **concurrency limit** — bounds work in flight before any body is read, and holds the slot
//!    until the response body ends: an open stream (a GET stream, a parked ask) is in flight.
//! 7. **route** — cheap and path-only: unknown upstreams are refused before reading a body, and
//!    a plain HTTP tool's path is normalised here, once, for both the gate and the upstream.
//! 8. **body limit** — reads the body whole, bounded in bytes and time; nothing oversized or
//!    half-sent goes further, and below here a request is plain bytes.
//! 9. **pre gate** — parses JSON-RPC once, checks routing headers, decides each `tools/call`;
//!    a refusal is answered here and never reaches the layers below.
//! 10. **post gate** — wraps the response so a watched result is inspected before release.
//! 11. **upstream** — the pooled client.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use http::Request;
use http_body::Body as HttpBody;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use tower::{Service, ServiceBuilder};

use crate::admin;
use crate::config::Config;
use crate::proxy::authenticate::AuthenticateLayer;
use crate::proxy::delegations::DelegationsLayer;
use crate::proxy::error::RescueLayer;
use crate::proxy::host::HostLayer;
use crate::proxy::in_flight::InFlightLayer;
use crate::proxy::limit::BodyLimitLayer;
use crate::proxy::listener;
use crate::proxy::post::PostGateLayer;
use crate::proxy::pre::PreGateLayer;
use crate::proxy::route::alias::AliasLayer;
use crate::proxy::route::RouteLayer;
use crate::proxy::telemetry::TelemetryLayer;
use crate::proxy::{BoxError, Req, Resp};
use crate::runtime::Shared;
use crate::runtime::{Runtime, StartError};
use crate::telemetry::Metrics;
use crate::upstream::Upstream;

pub use crate::runtime::admin_token;

/// Builds one proxy stack over `runtime`, with the pooled client as its upstream. Each worker
/// builds its own, so its upstream connection pool lives on its own thread.
pub fn proxy<B>(
    runtime: &Runtime,
) -> impl Service<Request<B>, Response = Resp, Error = Infallible, Future: Send + 'static> + Clone + Send + 'static
where
    B: HttpBody<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    proxy_over(runtime, Upstream::new(&runtime.config.limits, runtime.metrics.clone()))
}

/// The same stack over any `upstream`: tests drive it in-process (`oneshot` over a
/// `tower::service_fn`), with no socket on either side. The upstream receives the request the
/// real client would send (its [`crate::proxy::route::Route`] in the extensions) and answers
/// or fails as the real one does.
pub fn proxy_over<B, U>(
    runtime: &Runtime,
    upstream: U,
) -> impl Service<Request<B>, Response = Resp, Error = Infallible, Future: Send + 'static> + Clone + Send + 'static
where
    B: HttpBody<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
    U: Service<Req, Response = Resp, Error = BoxError> + Clone + Send + Sync + 'static,
    U::Future: Send + 'static,
{
    let config = &runtime.config;
    ServiceBuilder::new()
        .layer(RescueLayer::new(runtime.metrics.clone()))
        .layer(TelemetryLayer::new(runtime.metrics.clone()))
        .layer(HostLayer::new(Arc::new(config.allowed_hosts.clone().with_listen(config.listen))))
        // `/mcp` and `/{upstream}/mcp` become `/mcp/{upstream}` before anything reads the path.
        .layer(AliasLayer::new(runtime.targets.clone()))
        .layer(AuthenticateLayer::new(runtime.shared.clone(), runtime.targets.clone()))
        .layer(DelegationsLayer::new(runtime.shared.clone(), runtime.targets.clone()))
        .layer(InFlightLayer::new(runtime.in_flight.clone()))
        .layer(RouteLayer::new(runtime.targets.clone()))
        .layer(BodyLimitLayer::new(config.limits.max_body, config.limits.client_header_timeout * 3))
        .layer(PreGateLayer::new(runtime.shared.clone()))
        .layer(PostGateLayer::new(runtime.shared.clone()))
        .service(upstream)
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
        // Live taps end first: an open event stream would hold the admin listener's drain.
        self.shared.guard.load().audit().tap().close();
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

/// Builds the runtime from `config` (the admin token from `admin.token_env`), binds the
/// listeners and starts serving.
pub async fn start(config: &Config) -> Result<Running, StartError> {
    start_with_token(config, admin_token(config)?).await
}

/// As [`start`], with the admin token given rather than read from `admin.token_env` (the demo
/// generates one).
pub async fn start_with_token(config: &Config, token: Option<String>) -> Result<Running, StartError> {
    serve(Runtime::new(config, token)?).await
}

/// Binds the listeners and serves `runtime`.
///
/// The proxy runs one single-threaded runtime per worker (`limits.workers`, default one per
/// CPU), each with its own listening socket on the same port and its own upstream pool, so a
/// call is accepted, gated, forwarded and answered on one thread: no cross-thread wake-ups on
/// the hot path (the benchmark showed them as the largest cost of a work-stealing runtime).
/// The policy, metrics, session table and concurrency budget are shared.
pub async fn serve(mut runtime: Runtime) -> Result<Running, StartError> {
    let listen = runtime.config.listen;
    let bind = |addr, source| StartError::Bind { what: "proxy", addr, source };
    let first = shared_listener(listen).map_err(|e| bind(listen, e))?;
    let addr = first.local_addr().map_err(|e| bind(listen, e))?;
    let mut listeners = vec![first];
    for _ in 1..runtime.config.limits.workers {
        listeners.push(shared_listener(addr).map_err(|e| bind(addr, e))?);
    }
    let admin_at = runtime.config.admin.listen;
    let admin_bind = |source| StartError::Bind { what: "admin", addr: admin_at, source };
    let admin_listener = TcpListener::bind(admin_at).await.map_err(admin_bind)?;
    let admin_addr = admin_listener.local_addr().map_err(admin_bind)?;
    for (what, a) in [("proxy", addr), ("admin", admin_addr)] {
        if !a.ip().is_loopback() {
            tracing::warn!(%a, "{what} listener is not on loopback: anything that can reach it can use it");
        }
    }
    // The stack allows the address it is reached at (the bound port, when 0 was asked for).
    runtime.config.listen = addr;
    let runtime = Arc::new(runtime);
    let (stop, stopped) = watch::channel(false);
    let mut workers = Vec::new();
    for (i, std_listener) in listeners.into_iter().enumerate() {
        let worker = |source| StartError::Worker { index: i, source };
        let (done, finished) = oneshot::channel();
        let (runtime, stopped) = (runtime.clone(), stopped.clone());
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(worker)?;
        std::thread::Builder::new()
            .name(format!("portcullis-worker-{i}"))
            .spawn(move || {
                rt.block_on(async move {
                    match TcpListener::from_std(std_listener) {
                        Ok(listener) => {
                            let svc = proxy(&runtime);
                            let limits = runtime.config.limits.clone();
                            listener::serve(listener, svc, limits, stop_signal(stopped)).await;
                        }
                        Err(e) => tracing::error!(error = %e, "worker could not register its listener"),
                    }
                });
                let _ = done.send(());
            })
            .map_err(worker)?;
        workers.push(finished);
    }
    // The admin listener answers the agent listener's names and its own address (rebinding).
    let admin_hosts = runtime.config.allowed_hosts.clone().with_listen(admin_addr);
    let admin_svc = admin::service(
        runtime.metrics.clone(),
        runtime.shared.clone(),
        runtime.token.clone(),
        admin_hosts,
        crate::readiness::Upstreams::from_config(&runtime.config),
    );
    // After a load drains (1,000 streams closed, say), the allocator's free pages go back to
    // the OS: sampled off the request path, from the concurrency budget's free permits.
    let (slots, limit) = (runtime.in_flight.clone(), runtime.config.limits.concurrency);
    tokio::spawn(crate::heap::watch(
        move || limit.saturating_sub(slots.available_permits()),
        runtime.metrics.process.heap.clone(),
        stop_signal(stopped.clone()),
    ));
    let admin = tokio::spawn(listener::serve(
        admin_listener,
        admin_svc,
        runtime.config.limits.clone(),
        stop_signal(stopped),
    ));
    Ok(Running {
        addr,
        admin_addr,
        metrics: runtime.metrics.clone(),
        shared: runtime.shared.clone(),
        stop,
        admin,
        workers,
    })
}

async fn stop_signal(mut rx: watch::Receiver<bool>) {
    let _ = rx.wait_for(|s| *s).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_listener_that_cannot_bind_is_a_start_error_naming_its_address() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap();
        let yaml = format!("listen: 127.0.0.1:0\nadmin: {{ listen: \"{addr}\" }}\n");
        let config = Config::parse(&yaml, "t").unwrap_or_else(|e| panic!("{e}"));
        let err = start(&config).await.err().expect("the admin port is taken");
        match &err {
            StartError::Bind { what, addr: at, .. } => assert_eq!((*what, *at), ("admin", addr), "{err}"),
            other => panic!("not a bind error: {other:?}"),
        }
        assert!(err.to_string().contains(&addr.to_string()), "{err}");
    }
}
