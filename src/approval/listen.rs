//! What other replicas publish, applied to this replica's tables: flags raised and cleared,
//! waivers cleared, parked asks decided elsewhere (the messages are [`super::shared`]'s).

use std::sync::Arc;

use super::flags::Flags;
use super::fleet::Fleet;
use super::shared::Message;
use super::waivers::Waivers;
use crate::state::{Event, RedisStore};

/// Applies what other replicas publish to this replica's tables, until the store is dropped.
pub(super) fn listen(store: &Arc<RedisStore>, flags: Arc<Flags>, waivers: Arc<Waivers>, fleet: Arc<Fleet>) {
    let mut events = store.events();
    let store = Arc::downgrade(store);
    tokio::spawn(async move {
        loop {
            let event = match events.recv().await {
                Ok(e) => e,
                // Missed some: reload what can be reloaded.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => Event::Resync,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            };
            match event {
                Event::Resync => {
                    let Some(store) = store.upgrade() else { return };
                    match store.run::<Vec<String>>(redis::cmd("SMEMBERS").arg(store.key("flags"))).await {
                        Ok(keys) => keys.iter().for_each(|k| flags.mark(k)),
                        Err(e) => tracing::warn!(error = %e, "could not reload the shared flags"),
                    }
                }
                Event::Message(bytes) => match serde_json::from_slice::<Message>(&bytes) {
                    Ok(Message::Flag { key }) => flags.mark(&key),
                    Ok(Message::Unflag { key }) => flags.unmark(&key),
                    Ok(Message::WaiversCleared) => waivers.clear_local(),
                    Ok(Message::Decided { id, decision }) => fleet.decided_elsewhere(id, &decision),
                    Err(_) => {}
                },
            }
        }
    });
}
