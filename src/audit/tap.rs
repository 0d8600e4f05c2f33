//! The live tap (`GET /decisions/stream`): every audit record, as its JSON line, to each
//! subscriber through a queue of its own, bounded in events and in bytes (a refusal's line names
//! its command, which may be long). A subscriber that does not keep up loses events (counted,
//! and told so) and never slows a call: sending is a `try_send`, and when nobody subscribes the
//! call path does not even take the lock.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

/// Events a subscriber may fall behind by before it loses some.
pub const BUFFER: usize = 256;
/// Bytes of events a subscriber may fall behind by (one event is always let through).
pub const BUFFER_BYTES: usize = 512 << 10;

/// One subscriber's end: the events, and how many it lost.
#[derive(Debug)]
pub struct Subscription {
    events: mpsc::Receiver<Arc<str>>,
    pub lost: Arc<AtomicU64>,
    queued: Arc<AtomicUsize>,
}

impl Subscription {
    /// The next event; `None` once the tap is closed and the queue drained.
    pub async fn next(&mut self) -> Option<Arc<str>> {
        let line = self.events.recv().await?;
        self.queued.fetch_sub(line.len(), Ordering::Relaxed);
        Some(line)
    }

    /// The next event if one is queued (tests).
    #[cfg(test)]
    fn ready(&mut self) -> Result<Arc<str>, mpsc::error::TryRecvError> {
        let line = self.events.try_recv()?;
        self.queued.fetch_sub(line.len(), Ordering::Relaxed);
        Ok(line)
    }
}

#[derive(Debug)]
struct Subscriber {
    tx: mpsc::Sender<Arc<str>>,
    lost: Arc<AtomicU64>,
    queued: Arc<AtomicUsize>,
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
        let (lost, queued) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicUsize::new(0)));
        let mut subs = self.subscribers.lock().unwrap_or_else(|p| p.into_inner());
        subs.push(Subscriber { tx, lost: lost.clone(), queued: queued.clone() });
        self.live.store(subs.len(), Ordering::Relaxed);
        Some(Subscription { events, lost, queued })
    }

    /// Hands `line` to every subscriber that has room; forgets those that went away.
    pub fn send(&self, line: &Arc<str>) {
        if !self.is_live() {
            return;
        }
        let mut subs = self.subscribers.lock().unwrap_or_else(|p| p.into_inner());
        subs.retain(|s| {
            let queued = s.queued.load(Ordering::Relaxed);
            if queued > 0 && queued + line.len() > BUFFER_BYTES {
                s.lost.fetch_add(1, Ordering::Relaxed);
                return !s.tx.is_closed();
            }
            match s.tx.try_send(line.clone()) {
                Ok(()) => {
                    s.queued.fetch_add(line.len(), Ordering::Relaxed);
                    true
                }
                Err(mpsc::error::TrySendError::Full(_)) => {
                    s.lost.fetch_add(1, Ordering::Relaxed);
                    true
                }
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            }
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
            assert!(fast.ready().is_ok());
        }
        for _ in 0..10 {
            tap.send(&line);
            assert!(fast.ready().is_ok(), "the fast one gets every event");
        }
        assert_eq!(slow.lost.load(Ordering::Relaxed), 10);
        assert_eq!(fast.lost.load(Ordering::Relaxed), 0);
        assert!(slow.ready().is_ok(), "what fitted is kept");
    }

    #[test]
    fn a_subscriber_falls_behind_by_bytes_as_well_as_events() {
        let tap = Tap::default();
        let mut slow = tap.subscribe().unwrap();
        let big: Arc<str> = Arc::from("x".repeat(BUFFER_BYTES / 4 + 1));
        for _ in 0..5 {
            tap.send(&big);
        }
        assert_eq!(slow.lost.load(Ordering::Relaxed), 2, "three fit in the bytes allowed");
        while slow.ready().is_ok() {}
        tap.send(&big);
        assert!(slow.ready().is_ok(), "room again once read");
    }

    #[test]
    fn closing_ends_every_stream_and_refuses_new_subscribers() {
        let tap = Tap::default();
        let mut sub = tap.subscribe().unwrap();
        tap.send(&Arc::from("{}"));
        tap.close();
        assert!(sub.ready().is_ok(), "drained first");
        assert!(matches!(sub.ready(), Err(mpsc::error::TryRecvError::Disconnected)));
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
