//! The live tap (`GET /decisions/stream`): every audit record, as its JSON line, to each
//! subscriber through a bounded queue of its own. A subscriber that does not keep up loses
//! events (counted, and told so) and never slows a call: sending is a `try_send`, and when
//! nobody subscribes the call path does not even take the lock.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

/// Events a subscriber may fall behind by before it loses some.
pub const BUFFER: usize = 256;

/// One subscriber's end: the events, and how many it lost.
#[derive(Debug)]
pub struct Subscription {
    pub events: mpsc::Receiver<Arc<str>>,
    pub lost: Arc<AtomicU64>,
}

#[derive(Debug)]
struct Subscriber {
    tx: mpsc::Sender<Arc<str>>,
    lost: Arc<AtomicU64>,
}

#[derive(Debug, Default)]
pub struct Tap {
    subscribers: Mutex<Vec<Subscriber>>,
    live: AtomicUsize,
    closed: AtomicBool,
}

impl Tap {
    /// Whether anyone listens (a relaxed read: a subscriber that just arrived may miss one).
    pub fn is_live(&self) -> bool {
        self.live.load(Ordering::Relaxed) > 0
    }

    /// A new subscriber; `None` once the tap is closed (the process is shutting down).
    pub fn subscribe(&self) -> Option<Subscription> {
        if self.closed.load(Ordering::Acquire) {
            return None;
        }
        let (tx, events) = mpsc::channel(BUFFER);
        let lost = Arc::new(AtomicU64::new(0));
        let mut subs = self.subscribers.lock().unwrap_or_else(|p| p.into_inner());
        subs.push(Subscriber { tx, lost: lost.clone() });
        self.live.store(subs.len(), Ordering::Relaxed);
        Some(Subscription { events, lost })
    }

    /// Hands `line` to every subscriber that has room; forgets those that went away.
    pub fn send(&self, line: &Arc<str>) {
        if !self.is_live() {
            return;
        }
        let mut subs = self.subscribers.lock().unwrap_or_else(|p| p.into_inner());
        subs.retain(|s| match s.tx.try_send(line.clone()) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                s.lost.fetch_add(1, Ordering::Relaxed);
                true
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        });
        self.live.store(subs.len(), Ordering::Relaxed);
    }

    /// Ends every subscription (their streams end once drained) and refuses new ones.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let mut subs = self.subscribers.lock().unwrap_or_else(|p| p.into_inner());
        subs.clear();
        self.live.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subscriber_that_never_reads_loses_events_counted_and_blocks_no_one() {
        let tap = Tap::default();
        let mut slow = tap.subscribe().unwrap();
        let mut fast = tap.subscribe().unwrap();
        let line: Arc<str> = Arc::from("{}");
        for _ in 0..BUFFER {
            tap.send(&line);
            assert!(fast.events.try_recv().is_ok());
        }
        for _ in 0..10 {
            tap.send(&line);
            assert!(fast.events.try_recv().is_ok(), "the fast one gets every event");
        }
        assert_eq!(slow.lost.load(Ordering::Relaxed), 10);
        assert_eq!(fast.lost.load(Ordering::Relaxed), 0);
        assert!(slow.events.try_recv().is_ok(), "what fitted is kept");
    }

    #[test]
    fn closing_ends_every_stream_and_refuses_new_subscribers() {
        let tap = Tap::default();
        let mut sub = tap.subscribe().unwrap();
        tap.send(&Arc::from("{}"));
        tap.close();
        assert!(sub.events.try_recv().is_ok(), "drained first");
        assert!(matches!(sub.events.try_recv(), Err(mpsc::error::TryRecvError::Disconnected)));
        assert!(tap.subscribe().is_none());
        assert!(!tap.is_live());
    }

    #[test]
    fn a_subscriber_that_went_away_is_forgotten() {
        let tap = Tap::default();
        drop(tap.subscribe().unwrap());
        assert!(tap.is_live());
        tap.send(&Arc::from("{}"));
        assert!(!tap.is_live());
    }
}
