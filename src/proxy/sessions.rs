//! What the proxy remembers of legacy MCP sessions: the version each negotiated. Bounded; only
//! touched on `initialize`, `DELETE` and batches, never on the tool-call hot path.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::mcp::era::Version;

const MAX_SESSIONS: usize = 65_536;

#[derive(Debug, Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, Version>>,
}

impl Sessions {
    pub fn record(&self, session: &str, version: Version) {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= MAX_SESSIONS && !map.contains_key(session) {
            // Full: forget an arbitrary session. Forgetting only ever makes batches *refused*.
            if let Some(k) = map.keys().next().cloned() {
                map.remove(&k);
            }
        }
        map.insert(session.to_owned(), version);
    }

    pub fn version(&self, session: &str) -> Option<Version> {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).get(session).copied()
    }

    pub fn forget(&self, session: &str) {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).remove(session);
    }
}
