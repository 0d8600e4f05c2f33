//! The keys the repeated-denial breaker keeps streaks under: a session's id, a principal's
//! digest (`caller:` and eight bytes of hex, built on the stack), and a call's (at most four)
//! of them.

use std::borrow::Cow;
use std::sync::Arc;

/// A principal's table key, `caller:` and the first eight bytes of its digest in lower hex,
/// built on the stack (every call with a principal spells one); `#more` names the streak its
/// sessions beyond the share pool into.
#[derive(Clone, Copy)]
pub(super) struct CallerKey {
    buf: [u8; CallerKey::MAX],
    len: usize,
}

impl CallerKey {
    pub(super) const PREFIX: &'static str = "caller:";
    pub(super) const MORE: &'static str = "#more";
    const MAX: usize = CallerKey::PREFIX.len() + 16 + CallerKey::MORE.len();

    pub(super) fn of(principal: &str) -> CallerKey {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let d = crate::call::principal_digest(principal);
        let mut key = CallerKey { buf: [0; CallerKey::MAX], len: CallerKey::PREFIX.len() };
        key.buf[..key.len].copy_from_slice(CallerKey::PREFIX.as_bytes());
        for b in &d[..8] {
            key.buf[key.len] = HEX[usize::from(b >> 4)];
            key.buf[key.len + 1] = HEX[usize::from(b & 0xf)];
            key.len += 2;
        }
        key
    }

    pub(super) fn more(mut self) -> CallerKey {
        self.buf[self.len..self.len + CallerKey::MORE.len()].copy_from_slice(CallerKey::MORE.as_bytes());
        self.len += CallerKey::MORE.len();
        self
    }

    pub(super) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).expect("ASCII by construction")
    }
}

/// The table key of a principal (never the raw credential).
pub(crate) fn principal_key(principal: &str) -> String {
    CallerKey::of(principal).as_str().to_owned()
}

/// The principal of the configured agent at the root of a delegated agent's chain
/// (`agent:dev>kid>lint` → `agent:dev`): its streak follows the authority it acts under. `None`
/// for any other principal. (An agent's principal is `agent:` and its id, and a delegated id is
/// its root's name, `>` and its labels; configured names hold no `>`.)
pub(super) fn root_principal(principal: &str) -> Option<&str> {
    let id = principal.strip_prefix(AGENT)?;
    let root = id.find('>')?;
    Some(&principal[..AGENT.len() + root])
}

/// The address a principal known only by it calls from: `peer:IP` itself, or the address an
/// unverified token was sent from (`peer:IP/authorization:…`, see `proxy/pre.rs`). `None` for an
/// agent.
pub(super) fn address_of(principal: &str) -> Option<&str> {
    if !principal.starts_with("peer:") {
        return None;
    }
    Some(principal.split_once('/').map_or(principal, |(address, _)| address))
}

/// How the transports spell an authenticated agent's principal (`agent:dev`).
const AGENT: &str = "agent:";

/// The table key of a session id (one spelled like a principal key is kept apart from them, and
/// the escape is itself escaped, so no two ids share a key).
pub(super) fn session_key(session: &str) -> Cow<'_, str> {
    if session.starts_with(CallerKey::PREFIX) || session.starts_with('#') || session.starts_with(SESSION) {
        Cow::Owned(format!("{SESSION}{session}"))
    } else {
        Cow::Borrowed(session)
    }
}

/// The escape of a session id spelled like another kind of key.
const SESSION: &str = "session:";

/// One table key of a call, borrowed or on the stack.
pub(super) enum Key<'a> {
    Session(Cow<'a, str>),
    Owner(Arc<str>),
    Caller(CallerKey),
}

impl Key<'_> {
    pub(super) fn as_str(&self) -> &str {
        match self {
            Key::Session(s) => s,
            Key::Owner(o) => o,
            Key::Caller(c) => c.as_str(),
        }
    }
}

/// The (at most four) keys one call feeds and reads: its session's, the session owner's, its
/// principal's, and its root agent's; and which of them is the principal's own.
#[derive(Default)]
pub(super) struct Keys<'a> {
    keys: [Option<Key<'a>>; 4],
    principal: Option<CallerKey>,
    /// The address the principal calls from, when it is known only by it (`peer:IP`, or an
    /// unverified token sent from it): a contained flag's key.
    address: Option<CallerKey>,
}

impl<'a> Keys<'a> {
    pub(super) fn push(&mut self, key: Key<'a>) {
        if self.iter().any(|k| k == key.as_str()) {
            return;
        }
        let free = self.keys.iter_mut().find(|k| k.is_none()).expect("a call has at most four keys");
        *free = Some(key);
    }

    /// Records `key` as the principal's own (and feeds it).
    pub(super) fn push_principal(&mut self, key: CallerKey) {
        self.principal = Some(key);
        self.push(Key::Caller(key));
    }

    /// Records `key` as the address the principal calls from (and feeds it).
    pub(super) fn push_address(&mut self, key: CallerKey) {
        self.address = Some(key);
        self.push(Key::Caller(key));
    }

    /// The contained keys: the principal's and its address's, when it is known by its address.
    pub(super) fn contained(&self) -> impl Iterator<Item = &str> {
        let address = self.address.as_ref().map(CallerKey::as_str);
        let principal = self.principal.as_ref().filter(|p| address.is_some_and(|a| a != p.as_str()));
        principal.into_iter().chain(self.address.as_ref()).map(CallerKey::as_str)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().flatten().map(Key::as_str)
    }
}
