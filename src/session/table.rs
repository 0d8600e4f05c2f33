//! What the proxy remembers of legacy MCP sessions: the version each negotiated and whether its
//! client can elicit. Bounded; read on every POST of a session — without a lock
//! (`ReadMostly`) — and written on `initialize` and `DELETE`.
//!
//! It also holds each session's watched calls ([`SessionCalls`]), which every stream of the
//! session checks its responses against. Looked up once per request, never per event, and
//! without a lock once the session's table exists.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::mcp::era::Version;
use crate::read_mostly::ReadMostly;
use crate::session::SessionCalls;

const MAX_SESSIONS: usize = 65_536;

/// The key the proxy keeps a session's state under (waivers, flags, negotiated version, watched
/// calls): the id as the agent sent it, prefixed by the authenticated agent (`dev/abc123`), so
/// one agent presenting another's session id finds nothing of it.
///
/// Anonymous callers (`auth.require: false`) live in a namespace no spelling of an id reaches:
/// an agent's key always holds a `/` after a non-empty agent id (agent ids hold no `/`), so an
/// anonymous id without a `/` is kept as it is, and one with a `/` is kept behind a leading `/`
/// (`dev/abc` sent anonymously is `/dev/abc`), which no agent's key starts with. The two forms
/// cannot meet each other either (only one holds a `/`).
pub fn key(id: &str, agent: Option<&crate::identity::Agent>) -> String {
    match agent {
        // An id spelled like a hook session's key (`hook:…`, below) is escaped like one holding
        // a `/`: no MCP or HTTP caller can name the session a user's Claude Code hook runs in.
        None if id.contains('/') || id.starts_with(HOOK) => {
            let mut k = String::with_capacity(1 + id.len());
            k.push('/');
            k.push_str(id);
            k
        }
        None => id.to_owned(),
        Some(a) => {
            let mut k = String::with_capacity(a.id.len() + 1 + id.len());
            k.push_str(&a.id);
            k.push('/');
            k.push_str(id);
            k
        }
    }
}

/// The namespace Claude Code sessions (seen through the hook) are kept in.
const HOOK: &str = "hook:";

/// The key of Claude Code session `id` seen through the hook (`hook:` and its [`key`]): no
/// MCP or plain HTTP session id reaches it, nor does any hook session id reach an MCP session.
pub fn hook_key(id: &str, agent: Option<&crate::identity::Agent>) -> String {
    let mut k = String::from(HOOK);
    k.push_str(&key(id, agent));
    k
}

/// A [`key`]'s scope (the agent id; `""` for an anonymous caller) and the id as sent.
fn scope_of(key: &str) -> (&str, &str) {
    match key.strip_prefix('/') {
        Some(id) => ("", id),
        None => key.split_once('/').unwrap_or(("", key)),
    }
}

/// How many sessions' call tables are kept (each holds at most
/// [`MAX_CALLS`](crate::session::calls::MAX_CALLS) calls, without their arguments).
const MAX_CALL_TABLES: usize = 4_096;

/// A session's call tables, one per upstream it was seen on (upstreams choose session ids, so
/// two may pick the same one; nearly always there is one).
type CallTables = Arc<[(Arc<str>, Arc<SessionCalls>)]>;

#[derive(Debug, Clone, Copy)]
struct Info {
    version: Version,
    elicits: bool,
}

#[derive(Debug)]
pub struct Sessions {
    map: ReadMostly<Info>,
    /// An upstream session id → the scope (agent id, or `""` for anonymous callers) whose
    /// `initialize` it answered: another scope presenting it is told the session is not found.
    opened: ReadMostly<Arc<str>>,
    calls: ReadMostly<CallTables>,
    /// Serializes writers, so each bound is checked and kept in one step.
    writes: Mutex<()>,
    /// Call tables held, over every session.
    tables: AtomicUsize,
    /// A table with calls in it was dropped to make room: a session whose table is made anew
    /// may be that one, so it starts overflowed (every response inspected).
    lost: AtomicBool,
}

impl Default for Sessions {
    fn default() -> Self {
        Sessions {
            map: ReadMostly::new(64),
            opened: ReadMostly::new(64),
            calls: ReadMostly::new(16),
            writes: Mutex::default(),
            tables: AtomicUsize::new(0),
            lost: AtomicBool::new(false),
        }
    }
}

