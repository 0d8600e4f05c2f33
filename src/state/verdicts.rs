//! The verdict cache's second tier on the shared store: a verdict one replica got from the model
//! is a hit on the others, so the fleet asks the model once per question.
//!
//! Keys are `{prefix}verdict:v1:{hex digest}` (the digest covers phase, rubric version, model,
//! tool and content; `v1` is the value's format), values the checker's own reply shape, expiring
//! with the cache's TTL. The tier can only save a model call: while the store is seen down it is
//! not asked at all (no check waits `state.timeout` for a store known to be away; the health
//! ping brings it back within a second), and every failure is a miss.

use std::fmt::Write;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::{BoxFuture, FutureExt};

use super::RedisStore;
use crate::checker::cache::{Key, SharedTier};

/// [`SharedTier`] over a [`RedisStore`].
#[derive(Debug, Clone)]
pub struct SharedVerdicts {
    store: Arc<RedisStore>,
}

impl SharedVerdicts {
    pub fn new(store: Arc<RedisStore>) -> SharedVerdicts {
        SharedVerdicts { store }
    }

    fn key(&self, digest: &Key) -> String {
        let mut name = String::with_capacity(11 + 64);
        name.push_str("verdict:v1:");
        for b in digest {
            let _ = write!(name, "{b:02x}");
        }
        self.store.key(&name)
    }
}

impl SharedTier for SharedVerdicts {
    fn get<'a>(&'a self, key: &'a Key) -> BoxFuture<'a, Option<Vec<u8>>> {
        async move {
            if !self.store.up() {
                return None;
            }
            let cmd = redis::cmd("GET").arg(self.key(key)).take();
            self.store.run::<Option<Vec<u8>>>(&cmd).await.ok().flatten()
        }
        .boxed()
    }

    fn put<'a>(&'a self, key: &'a Key, value: Vec<u8>, ttl: Duration) -> BoxFuture<'a, ()> {
        async move {
            if !self.store.up() {
                return;
            }
            let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
            let cmd = redis::cmd("SET").arg(self.key(key)).arg(value).arg("PX").arg(ms).take();
            if let Err(e) = self.store.run::<()>(&cmd).await {
                tracing::debug!(error = %e, "a verdict was not shared");
            }
        }
        .boxed()
    }
}
