//! Reads the request body into memory, bounded in size and in time, so that nothing oversized or
//! half-sent is ever forwarded. Everything below this layer sees a whole [`Req`].

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body::Body as HttpBody;
use http_body_util::{BodyExt, Limited};
use tower::{Layer, Service};

use super::error::{ErrorKind, ProxyError};
use super::{BoxError, Req, Resp};

#[derive(Debug, Clone, Copy)]
pub struct BodyLimitLayer {
    max: usize,
    timeout: Duration,
}

impl BodyLimitLayer {
    pub fn new(max: usize, timeout: Duration) -> Self {
        BodyLimitLayer { max, timeout }
    }
}

impl<S> Layer<S> for BodyLimitLayer {
    type Service = BodyLimit<S>;
    fn layer(&self, inner: S) -> Self::Service {
        BodyLimit { inner, max: self.max, timeout: self.timeout }
    }
}

#[derive(Debug, Clone)]
pub struct BodyLimit<S> {
    inner: S,
    max: usize,
    timeout: Duration,
}

impl<S, B> Service<Request<B>> for BodyLimit<S>
where
    S: Service<Req, Response = Resp, Error = BoxError> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Resp;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Resp, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        // Take the service that was polled ready; leave a clone for the next call.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let (max, timeout) = (self.max, self.timeout);
        Box::pin(async move {
            let (parts, body) = req.into_parts();
            let too_large = || ProxyError::new(ErrorKind::BodyTooLarge { limit: max });
            // Refuse on the declared length without reading a byte.
            if body.size_hint().lower() > max as u64 {
                return Err(too_large().into());
            }
            let read = Limited::new(body, max).collect();
            let bytes = match tokio::time::timeout(timeout, read).await {
                Err(_) => {
                    return Err(ProxyError::new(ErrorKind::ClientBody(
                        "the client sent its body too slowly".into(),
                    ))
                    .into())
                }
                Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => return Err(too_large().into()),
                Ok(Err(e)) => return Err(ProxyError::new(ErrorKind::ClientBody(e)).into()),
                Ok(Ok(collected)) => collected.to_bytes(),
            };
            inner.call(Request::from_parts(parts, bytes)).await
        })
    }
}
