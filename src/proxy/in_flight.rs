//! The proxy's concurrency limit (`limits.concurrency`), held for as long as a request is in
//! flight: to the end of its response body, not just its head. tower's `GlobalConcurrencyLimit`
//! gives its slot back when the response head is returned, so an SSE stream — a GET stream, a
//! call parked for a human, a long tool run with progress — held nothing, and any number of them
//! could stay open (found by `scripts/bench-memory`: 1,000 streams open under a limit of 8). A
//! request over the limit waits for a slot, as before.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use http_body_util::BodyExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::{Layer, Service};

use super::{Body, BoxError, Resp};

#[derive(Clone)]
pub struct InFlightLayer {
    slots: Arc<Semaphore>,
}

impl InFlightLayer {
    pub fn new(slots: Arc<Semaphore>) -> Self {
        InFlightLayer { slots }
    }
}

impl<S> Layer<S> for InFlightLayer {
    type Service = InFlight<S>;
    fn layer(&self, inner: S) -> InFlight<S> {
        InFlight { inner, slots: self.slots.clone() }
    }
}

#[derive(Clone)]
pub struct InFlight<S> {
    inner: S,
    slots: Arc<Semaphore>,
}

impl<S, R> Service<R> for InFlight<S>
where
    S: Service<R, Response = Resp, Error = BoxError> + Clone + Send + 'static,
    S::Future: Send + 'static,
    R: Send + 'static,
{
    type Response = Resp;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Resp, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: R) -> Self::Future {
        // The ready service goes into the future, which calls it once it holds a slot.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let slots = self.slots.clone();
        Box::pin(async move {
            let slot = slots.acquire_owned().await.map_err(|closed| Box::new(closed) as BoxError)?;
            let resp = inner.call(req).await?;
            Ok(resp.map(|body| Held { body, _slot: slot }.boxed_unsync()))
        })
    }
}

/// A response body that holds its request's slot until it ends or is dropped.
struct Held {
    body: Body,
    _slot: OwnedSemaphorePermit,
}

impl HttpBody for Held {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::ServiceExt;

    #[tokio::test]
    async fn a_streaming_response_holds_its_slot_until_its_body_is_dropped() {
        let slots = Arc::new(Semaphore::new(1));
        let svc = InFlightLayer::new(slots.clone()).layer(tower::service_fn(|_: ()| async {
            Ok::<_, BoxError>(Resp::new(super::super::full("x")))
        }));
        let resp = svc.clone().oneshot(()).await.unwrap();
        assert_eq!(slots.available_permits(), 0, "the head is out, the body is not: the slot is held");
        let second = tokio::spawn(svc.oneshot(()));
        tokio::task::yield_now().await;
        assert!(!second.is_finished(), "a request over the limit waits");
        drop(resp);
        let done = second.await.unwrap().unwrap();
        drop(done);
        assert_eq!(slots.available_permits(), 1);
    }
}
