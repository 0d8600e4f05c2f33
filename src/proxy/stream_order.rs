//! Keeps one session's requests in the order the agent sent them, across connections.
//!
//! A Streamable HTTP client opens its GET stream and sends its next POST at the same instant, on
//! two connections. A server that sends a request of its own (`sampling/createMessage`,
//! `elicitation/create`) with no related request puts it on the GET stream, and the reference
//! TypeScript server drops it when no GET is attached yet. Directly, the GET almost always
//! arrives first; through a proxy the two race on separate tasks and upstream connections, and
//! the POST can overtake. So while a session's GET is being opened upstream (sent, its response
//! head not yet back), that session's POSTs wait for the head — at most [`MAX_WAIT`], so an
//! upstream that holds its GET head back costs a POST one bounded delay, never a hang.
//!
//! The fast path is one atomic load: nothing is locked while no GET is opening.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

/// How long a POST waits for its session's GET to be attached upstream.
pub const MAX_WAIT: Duration = Duration::from_millis(250);

/// Sessions opened at once beyond which new GETs are not tracked (they lose only the ordering).
const MAX_OPENING: usize = 4096;

#[derive(Debug, Default)]
pub struct StreamOrder(Arc<Table>);

/// A session's opening GET: its generation and the receiver its waiters clone.
type Entry = (u64, watch::Receiver<()>);

#[derive(Debug, Default)]
struct Table {
    /// Entries in `table`: read without the lock on every POST.
    opening: AtomicUsize,
    next: AtomicU64,
    table: Mutex<HashMap<Box<str>, Entry>>,
}

/// Held while a session's GET is on its way upstream; dropping it releases the waiting POSTs.
#[must_use]
pub struct Opening {
    order: Arc<Table>,
    session: Box<str>,
    generation: u64,
    _done: watch::Sender<()>,
}

impl StreamOrder {
    /// Marks `session`'s GET as being opened; `None` when there is nothing to order.
    pub fn opening(&self, session: Option<&str>) -> Option<Opening> {
        let session = session?;
        let order = &self.0;
        let (tx, rx) = watch::channel(());
        let generation = order.next.fetch_add(1, Ordering::Relaxed);
        let mut table = order.table.lock().unwrap_or_else(|p| p.into_inner());
        if table.len() >= MAX_OPENING && !table.contains_key(session) {
            return None;
        }
        if table.insert(session.into(), (generation, rx)).is_none() {
            order.opening.fetch_add(1, Ordering::Release);
        }
        tracing::trace!(session, "a GET stream is being opened upstream");
        Some(Opening { order: order.clone(), session: session.into(), generation, _done: tx })
    }

    /// Waits until no GET of `session` is being opened upstream, or [`MAX_WAIT`].
    pub async fn settled(&self, session: Option<&str>) {
        let Some(session) = session else { return };
        if self.0.opening.load(Ordering::Acquire) == 0 {
            return;
        }
        let rx = {
            let table = self.0.table.lock().unwrap_or_else(|p| p.into_inner());
            match table.get(session) {
                Some((_, rx)) => rx.clone(),
                None => return,
            }
        };
        let mut rx = rx;
        // `changed` fails once the opener's sender is dropped: the GET's head came back (or the
        // GET failed). Nothing is ever sent, so it cannot succeed.
        let waited = tokio::time::timeout(MAX_WAIT, rx.changed()).await;
        tracing::trace!(session, timed_out = waited.is_err(), "a POST waited for its session's GET");
    }
}

impl Drop for Opening {
    fn drop(&mut self) {
        tracing::trace!(session = &*self.session, "a GET stream's head is back");
        let mut table = self.order.table.lock().unwrap_or_else(|p| p.into_inner());
        if table.get(&self.session).is_some_and(|(g, _)| *g == self.generation) {
            table.remove(&self.session);
            self.order.opening.fetch_sub(1, Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_post_waits_for_its_sessions_get_head_and_no_longer() {
        let order = StreamOrder::default();
        let opening = order.opening(Some("s1"));
        let start = tokio::time::Instant::now();
        let wait = async {
            order.settled(Some("s1")).await;
            tokio::time::Instant::now() - start
        };
        let release = async {
            tokio::time::sleep(Duration::from_millis(7)).await;
            drop(opening);
        };
        let (waited, ()) = tokio::join!(wait, release);
        assert_eq!(waited, Duration::from_millis(7));
        assert_eq!(order.0.opening.load(Ordering::Relaxed), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn other_sessions_and_sessionless_posts_never_wait() {
        let order = StreamOrder::default();
        let _opening = order.opening(Some("s1"));
        let start = tokio::time::Instant::now();
        order.settled(Some("s2")).await;
        order.settled(None).await;
        assert_eq!(tokio::time::Instant::now(), start);
    }

    #[tokio::test(start_paused = true)]
    async fn an_upstream_that_holds_the_get_head_costs_one_bounded_wait() {
        let order = StreamOrder::default();
        let _opening = order.opening(Some("s1"));
        let start = tokio::time::Instant::now();
        order.settled(Some("s1")).await;
        assert_eq!(tokio::time::Instant::now() - start, MAX_WAIT);
    }

    #[test]
    fn a_second_get_of_a_session_replaces_the_first_and_the_first_cannot_remove_it() {
        let order = StreamOrder::default();
        let first = order.opening(Some("s1"));
        let second = order.opening(Some("s1"));
        drop(first);
        assert_eq!(order.0.opening.load(Ordering::Relaxed), 1, "the second GET is still opening");
        drop(second);
        assert_eq!(order.0.opening.load(Ordering::Relaxed), 0);
    }
}
