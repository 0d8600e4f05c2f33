//! The calls a session is waiting on, shared by every stream of the session. Clients match a
//! response to its request by id whatever stream it arrives on (the call's own POST stream, an
//! earlier POST stream still open, the GET stream, a JSON answer), so a watch kept per stream
//! would let an upstream answer a watched call where nobody looks. A pending `tools/list` is
//! kept here too: its answer is screened wherever it turns up.
//!
//! An entry stays after its first answer: a second answer to the same id is inspected too (the
//! SDKs take the first and drop the rest, but which one a client sees first is a race between
//! streams while the proxy holds one for a check). The table is bounded; when it must drop a
//! call nobody answered yet, the session is *overflowed* and every response on it is inspected.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::call::ToolCall;
use crate::mcp::era::Era;
use crate::mcp::jsonrpc::IdKey;

/// How many calls (answered or not) one session remembers.
pub const MAX_CALLS: usize = 128;

/// The tool name an answer is judged under when its call is not known (an overflowed session,
/// a replay on a GET stream): the upstream's catch-all, `mcp__{upstream}__(unknown call)`.
pub const UNKNOWN_CALL: &str = "(unknown call)";

/// One session's watched calls.
#[derive(Debug)]
pub struct SessionCalls {
    upstream: Arc<str>,
    /// True once anything was watched: until then, streams need not look at responses at all.
    active: AtomicBool,
    table: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    entries: VecDeque<Entry>,
    overflowed: bool,
}

#[derive(Debug)]
struct Entry {
    id: IdKey,
    pending: Pending,
    answered: bool,
}

/// What a session waits on under one id.
#[derive(Debug, Clone)]
pub enum Pending {
    /// A call (a `tools/call`, or another request whose answer is judged).
    Call(ToolCall),
    /// A `tools/list` of the session's upstream, by this agent: its answer is screened and
    /// filtered for it.
    List(Option<Arc<crate::identity::Agent>>),
}

impl SessionCalls {
    pub fn new(upstream: Arc<str>) -> Self {
        SessionCalls { upstream, active: AtomicBool::new(false), table: Mutex::default() }
    }

    /// True when responses on this session's streams must be looked up (no lock, no allocation).
    pub fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Remembers that `call` (a forwarded request with id `id`) awaits its result.
    pub fn watch(&self, id: IdKey, call: ToolCall) {
        // The arguments stay with the stream's own watch; a table of many sessions holds names.
        self.remember(id, Pending::Call(ToolCall { args: None, ..call }));
    }

    /// Remembers that a `tools/list` with id `id`, by `agent`, awaits its answer.
    pub fn watch_list(&self, id: IdKey, agent: Option<Arc<crate::identity::Agent>>) {
        self.remember(id, Pending::List(agent));
    }

    /// The upstream whose session this is.
    pub fn upstream(&self) -> &Arc<str> {
        &self.upstream
    }

    fn remember(&self, id: IdKey, pending: Pending) {
        let mut t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        if t.entries.len() >= MAX_CALLS {
            // Forget an answered call first (clients drop answers to ids they no longer wait
            // on); a pending one only when every entry is pending, and then look at everything.
            match t.entries.iter().position(|e| e.answered) {
                Some(i) => {
                    t.entries.remove(i);
                }
                None => {
                    t.entries.pop_front();
                    t.overflowed = true;
                }
            }
        }
        if t.entries.capacity() == 0 {
            // One slot for a session's first call, not the four a first push reserves: most
            // tables kept for the bound's 4,096 sessions hold one call (an entry is ~220 bytes;
            // a heap profile of 1,000 one-call sessions found 0.9 KB each, issue 29).
            t.entries.reserve_exact(1);
        }
        t.entries.push_back(Entry { id, pending, answered: false });
        self.active.store(true, Ordering::Release);
    }

    /// From now on every response of the session is inspected (its table lost calls).
    pub fn overflow(&self) {
        self.table.lock().unwrap_or_else(|p| p.into_inner()).overflowed = true;
        self.active.store(true, Ordering::Release);
    }

