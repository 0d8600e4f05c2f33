//! Keeps one session's requests in the order the agent sent them, across connections.
//!
//! A Streamable HTTP client opens its GET stream and sends its next POST at the same instant, on
//! two connections (the TypeScript SDK opens the GET as soon as `notifications/initialized` is
//! accepted). A server that sends a request of its own (`sampling/createMessage`,
//! `elicitation/create`) with no related request puts it on the GET stream, and the reference
//! TypeScript server drops it when no GET is attached yet. Directly, the GET usually arrives
//! first; through a proxy the two race on separate tasks and upstream connections (measured: the
//! GET waited 12–25 ms for a pooled upstream connection while the POST got a fresh one), and the
//! POST could overtake. So a session's POSTs wait:
//!
//! - while its GET is being opened upstream (sent, response head not yet back), for the head, at
//!   most [`MAX_WAIT`];
//! - for [`EXPECT_WINDOW`] after its `notifications/initialized`, for a GET to start, in case it
//!   is still on its way through the proxy.
//!
//! A client that opens no GET pays at most one [`EXPECT_WINDOW`] on a call made right after
//! initialising, and an upstream that holds its GET head back one [`MAX_WAIT`]; nothing hangs.
//! The fast path is one atomic load: nothing is locked while no session is in either state.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// How long a POST waits for its session's GET to be attached upstream.
pub const MAX_WAIT: Duration = Duration::from_millis(250);

/// How long after `notifications/initialized` a POST waits for the session's GET to start.
pub const EXPECT_WINDOW: Duration = Duration::from_millis(50);

/// Sessions tracked at once; beyond it new ones are not (they lose only the ordering).
const MAX_TRACKED: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Initialised; a GET may be on its way (until the deadline).
    Expected,
    /// The GET was sent upstream; its head is not back.
    Opening,
    /// The GET's head is back (or it failed): nothing to wait for.
    Attached,
}

#[derive(Debug)]
struct Slot {
    generation: u64,
    deadline: Instant,
    stage: watch::Sender<Stage>,
}

#[derive(Debug, Default)]
pub struct StreamOrder(Arc<Table>);

#[derive(Debug, Default)]
struct Table {
    /// Entries in `slots`: read without the lock on every POST.
    tracked: AtomicUsize,
    next: AtomicU64,
    slots: Mutex<HashMap<Box<str>, Slot>>,
}

/// Held while a session's GET is on its way upstream; dropping it releases the waiting POSTs.
#[must_use]
pub struct Opening {
    table: Arc<Table>,
    session: Box<str>,
    generation: u64,
}

impl Table {
    fn insert(&self, session: &str, stage: Stage, deadline: Instant) -> Option<u64> {
        let generation = self.next.fetch_add(1, Ordering::Relaxed);
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(slot) = slots.get_mut(session) {
            slot.generation = generation;
            slot.deadline = deadline;
            slot.stage.send_replace(stage);
            return Some(generation);
        }
        if slots.len() >= MAX_TRACKED {
            let now = Instant::now();
            let before = slots.len();
            slots.retain(|_, s| s.deadline > now);
            self.tracked.fetch_sub(before - slots.len(), Ordering::Release);
            if slots.len() >= MAX_TRACKED {
                return None;
            }
        }
        let (stage, _) = watch::channel(stage);
        slots.insert(session.into(), Slot { generation, deadline, stage });
        self.tracked.fetch_add(1, Ordering::Release);
        Some(generation)
    }

    fn remove(&self, session: &str, generation: Option<u64>) {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(slot) = slots.get(session) {
            if generation.is_none_or(|g| g == slot.generation) {
                slot.stage.send_replace(Stage::Attached);
                slots.remove(session);
                self.tracked.fetch_sub(1, Ordering::Release);
            }
        }
    }
}

impl StreamOrder {
    /// `session` sent `notifications/initialized`: its GET may follow at once.
    pub fn expect_get(&self, session: Option<&str>) {
        if let Some(session) = session {
            self.0.insert(session, Stage::Expected, Instant::now() + EXPECT_WINDOW);
        }
    }

    /// Marks `session`'s GET as being opened; `None` when there is nothing to order.
    pub fn opening(&self, session: Option<&str>) -> Option<Opening> {
        let session = session?;
        let generation = self.0.insert(session, Stage::Opening, Instant::now() + MAX_WAIT)?;
        tracing::trace!(session, "a GET stream is being opened upstream");
        Some(Opening { table: self.0.clone(), session: session.into(), generation })
    }

