//! A response body that holds a value — a forwarded call, with the rate-limit places it holds —
//! until the body ends or is dropped: the fast paths relay an answer as it streams, and a call's
//! place at once must stay taken until its answer is through, not until its head arrived.

use std::pin::Pin;
use std::task::{Context, Poll};

use http_body::{Body, Frame, SizeHint};

pin_project_lite::pin_project! {
    pub struct Holding<B, T> {
        #[pin]
        body: B,
        held: Option<T>,
    }
}

impl<B, T> Holding<B, T> {
    pub fn new(body: B, held: T) -> Holding<B, T> {
        Holding { body, held: Some(held) }
    }
}

impl<B: Body, T> Body for Holding<B, T> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let this = self.project();
        let polled = this.body.poll_frame(cx);
        // Ended, or failed: the answer is through (or never will be), so let go now.
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) {
            this.held.take();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// `resp`, holding `held` until its body ends or is dropped.
pub fn holding<T: Send + 'static>(resp: super::Resp, held: T) -> super::Resp {
    use http_body_util::BodyExt;
    resp.map(|body| Holding::new(body, held).boxed_unsync())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    struct Token(Arc<AtomicUsize>);
    impl Drop for Token {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn the_value_is_held_until_the_body_has_ended() {
        crate::gate::pre::block_on(async {
            let dropped = Arc::new(AtomicUsize::new(0));
            let (tx, rx) =
                tokio::sync::mpsc::channel::<Result<Frame<bytes::Bytes>, std::convert::Infallible>>(2);
            let body = http_body_util::StreamBody::new(tokio_stream_like(rx));
            let mut held = Box::pin(Holding::new(body, Token(dropped.clone())));
            tx.send(Ok(Frame::data(bytes::Bytes::from_static(b"part")))).await.unwrap();
            assert!(held.frame().await.is_some());
            assert_eq!(dropped.load(Ordering::SeqCst), 0, "still streaming: held");
            drop(tx);
            assert!(held.frame().await.is_none());
            assert_eq!(dropped.load(Ordering::SeqCst), 1, "ended: let go, before the body is dropped");
        });
    }

    #[test]
    fn a_body_dropped_midway_lets_go_too() {
        let dropped = Arc::new(AtomicUsize::new(0));
        let body = http_body_util::Full::new(bytes::Bytes::from_static(b"x"));
        drop(Holding::new(body, Token(dropped.clone())));
        assert_eq!(dropped.load(Ordering::SeqCst), 1);
    }

    fn tokio_stream_like<T>(rx: tokio::sync::mpsc::Receiver<T>) -> impl futures_util::Stream<Item = T> {
        futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|v| (v, rx)) })
    }
}