    /// What a response with id `id` may answer (marked answered), or, on an overflowed
    /// session, the upstream's unknown call. `None`: no client waits on this id.
    /// What [`Self::answer`] would give for `id`, without marking it answered.
    pub fn peek(&self, id: &IdKey) -> Option<Pending> {
        let t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let i = t
            .entries
            .iter()
            .position(|e| !e.answered && id.answers(&e.id))
            .or_else(|| t.entries.iter().position(|e| id.answers(&e.id)));
        i.map(|i| t.entries[i].pending.clone())
    }

    pub fn answer(&self, id: &IdKey) -> Option<Pending> {
        let mut t = self.table.lock().unwrap_or_else(|p| p.into_inner());
        // Pending calls first: a wild id is judged under a call still waiting.
        let i = t
            .entries
            .iter()
            .position(|e| !e.answered && id.answers(&e.id))
            .or_else(|| t.entries.iter().position(|e| id.answers(&e.id)));
        match i {
            Some(i) => {
                let e = &mut t.entries[i];
                e.answered = true;
                Some(e.pending.clone())
            }
            None if t.overflowed => Some(Pending::Call(self.unknown_call())),
            None => None,
        }
    }

    fn unknown_call(&self) -> ToolCall {
        ToolCall::mcp(self.upstream.clone(), UNKNOWN_CALL, None, Era::Legacy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::value::RawValue;

    fn key(json: &str) -> IdKey {
        IdKey::new(&RawValue::from_string(json.into()).unwrap())
    }

    fn calls() -> SessionCalls {
        SessionCalls::new("up".into())
    }

    fn call(name: &str) -> ToolCall {
        ToolCall::mcp("up".into(), name, None, Era::Legacy)
    }

    /// The name of the call `id` answers, if it answers one.
    fn answers(s: &SessionCalls, id: &str) -> Option<String> {
        match s.answer(&key(id)) {
            Some(Pending::Call(c)) => Some(c.name),
            Some(Pending::List(_)) => Some("(list)".into()),
            None => None,
        }
    }

    #[test]
    fn a_session_that_watched_nothing_is_not_looked_at() {
        let s = calls();
        assert!(!s.is_active());
        s.watch(key("1"), call("read"));
        assert!(s.is_active());
    }

    #[test]
    fn any_spelling_of_a_watched_id_finds_its_call_and_so_does_a_second_answer() {
        let s = calls();
        s.watch(key("4"), call("read"));
        assert_eq!(answers(&s, "\" 4 \""), Some("read".into()));
        assert_eq!(answers(&s, "4.0"), Some("read".into()), "answered, still watched");
        assert!(s.answer(&key("5")).is_none());
        s.watch_list(key("6"), None);
        assert_eq!(answers(&s, "\"6\""), Some("(list)".into()), "a pending list is kept beside calls");
    }

    #[test]
    fn dropping_a_pending_call_makes_every_response_of_the_session_inspected() {
        let s = calls();
        for i in 0..MAX_CALLS {
            s.watch(key(&i.to_string()), call("read"));
        }
        assert!(s.answer(&key("100000")).is_none());
        s.watch(key("100000"), call("read"));
        let got = answers(&s, "\"0\"").expect("the dropped call's answer is still inspected");
        assert_eq!(got, UNKNOWN_CALL);
        assert_eq!(answers(&s, "\"unrelated\""), Some(UNKNOWN_CALL.into()));
    }

    #[test]
    fn a_session_with_one_call_keeps_room_for_one() {
        let s = calls();
        s.watch(key("1"), call("read"));
        assert_eq!(s.table.lock().unwrap().entries.capacity(), 1);
        s.watch(key("2"), call("read"));
        assert_eq!(answers(&s, "1"), Some("read".into()), "a second call grows the table as usual");
        assert_eq!(answers(&s, "2"), Some("read".into()));
    }

    #[test]
    fn answered_calls_make_room_before_pending_ones() {
        let s = calls();
        for i in 0..MAX_CALLS {
            s.watch(key(&i.to_string()), call("read"));
        }
        s.answer(&key("7"));
        s.watch(key("100000"), call("write"));
        assert!(s.answer(&key("7")).is_none(), "the answered call made room");
        assert!(s.answer(&key("0")).is_some());
        assert!(s.answer(&key("\"unrelated\"")).is_none(), "not overflowed");
    }
}
