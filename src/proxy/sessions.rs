//! What the proxy remembers of legacy MCP sessions: the version each negotiated and whether its
//! client can elicit. Bounded; read on the tool-call path only when a call is refused or asked
//! (and for batches), written on `initialize` and `DELETE`.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::mcp::era::Version;

const MAX_SESSIONS: usize = 65_536;

#[derive(Debug, Clone, Copy)]
struct Info {
    version: Version,
    elicits: bool,
}

#[derive(Debug, Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, Info>>,
}

impl Sessions {
    pub fn record(&self, session: &str, version: Version, elicits: bool) {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= MAX_SESSIONS && !map.contains_key(session) {
            // Full: forget an arbitrary session. Forgetting only ever makes batches *refused*.
            if let Some(k) = map.keys().next().cloned() {
                map.remove(&k);
            }
        }
        map.insert(session.to_owned(), Info { version, elicits });
    }

    pub fn version(&self, session: &str) -> Option<Version> {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).get(session).map(|i| i.version)
    }

    /// The negotiated version, and whether the client declared it can elicit (form mode).
    pub fn get(&self, session: &str) -> (Option<Version>, bool) {
        match self.map.lock().unwrap_or_else(|p| p.into_inner()).get(session) {
            Some(i) => (Some(i.version), i.elicits),
            None => (None, false),
        }
    }

    pub fn forget(&self, session: &str) {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).remove(session);
    }
}