fn table_of(tables: Option<&CallTables>, upstream: &str) -> Option<Arc<SessionCalls>> {
    tables?.iter().find(|(u, _)| **u == *upstream).map(|(_, t)| t.clone())
}

impl Sessions {
    pub fn record(&self, session: &str, version: Version, elicits: bool) {
        let _writes = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        if self.map.len() >= MAX_SESSIONS && !self.map.contains(session) {
            // Full: forget an arbitrary session. Forgetting only ever makes batches *refused*.
            if let Some((k, _)) = self.map.find(|_, _| true) {
                self.map.remove(&k);
            }
        }
        self.map.insert(session, Info { version, elicits });
        let (scope, id) = scope_of(session);
        if self.opened.len() >= MAX_SESSIONS && !self.opened.contains(id) {
            // Full: an arbitrary binding goes (its session is then answered to whoever presents it,
            // as before bindings were kept).
            if let Some((k, _)) = self.opened.find(|_, _| true) {
                self.opened.remove(&k);
            }
        }
        self.opened.insert(id, scope.into());
    }

    /// True when the upstream session `session` (a key, [`key`]) was opened by another scope:
    /// an agent presenting an id it did not open (an unknown id is not foreign: the proxy may
    /// have restarted, or another replica opened it).
    pub fn foreign(&self, session: &str) -> bool {
        let (scope, id) = scope_of(session);
        self.opened.read(id, |o| o.is_some_and(|o| **o != *scope))
    }

    pub fn version(&self, session: &str) -> Option<Version> {
        self.map.read(session, |i| i.map(|i| i.version))
    }

    /// The negotiated version, and whether the client declared it can elicit (form mode).
    pub fn get(&self, session: &str) -> (Option<Version>, bool) {
        self.map.read(session, |i| i.map_or((None, false), |i| (Some(i.version), i.elicits)))
    }

    pub fn forget(&self, session: &str) {
        let _writes = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        self.map.remove(session);
        if !self.foreign(session) {
            self.opened.remove(scope_of(session).1);
        }
    }