    /// Waits until `session` has no GET expected or being opened, within the bounds above.
    pub async fn settled(&self, session: Option<&str>) {
        let Some(session) = session else { return };
        if self.0.tracked.load(Ordering::Acquire) == 0 {
            return;
        }
        let (mut rx, expected_until) = {
            let slots = self.0.slots.lock().unwrap_or_else(|p| p.into_inner());
            match slots.get(session) {
                Some(slot) => (slot.stage.subscribe(), slot.deadline),
                None => return,
            }
        };
        let start = Instant::now();
        loop {
            let stage = *rx.borrow_and_update();
            let until = match stage {
                Stage::Attached => break,
                Stage::Opening => start + MAX_WAIT,
                Stage::Expected => expected_until,
            };
            // `changed` fails when the slot is gone (the sender dropped): nothing left to wait for.
            match tokio::time::timeout_at(until, rx.changed()).await {
                Ok(Ok(())) => continue,
                Ok(Err(_)) => break,
                Err(_) => {
                    if stage == Stage::Expected {
                        // No GET came: forget the expectation so later POSTs do not look again.
                        self.0.remove(session, None);
                    }
                    break;
                }
            }
        }
        tracing::trace!(session, waited = ?(Instant::now() - start), "a POST waited for its session's GET");
    }
}

impl Drop for Opening {
    fn drop(&mut self) {
        tracing::trace!(session = &*self.session, "a GET stream's head is back");
        self.table.remove(&self.session, Some(self.generation));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracked(order: &StreamOrder) -> usize {
        order.0.tracked.load(Ordering::Relaxed)
    }

    #[tokio::test(start_paused = true)]
    async fn a_post_waits_for_its_sessions_get_head_and_no_longer() {
        let order = StreamOrder::default();
        let opening = order.opening(Some("s1"));
        let start = Instant::now();
        let wait = async {
            order.settled(Some("s1")).await;
            Instant::now() - start
        };
        let release = async {
            tokio::time::sleep(Duration::from_millis(7)).await;
            drop(opening);
        };
        let (waited, ()) = tokio::join!(wait, release);
        assert_eq!(waited, Duration::from_millis(7));
        assert_eq!(tracked(&order), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn after_initialized_a_post_waits_for_the_get_that_follows_and_its_head() {
        let order = StreamOrder::default();
        order.expect_get(Some("s1"));
        let start = Instant::now();
        let wait = async {
            order.settled(Some("s1")).await;
            Instant::now() - start
        };
        let get = async {
            tokio::time::sleep(Duration::from_millis(3)).await;
            let opening = order.opening(Some("s1"));
            tokio::time::sleep(Duration::from_millis(4)).await;
            drop(opening);
        };
        let (waited, ()) = tokio::join!(wait, get);
        assert_eq!(waited, Duration::from_millis(7));
        assert_eq!(tracked(&order), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_client_that_opens_no_get_waits_once_for_the_window_then_never() {
        let order = StreamOrder::default();
        order.expect_get(Some("s1"));
        let start = Instant::now();
        order.settled(Some("s1")).await;
        assert_eq!(Instant::now() - start, EXPECT_WINDOW);
        assert_eq!(tracked(&order), 0);
        let again = Instant::now();
        order.settled(Some("s1")).await;
        assert_eq!(Instant::now(), again);
    }

    #[tokio::test(start_paused = true)]
    async fn other_sessions_and_sessionless_posts_never_wait() {
        let order = StreamOrder::default();
        let _opening = order.opening(Some("s1"));
        order.expect_get(Some("s3"));
        let start = Instant::now();
        order.settled(Some("s2")).await;
        order.settled(None).await;
        assert_eq!(Instant::now(), start);
    }

    #[tokio::test(start_paused = true)]
    async fn an_upstream_that_holds_the_get_head_costs_one_bounded_wait() {
        let order = StreamOrder::default();
        let _opening = order.opening(Some("s1"));
        let start = Instant::now();
        order.settled(Some("s1")).await;
        assert_eq!(Instant::now() - start, MAX_WAIT);
    }

    #[test]
    fn a_second_get_of_a_session_replaces_the_first_and_the_first_cannot_remove_it() {
        let order = StreamOrder::default();
        let first = order.opening(Some("s1"));
        let second = order.opening(Some("s1"));
        drop(first);
        assert_eq!(tracked(&order), 1, "the second GET is still opening");
        drop(second);
        assert_eq!(tracked(&order), 0);
    }
}
