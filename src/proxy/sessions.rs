//! What the proxy remembers of legacy MCP sessions: the version each negotiated and whether its
//! client can elicit. Bounded; read on the tool-call path only when a call is refused or asked
//! (and for batches), written on `initialize` and `DELETE`.
//!
//! It also holds each session's watched calls ([`SessionCalls`]), which every stream of the
//! session checks its responses against. Looked up once per request, never per event.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::gate::post::SessionCalls;
use crate::mcp::era::Version;

const MAX_SESSIONS: usize = 65_536;

/// How many sessions' call tables are kept (each holds at most
/// [`MAX_CALLS`](crate::gate::post::session::MAX_CALLS) calls, without their arguments).
const MAX_CALL_TABLES: usize = 4_096;

type CallTables = HashMap<(Arc<str>, String), Arc<SessionCalls>>;

#[derive(Debug, Clone, Copy)]
struct Info {
    version: Version,
    elicits: bool,
}

#[derive(Debug, Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, Info>>,
    calls: Mutex<CallTables>,
    /// A table with calls in it was dropped to make room: a session whose table is made anew
    /// may be that one, so it starts overflowed (every response inspected).
    lost: AtomicBool,
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

    /// The call table of `session` on `upstream`, made on first use.
    pub fn calls(&self, upstream: &Arc<str>, session: &str) -> Arc<SessionCalls> {
        let mut map = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = map.get(&(upstream.clone(), session.to_owned())) {
            return c.clone();
        }
        if map.len() >= MAX_CALL_TABLES {
            // Drop a session that watched nothing if there is one; else any, failing safe: its
            // streams and any table made later for a dropped session inspect every response.
            let key = map
                .iter()
                .find(|(_, c)| !c.is_active())
                .or_else(|| map.iter().next())
                .map(|(k, _)| k.clone());
            if let Some(dropped) = key.and_then(|k| map.remove(&k)) {
                if dropped.is_active() {
                    dropped.overflow();
                    self.lost.store(true, Ordering::Relaxed);
                }
            }
        }
        let table = SessionCalls::new(upstream.clone());
        if self.lost.load(Ordering::Relaxed) {
            table.overflow();
        }
        let table = Arc::new(table);
        map.insert((upstream.clone(), session.to_owned()), table.clone());
        table
    }

    /// The session ended (`DELETE`): its calls are no longer awaited.
    pub fn forget_calls(&self, upstream: &Arc<str>, session: &str) {
        self.calls.lock().unwrap_or_else(|p| p.into_inner()).remove(&(upstream.clone(), session.to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::ToolCall;
    use crate::mcp::era::Era;
    use crate::mcp::jsonrpc::IdKey;
    use serde_json::value::RawValue;

    #[test]
    fn every_stream_of_a_session_shares_one_call_table() {
        let s = Sessions::default();
        let up: Arc<str> = "up".into();
        let a = s.calls(&up, "S");
        assert!(Arc::ptr_eq(&a, &s.calls(&up, "S")));
        assert!(!Arc::ptr_eq(&a, &s.calls(&"other".into(), "S")), "upstreams choose session ids");
    }

    #[test]
    fn dropping_a_table_with_calls_makes_later_tables_inspect_everything() {
        let s = Sessions::default();
        let up: Arc<str> = "up".into();
        let id = IdKey::new(&RawValue::from_string("1".into()).unwrap());
        let unrelated = IdKey::new(&RawValue::from_string("\"x\"".into()).unwrap());
        let tables: Vec<_> = (0..=MAX_CALL_TABLES)
            .map(|i| {
                let t = s.calls(&up, &i.to_string());
                t.watch(id.clone(), ToolCall::mcp(up.clone(), "read", None, Era::Legacy));
                t
            })
            .collect();
        let (last, before) = tables.split_last().unwrap();
        let dropped = before.iter().filter(|t| t.answer(&unrelated).is_some()).count();
        assert_eq!(dropped, 1, "the dropped table's streams inspect everything");
        assert!(last.answer(&unrelated).is_some(), "the table made in its place too");
        assert!(s.calls(&up, "new").answer(&unrelated).is_some(), "so does any table made later");
    }
}
