//! The repeated-denial breaker: a session that keeps getting refused (3 in a row or 20 in all, by
//! default) is flagged — logged, counted, listed at `/status` — and every further call in it is
//! asked, waivers or not, until an operator clears it. A hijacked agent hammering the gate meets a
//! human, not an endless supply of retries.
//!
//! Session ids are the caller's to choose (`x-portcullis-session`, a fresh `Mcp-Session-Id`), so
//! streaks are kept per session *and* per caller — the principal, a digest of the
//! `Authorization` header, else the peer address. A flagged principal flags all of its sessions.
//! One principal holds at most [`SESSIONS_PER_PRINCIPAL`] sessions of its own; the sessions
//! beyond share one streak (`{principal}#more`), so fresh ids buy nothing. A session belongs to
//! the principal that first used it: another principal presenting the same id never reads or
//! feeds the first one's streaks (what it does there counts in its own `#more` streak).
//!
//! An address is not an agent: every anonymous agent on one machine calls from loopback. So a
//! flag on an address-keyed caller (`peer:IP`) is contained by default
//! ([`FlagAddress::Sessions`]): it holds the address's calls without a session and each of its
//! sessions that is refused (at its first refusal once the address is flagged), and every session
//! only once `consecutive` of its sessions are held. Rotating session ids still meets a human
//! (each fresh id buys one refused probe, and a few of them hold the address), while a second
//! agent on the machine that is not refused keeps working. `approvals.flag.address: all` holds
//! every call of a flagged address.
//!
//! Streaks follow authority: a delegated agent's refusals count toward its root agent's streak
//! too, and a flagged root flags every agent it delegated to, so a parent minting a fresh child
//! per probe meets a human all the same.
//!
//! The table is bounded and fails safe: a flag is never evicted; an idle unflagged streak is
//! swept only after a day; and a key with no room left shares one streak with every other
//! such key (`#untracked`), which flags as one.
//!
//! Every call reads the table; few write it. Keys are read without a lock (`ReadMostly`) and
//! counts are atomics, so an allowed call in a session seen before, with no run of refusals to
//! end, takes no lock and allocates nothing: it only refreshes when its streaks last saw a call.
//! Everything else — a refusal, ending a run, a key's first call (which claims its place in the
//! table and learns the session's caller), a clear, a sweep — is written under one lock, in the
//! order the old single-lock table did it.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::config::approvals::FlagAddress;
use crate::read_mostly::ReadMostly;
use crate::telemetry::Metrics;

mod keys;
pub(crate) use keys::principal_key;
use keys::{address_of, root_principal, session_key, CallerKey, Key, Keys};

/// Sessions one principal may hold in the table before the rest share a streak.
pub const SESSIONS_PER_PRINCIPAL: usize = 64;
/// Streaks kept in all.
const CAPACITY: usize = 65_536;
/// How long an unflagged streak lives without a call.
const IDLE: Duration = Duration::from_secs(24 * 3600);
/// How often a full table may be swept.
const SWEEP_EVERY: Duration = Duration::from_secs(60);
/// The key every streak shares when the table has no room.
const UNTRACKED: &str = "#untracked";
/// Shards of the key tables: an insert copies about 1/64 of a table.
const SHARDS: usize = 64;
/// Root principals whose keys are remembered (configured agents: a few).
const ROOTS: usize = 1024;
/// How the transports spell a caller known only by its peer address (`peer:IP`).
const ADDRESS: &str = "peer:";

/// One key's counts: changed under the table's lock, read without it.
#[derive(Debug, Default)]
struct Streak {
    consecutive: AtomicU32,
    total: AtomicU32,
    flagged: AtomicBool,
    /// When the key last saw a call, in seconds since the table was made (see [`Flags::now`]).
    last: AtomicU64,
    /// An address key's sessions that were flagged (contained flags, [`FlagAddress::Sessions`]).
    sessions_held: AtomicU32,
}

impl Streak {
    fn new(now: u64) -> Streak {
        Streak { last: AtomicU64::new(now), ..Streak::default() }
    }