    /// The call table of `session` on `upstream`, made on first use.
    pub fn calls(&self, upstream: &Arc<str>, session: &str) -> Arc<SessionCalls> {
        if let Some(c) = self.calls.read(session, |t| table_of(t, upstream)) {
            return c;
        }
        let _writes = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = self.calls.read(session, |t| table_of(t, upstream)) {
            return c;
        }
        if self.tables.load(Ordering::Relaxed) >= MAX_CALL_TABLES {
            // Drop a session that watched nothing if there is one; else any, failing safe: its
            // streams and any table made later for a dropped session inspect every response.
            let idle = |_: &str, t: &CallTables| t.iter().any(|(_, c)| !c.is_active());
            let victim = self.calls.find(idle).or_else(|| self.calls.find(|_, _| true));
            if let Some((s, tables)) = victim {
                let (up, _) = tables.iter().find(|(_, c)| !c.is_active()).unwrap_or(&tables[0]);
                if let Some(dropped) = self.drop_table(up, &s) {
                    if dropped.is_active() {
                        dropped.overflow();
                        self.lost.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
        let table = SessionCalls::new(upstream.clone());
        if self.lost.load(Ordering::Relaxed) {
            table.overflow();
        }
        let table = Arc::new(table);
        let mut tables: Vec<_> = self.calls.get(session).map(|t| t.to_vec()).unwrap_or_default();
        tables.push((upstream.clone(), table.clone()));
        self.calls.insert(session, tables.into());
        self.tables.fetch_add(1, Ordering::Relaxed);
        table
    }

    /// Removes the table of `session` on `upstream`; the caller holds `writes`.
    fn drop_table(&self, upstream: &str, session: &str) -> Option<Arc<SessionCalls>> {
        let tables = self.calls.get(session)?;
        let dropped = table_of(Some(&tables), upstream)?;
        let rest: Vec<_> = tables.iter().filter(|(u, _)| **u != *upstream).cloned().collect();
        if rest.is_empty() {
            self.calls.remove(session);
        } else {
            self.calls.insert(session, rest.into());
        }
        self.tables.fetch_sub(1, Ordering::Relaxed);
        Some(dropped)
    }

    /// The session ended (`DELETE`): its calls are no longer awaited.
    pub fn forget_calls(&self, upstream: &Arc<str>, session: &str) {
        let _writes = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        self.drop_table(upstream, session);
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
    fn an_upstream_session_is_foreign_to_every_scope_but_the_one_that_opened_it() {
        let s = Sessions::default();
        s.record("dev/X", Version::V2025_06_18, false);
        s.record("/a/b", Version::V2025_06_18, false);
        s.record("Y", Version::V2025_06_18, false);
        let table = [
            ("dev/X", false),
            ("ci/X", true),
            ("dev>kid/X", true),
            ("X", true),
            ("/a/b", false),
            ("dev/a/b", true),
            ("Y", false),
            ("dev/Y", true),
            ("ci/unknown", false),
        ];
        for (key, foreign) in table {
            assert_eq!(s.foreign(key), foreign, "{key}");
        }
        s.forget("ci/X");
        assert!(s.foreign("ci/X"), "another scope's DELETE does not unbind it");
        s.forget("dev/X");
        assert!(!s.foreign("ci/X"), "its own DELETE does");
    }

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

    #[test]
    fn delete_forgets_one_upstreams_table_and_keeps_the_others() {
        let s = Sessions::default();
        let (a, b): (Arc<str>, Arc<str>) = ("a".into(), "b".into());
        let (ta, tb) = (s.calls(&a, "S"), s.calls(&b, "S"));
        s.forget_calls(&a, "S");
        assert!(!Arc::ptr_eq(&ta, &s.calls(&a, "S")), "a new table after DELETE");
        assert!(Arc::ptr_eq(&tb, &s.calls(&b, "S")), "the other upstream's is kept");
        assert_eq!(s.tables.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn no_anonymous_spelling_of_an_id_reaches_an_agents_key_or_another_anonymous_one() {
        use crate::identity::Agent;
        let (dev, kid) = (Agent::configured("dev".into()), {
            let mut k = Agent::configured("dev".into());
            k.id = "dev>kid".into();
            k.delegated_by = vec!["dev".into()];
            k
        });
        let ids = ["abc", "dev/abc", "/dev/abc", "dev>kid/abc", "/", "//", "a/", "dev", ""];
        let mut anonymous: Vec<String> = ids.iter().map(|i| key(i, None)).collect();
        for agent in [&dev, &kid] {
            for id in ids {
                let k = key(id, Some(agent));
                assert!(!anonymous.contains(&k), "{k:?} is reachable anonymously");
            }
        }
        assert_eq!(key("dev/abc", None), "/dev/abc");
        assert_eq!(key("abc", None), "abc", "an id without '/' is kept as sent");
        anonymous.sort();
        anonymous.dedup();
        assert_eq!(anonymous.len(), ids.len(), "distinct ids keep distinct keys");
    }

    proptest::proptest! {
        #[test]
        fn an_anonymous_key_never_equals_an_agents(id in "[ -~]{0,12}", other in "[ -~]{0,12}", name in "[A-Za-z0-9._>-]{1,8}") {
            let mut a = crate::identity::Agent::configured(name.as_str().into());
            a.id = name.as_str().into();
            proptest::prop_assert_ne!(key(&id, None), key(&other, Some(&a)));
            if id != other {
                proptest::prop_assert_ne!(key(&id, None), key(&other, None));
            }
        }

        #[test]
        fn no_mcp_session_id_reaches_a_hook_sessions_key(id in "(hook:)?[ -~]{0,12}", other in "(hook:)?[ -~]{0,12}", name in "[A-Za-z0-9._>-]{1,8}") {
            let mut a = crate::identity::Agent::configured(name.as_str().into());
            a.id = name.as_str().into();
            for hook in [hook_key(&other, None), hook_key(&other, Some(&a))] {
                proptest::prop_assert_ne!(&key(&id, None), &hook);
                proptest::prop_assert_ne!(&key(&id, Some(&a)), &hook);
            }
        }
    }

    #[test]
    fn a_session_is_remembered_until_deleted() {
        let s = Sessions::default();
        assert_eq!(s.get("S"), (None, false));
        s.record("S", Version::V2025_06_18, true);
        assert_eq!((s.version("S"), s.get("S").1), (Some(Version::V2025_06_18), true));
        s.forget("S");
        assert_eq!(s.version("S"), None);
    }
}
