//! Redis / Valkey as the shared store, through the `redis` crate's multiplexed, self-healing
//! connection (`ConnectionManager`) and one pub/sub connection for events. No protocol by hand.
//!
//! Every operation is bounded by `state.timeout`; one that fails or times out is a
//! [`StoreError`], and each kind of state decides what that means (see `docs/deploy.md`). A
//! health task pings every second and keeps `portcullis_state_backend_up` true to what the
//! last ping saw, so an outage shows within a second and recovery needs no operator.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Cmd, FromRedisValue};
use tokio::sync::broadcast;

use crate::config::state::StateSettings;
use crate::telemetry::Metrics;

/// Why a store operation did not happen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// Not connected, refused, or no answer within `state.timeout`.
    #[error("the state store is unreachable ({0})")]
    Unavailable(String),
    /// The store answered something this proxy did not expect.
    #[error("the state store answered unexpectedly ({0})")]
    Protocol(String),
}

/// What the pub/sub connection delivers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The subscription was (re)made: events may have been missed, so whoever mirrors shared
    /// state reloads it.
    Resync,
    /// One message published by some replica (this one included).
    Message(Arc<[u8]>),
}

/// A shared store.
pub struct RedisStore {
    client: redis::Client,
    conn: ConnectionManager,
    prefix: String,
    timeout: Duration,
    up: AtomicBool,
    metrics: Arc<Metrics>,
    events: broadcast::Sender<Event>,
}

impl std::fmt::Debug for RedisStore {
    // The URL may carry a password: only the prefix is shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("prefix", &self.prefix)
            .field("up", &self.up())
            .finish_non_exhaustive()
    }
}

const HEALTH_EVERY: Duration = Duration::from_secs(1);

impl RedisStore {
    /// Sets up the store without connecting (connections are made in the background and
    /// remade when lost). `Err` is why `url` is not usable, without the URL itself.
    pub fn open(
        url: &str,
        settings: &StateSettings,
        metrics: Arc<Metrics>,
    ) -> Result<Arc<RedisStore>, String> {
        let client = redis::Client::open(url).map_err(|e| format!("{:?}", e.kind()))?;
        let config = ConnectionManagerConfig::new()
            .set_response_timeout(Some(settings.timeout))
            .set_connection_timeout(Some(settings.timeout.max(Duration::from_millis(250))))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_secs(1));
        let conn =
            ConnectionManager::new_lazy_with_config(client.clone(), config).map_err(|e| e.to_string())?;
        let (events, _) = broadcast::channel(1024);
        let store = Arc::new(RedisStore {
            client,
            conn,
            prefix: settings.prefix.clone(),
            timeout: settings.timeout,
            up: AtomicBool::new(false),
            metrics,
            events,
        });
        store.metrics.state_backend_up(false);
        tokio::spawn(health(Arc::downgrade(&store)));
        tokio::spawn(subscriber(Arc::downgrade(&store)));
        Ok(store)
    }

    /// `prefix` + `name`.
    pub fn key(&self, name: &str) -> String {
        let mut k = String::with_capacity(self.prefix.len() + name.len());
        k.push_str(&self.prefix);
        k.push_str(name);
        k
    }

    /// Whether the last health check or operation reached the store.
    pub fn up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    fn mark(&self, up: bool) {
        if self.up.swap(up, Ordering::Relaxed) != up {
            self.metrics.state_backend_up(up);
            if up {
                tracing::info!("the state store is reachable again");
            } else {
                tracing::warn!("the state store is unreachable: asks resolve as headless, waivers miss, approval retries are refused until it is back");
            }
        }
    }

    /// Runs one command, bounded by `state.timeout`.
    pub async fn run<T: FromRedisValue>(&self, cmd: &Cmd) -> Result<T, StoreError> {
        let mut conn = self.conn.clone();
        match tokio::time::timeout(self.timeout, cmd.query_async::<T>(&mut conn)).await {
            Err(_) => {
                self.mark(false);
                Err(StoreError::Unavailable(format!("no answer within {:?}", self.timeout)))
            }
            Ok(Err(e))
                if e.is_io_error()
                    || e.is_connection_dropped()
                    || e.is_connection_refusal()
                    || e.is_timeout() =>
            {
                self.mark(false);
                Err(StoreError::Unavailable(format!("{:?}", e.kind())))
            }
            Ok(Err(e)) => Err(StoreError::Protocol(format!("{:?}", e.kind()))),
            Ok(Ok(v)) => {
                self.mark(true);
                Ok(v)
            }
        }
    }

    /// Publishes `payload` to every replica (this one too).
    pub async fn publish(&self, payload: &[u8]) -> Result<(), StoreError> {
        let channel = self.key("events");
        self.run::<i64>(redis::cmd("PUBLISH").arg(channel).arg(payload)).await.map(|_| ())
    }

    /// Events published by any replica, from now on.
    pub fn events(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }
}

/// Pings every second while the store is held anywhere.
async fn health(store: std::sync::Weak<RedisStore>) {
    loop {
        let Some(s) = store.upgrade() else { return };
        let _ = s.run::<String>(&redis::cmd("PING")).await;
        drop(s);
        tokio::time::sleep(HEALTH_EVERY).await;
    }
}

/// Keeps one pub/sub connection subscribed to `{prefix}events`, remaking it when lost, and
/// hands what arrives to [`RedisStore::events`]; each (re)subscription sends [`Event::Resync`].
async fn subscriber(store: std::sync::Weak<RedisStore>) {
    use futures_util::StreamExt;
    let mut pause = Duration::from_millis(100);
    loop {
        let Some(s) = store.upgrade() else { return };
        let (client, channel, events) = (s.client.clone(), s.key("events"), s.events.clone());
        let timeout = s.timeout.max(Duration::from_millis(250));
        drop(s);
        let connected = tokio::time::timeout(timeout, async {
            let mut ps = client.get_async_pubsub().await?;
            ps.subscribe(&channel).await?;
            Ok::<_, redis::RedisError>(ps)
        })
        .await;
        if let Ok(Ok(ps)) = connected {
            pause = Duration::from_millis(100);
            let _ = events.send(Event::Resync);
            let mut stream = ps.into_on_message();
            while let Some(msg) = stream.next().await {
                if store.strong_count() == 0 {
                    return;
                }
                let _ = events.send(Event::Message(Arc::from(msg.get_payload_bytes())));
            }
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(2));
    }
}
