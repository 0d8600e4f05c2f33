//! The accept loop: HTTP/1.1 and h2c on one listener, a header-read timeout against slow
//! clients, and graceful shutdown that drains in-flight calls.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use http::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower::{Service, ServiceExt};

use super::Resp;
use crate::config::Limits;

/// The address a request's connection came from, in its extensions: who is calling when the
/// request carries no credential (the repeated-denial breaker keys on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer(pub SocketAddr);

/// Serves `svc` on `listener` until `shutdown` resolves, then drains for up to
/// `limits.shutdown_grace`.
pub async fn serve<S>(listener: TcpListener, svc: S, limits: Limits, shutdown: impl Future<Output = ()>)
where
    S: Service<Request<Incoming>, Response = Resp, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(limits.client_header_timeout);
    builder.http2().timer(TokioTimer::new());
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    let svc = svc.clone().map_request(move |mut req: Request<Incoming>| {
                        req.extensions_mut().insert(Peer(peer));
                        req
                    });
                    let conn = builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(svc));
                    let conn = graceful.watch(conn.into_owned());
                    tokio::spawn(async move {
                        if let Err(e) = conn.await {
                            tracing::debug!(error = %e, "connection ended with an error");
                        }
                    });
                }
                Err(e) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => tracing::debug!("all connections drained"),
        () = tokio::time::sleep(limits.shutdown_grace) => tracing::warn!("shutdown grace elapsed with connections still open"),
    }
}