    /// Notes a call at `now` (a store only when the second has changed).
    fn touch(&self, now: u64) {
        if self.last.load(Relaxed) != now {
            self.last.store(now, Relaxed);
        }
    }
}

pub struct Flags {
    /// Streaks by key.
    streaks: ReadMostly<Arc<Streak>>,
    /// Session key → the principal key first seen using it. Never shrinks.
    owners: ReadMostly<Arc<str>>,
    /// Principal key → how many sessions it owns in `owners`. Never shrinks.
    held: ReadMostly<Arc<AtomicUsize>>,
    /// Root principal (`agent:dev`) → its key, so a delegated agent's call does not digest its
    /// root's name on every call. At most [`ROOTS`]; beyond, the key is computed each time.
    roots: ReadMostly<CallerKey>,
    /// Taken by every write, so each call's keys are claimed and counted as one step.
    book: Mutex<()>,
    /// When the full table was last swept: seconds since `epoch`, plus one (0: never).
    swept: AtomicU64,
    epoch: Instant,
    consecutive: u32,
    total: u32,
    capacity: usize,
    /// What a flagged address holds.
    address: FlagAddress,
    metrics: Arc<Metrics>,
    /// Where flags are shared with the other replicas ([`super::shared`]), when they are.
    store: std::sync::OnceLock<Arc<crate::state::RedisStore>>,
    /// How often the lock was taken: the tests' proof that the quiet path writes nothing.
    #[cfg(test)]
    locked: AtomicUsize,
}

impl std::fmt::Debug for Flags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flags").field("streaks", &self.streaks.len()).finish()
    }
}

impl Flags {
    pub fn new(consecutive: u32, total: u32, metrics: Arc<Metrics>) -> Flags {
        Flags::with_capacity(consecutive, total, CAPACITY, metrics)
    }

    fn with_capacity(consecutive: u32, total: u32, capacity: usize, metrics: Arc<Metrics>) -> Flags {
        Flags {
            streaks: ReadMostly::new(SHARDS),
            owners: ReadMostly::new(SHARDS),
            held: ReadMostly::new(SHARDS),
            roots: ReadMostly::new(8),
            book: Mutex::default(),
            swept: AtomicU64::new(0),
            epoch: Instant::now(),
            consecutive,
            total,
            capacity,
            address: FlagAddress::Sessions,
            metrics,
            store: std::sync::OnceLock::new(),
            #[cfg(test)]
            locked: AtomicUsize::new(0),
        }
    }

    /// The table with flagged addresses holding `address` (default: their refused sessions).
    pub fn with_address(mut self, address: FlagAddress) -> Flags {
        self.address = address;
        self
    }

    /// True when a flag on `principal` is contained to its refused sessions: an address-keyed
    /// caller (`peer:IP`), unless the operator chose to hold every call of a flagged address.
    fn contained(&self, principal: Option<&str>) -> bool {
        self.address == FlagAddress::Sessions && principal.is_some_and(|p| p.starts_with(ADDRESS))
    }

    /// Seconds since the table was made: what `Streak::last` counts in.
    fn now(&self) -> u64 {
        self.epoch.elapsed().as_secs()
    }

    fn book(&self) -> MutexGuard<'_, ()> {
        #[cfg(test)]
        self.locked.fetch_add(1, Relaxed);
        self.book.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `principal` may claim one more session of its own.
    fn has_room(&self, principal: &str) -> bool {
        let held = self.held.read(principal, |h| h.map_or(0, |h| h.load(Relaxed)));
        held < SESSIONS_PER_PRINCIPAL && self.owners.len() < self.capacity
    }

    /// The keys whose streaks one call feeds and reads: its session's (bounded per principal)
    /// and its principal's. A session first seen with a principal stays that principal's, so
    /// a decision recorded later without one (an ask resolving) still counts against it.
    ///
    /// `None` when the call would claim a session for its principal: only [`Flags::claim`]
    /// may, under the lock.
    fn known_keys<'a>(&self, session: Option<&'a str>, principal: Option<&str>) -> Option<Keys<'a>> {
        let mut keys = Keys::default();
        let pkey = principal.map(CallerKey::of);
        if let Some(s) = session {
            let skey = session_key(s);
            match (self.owners.get(&skey), pkey) {
                // Another principal's session: nothing of its state, and nothing fed into it.
                (Some(owner), Some(p)) if *owner != *p.as_str() => keys.push(Key::Caller(p.more())),
                (Some(owner), _) => {
                    keys.push(Key::Session(skey));
                    keys.push(Key::Owner(owner));
                }
                (None, Some(p)) if self.has_room(p.as_str()) => return None,
                // Beyond its share, every further session of this caller is one. (Shares and
                // the owners table never shrink: a session beyond stays beyond.)
                (None, Some(p)) => keys.push(Key::Caller(p.more())),
                (None, None) => keys.push(Key::Session(skey)),
            }
        }
        if let Some(p) = pkey {
            keys.push_principal(p);
        }
        // A principal known only by its address: the address keeps a streak too (an unverified
        // token is the caller's to change; the address is not).
        match (principal.and_then(address_of), pkey) {
            (Some(a), Some(p)) if Some(a) == principal => keys.push_address(p),
            (Some(a), _) => keys.push_address(self.root_key(a)),
            (None, _) => {}
        }
        if let Some(root) = principal.and_then(root_principal) {
            keys.push(Key::Caller(self.root_key(root)));
        }
        Some(keys)
    }

    /// The key of a root principal, remembered (bounded) once digested.
    fn root_key(&self, root: &str) -> CallerKey {
        if let Some(k) = self.roots.read(root, |k| k.copied()) {
            return k;
        }
        let k = CallerKey::of(root);
        if self.roots.len() < ROOTS {
            self.roots.insert(root, k);
        }
        k
    }

    /// [`Flags::known_keys`], claiming the session for its principal if it is the first to
    /// use it and has room. Under the lock.
    fn claim<'a>(
        &self,
        _book: &MutexGuard<'_, ()>,
        session: Option<&'a str>,
        principal: Option<&str>,
    ) -> Keys<'a> {
        if let (Some(s), Some(p)) = (session, principal) {
            let (skey, pkey) = (session_key(s), principal_key(p));
            if !self.owners.contains(&skey) && self.has_room(&pkey) {
                self.owners.insert(&skey, pkey.as_str().into());
                self.held.get_or_insert_with(&pkey, Arc::default).fetch_add(1, Relaxed);
            }
        }
        self.known_keys(session, principal).expect("a claimed session is known")
    }

    /// Whether a full table may be swept now (at most once a minute).
    fn sweep_due(&self, now: u64) -> bool {
        match self.swept.load(Relaxed) {
            0 => true,
            s => now.saturating_sub(s - 1) > SWEEP_EVERY.as_secs(),
        }
    }

    /// The streak under `key`, made room for: a table that is full sweeps idle unflagged
    /// streaks (at most once a minute) and otherwise hands out the shared untracked streak.
    fn streak(&self, _book: &MutexGuard<'_, ()>, key: &str, now: u64) -> Arc<Streak> {
        if let Some(c) = self.streaks.get(key) {
            return c;
        }
        if self.streaks.len() >= self.capacity {
            if self.sweep_due(now) {
                self.swept.store(now + 1, Relaxed);
                self.streaks.retain(|k, c| {
                    c.flagged.load(Relaxed)
                        || k == UNTRACKED
                        || now.saturating_sub(c.last.load(Relaxed)) < IDLE.as_secs()
                });
            }
            if self.streaks.len() >= self.capacity {
                return self.streaks.get_or_insert_with(UNTRACKED, || Arc::new(Streak::new(now)));
            }
        }
        self.streaks.get_or_insert_with(key, || Arc::new(Streak::new(now)))
    }

    /// An allowed call that ends no run and claims nothing notes that its streaks saw a call
    /// and is done, without the lock. `false`: it needs the locked path.
    fn quiet_allow(&self, session: Option<&str>, principal: Option<&str>) -> bool {
        let Some(keys) = self.known_keys(session, principal) else { return false };
        let now = self.now();
        let quiet = |c: Option<&Arc<Streak>>| match c {
            Some(c) if c.consecutive.load(Relaxed) == 0 => {
                c.touch(now);
                true
            }
            _ => false,
        };
        let all_quiet = keys.iter().all(|key| match self.streaks.read(key, |c| c.map(|c| quiet(Some(c)))) {
            Some(q) => q,
            // A key without a streak gets one on its first call — unless the table is full and
            // not due a sweep: then it reads the untracked streak, as the locked path would.
            None => {
                self.streaks.len() >= self.capacity
                    && !self.sweep_due(now)
                    && self.streaks.read(UNTRACKED, quiet)
            }
        });
        all_quiet
    }

    /// Records one decided call: refused or let through. `principal` is who called (the
    /// transport's knowledge; `None` where it has none).
    pub fn record(&self, session: Option<&str>, principal: Option<&str>, refused: bool) {
        if !refused && self.quiet_allow(session, principal) {
            return;
        }
        let book = self.book();
        let now = self.now();
        let keys = self.claim(&book, session, principal);
        // Whether the call's session (its first key) was flagged by this refusal.
        let mut session_flagged = false;
        for (i, key) in keys.iter().enumerate() {
            let c = self.streak(&book, key, now);
            c.touch(now);
            if !refused {
                c.consecutive.store(0, Relaxed);
                continue;
            }
            let consecutive = c.consecutive.load(Relaxed).saturating_add(1);
            let total = c.total.load(Relaxed).saturating_add(1);
            c.consecutive.store(consecutive, Relaxed);
            c.total.store(total, Relaxed);
            if !c.flagged.load(Relaxed) && (consecutive >= self.consecutive || total >= self.total) {
                self.raise(&c, key, "repeated refusals");
                session_flagged |= i == 0 && session.is_some();
            }
        }
        if let (true, Some(_), true) = (refused, session, self.contained(principal)) {
            let session = keys.iter().next().expect("a call with a session has its key");
            let mut flagged_now = session_flagged;
            for held in keys.contained() {
                flagged_now |= self.contain(&book, session, held, now, flagged_now);
            }
        }
    }

    /// Flags `key` (its streak `c`): logged, counted, shared with the other replicas.
    fn raise(&self, c: &Streak, key: &str, why: &str) {
        c.flagged.store(true, Relaxed);
        self.metrics.session_flagged();
        if let Some(store) = self.store.get() {
            super::shared::publish_flag(store.clone(), key.to_owned(), true);
        }
        tracing::warn!(
            key,
            consecutive = c.consecutive.load(Relaxed),
            total = c.total.load(Relaxed),
            why,
            "flagged: every further call in it is asked until an operator clears it"
        );
    }

    /// A refusal in `session` of a contained `address`: once the address is flagged, the
    /// session is held at its first refusal; every session the address has held counts, and
    /// `consecutive` of them hold the whole address. `flagged`: the refusal just flagged the
    /// session by its own streak.
    fn contain(
        &self,
        book: &MutexGuard<'_, ()>,
        session: &str,
        address: &str,
        now: u64,
        flagged: bool,
    ) -> bool {
        let a = self.streak(book, address, now);
        let mut held = flagged;
        // Once the whole address is held, its refusals are the hold's own: they hold no session
        // (clearing the address frees the sessions it never refused).
        let whole = a.sessions_held.load(Relaxed) >= self.consecutive;
        if a.flagged.load(Relaxed) && !whole {
            let s = self.streak(book, session, now);
            if !s.flagged.load(Relaxed) {
                self.raise(&s, session, "refused in a session of a flagged address");
                held = true;
            }
        }
        if held && a.sessions_held.fetch_add(1, Relaxed).saturating_add(1) == self.consecutive {
            tracing::warn!(
                key = address,
                sessions = self.consecutive,
                "sessions of one address held in a row: every call from the address is now held"
            );
        }
        held
    }

    /// True when the call's session or its principal is flagged. A contained address's flag
    /// (an address-keyed caller, unless `approvals.flag.address: all`) holds its calls without a session, and all of its calls once it
    /// has held `consecutive` sessions; its refused sessions are flagged in their own right.
    pub fn flagged(&self, session: Option<&str>, principal: Option<&str>) -> bool {
        let is_flagged = |key: &str| {
            self.streaks.read(key, |c| c.map(|c| c.flagged.load(Relaxed))).unwrap_or_else(|| {
                // A key the table had no room for reads the shared untracked streak.
                self.streaks.len() >= self.capacity
                    && self.streaks.read(UNTRACKED, |c| c.is_some_and(|c| c.flagged.load(Relaxed)))
            })
        };
        let contained = self.contained(principal);
        let holds = |keys: &Keys<'_>, key: &str| match contained && keys.contained().any(|c| c == key) {
            false => is_flagged(key),
            true => self
                .streaks
                .read(key, |c| {
                    c.map(|c| {
                        c.flagged.load(Relaxed)
                            && (session.is_none() || c.sessions_held.load(Relaxed) >= self.consecutive)
                    })
                })
                .unwrap_or_else(|| is_flagged(key)),
        };
        match self.known_keys(session, principal) {
            Some(keys) => keys.iter().any(|k| holds(&keys, k)),
            None => {
                let book = self.book();
                let keys = self.claim(&book, session, principal);
                let held = keys.iter().any(|k| holds(&keys, k));
                held
            }
        }
    }

    /// Clears a flagged key (a session id, or a `caller:…` key from the list); `false` if it
    /// was not flagged.
    pub fn clear(&self, key: &str) -> bool {
        let _book = self.book();
        let key = if self.streaks.contains(key) { Cow::Borrowed(key) } else { session_key(key) };
        let Some(c) = self.streaks.get(&key) else { return false };
        let was = c.flagged.load(Relaxed);
        c.consecutive.store(0, Relaxed);
        c.total.store(0, Relaxed);
        c.flagged.store(false, Relaxed);
        c.sessions_held.store(0, Relaxed);
        c.last.store(self.now(), Relaxed);
        if was {
            tracing::info!(key = key.as_ref(), "flag cleared by an operator");
        }
        if let Some(store) = self.store.get() {
            // Cleared everywhere, whether or not this replica had seen it flagged.
            super::shared::publish_flag(store.clone(), key.clone().into_owned(), false);
        }
        was || self.store.get().is_some()
    }

    /// Shares flags through `store` from now on (set once, by [`super::Approvals::with_store`]).
    pub(super) fn share(&self, store: Arc<crate::state::RedisStore>) {
        let _ = self.store.set(store);
    }

    /// A flag another replica raised (or the store lists): enforced here too. Not counted in
    /// `sessions_flagged_total` (the replica that raised it counted it).
    pub(super) fn mark(&self, key: &str) {
        let book = self.book();
        let c = self.streak(&book, key, self.now());
        c.flagged.store(true, Relaxed);
    }

    /// A flag an operator cleared at another replica.
    pub(super) fn unmark(&self, key: &str) {
        let _book = self.book();
        if let Some(c) = self.streaks.get(key) {
            c.consecutive.store(0, Relaxed);
            c.total.store(0, Relaxed);
            c.flagged.store(false, Relaxed);
        }
    }

    /// The flagged sessions and principals, for `/status`.
    pub fn list(&self) -> Vec<(String, u32)> {
        let mut out = Vec::new();
        self.streaks.for_each(|k, c| {
            if c.flagged.load(Relaxed) {
                out.push((k.to_owned(), c.total.load(Relaxed)));
            }
        });
        out.sort();
        out
    }
}

#[cfg(test)]
mod address_tests;
#[cfg(test)]
mod tests;
