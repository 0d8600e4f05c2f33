//! Approvals in the modern era (2026-07-28), which has no server-to-client requests: the proxy
//! answers an asked `tools/call` with `resultType: "input_required"`, carrying its elicitation
//! under the key [`KEY`] and a `requestState` it seals; the client asks its user and retries the
//! call with the answer and the state echoed back.
//!
//! The state is the proxy's own, never the upstream's: `portcullis:<payload>.<tag>`, base64url,
//! where the tag is HMAC-SHA256 under a key drawn once per process (so a restart voids every
//! outstanding state) over a payload that binds it to the principal, the session, the method,
//! the tool and the canonical arguments, with an expiry (`approvals.timeout`) and a nonce that
//! is spent on first use. Any other state or answer the request carried for the upstream (a
//! retry of the upstream's own `input_required`) is kept inside the payload and restored byte
//! for byte when the call is finally forwarded; the upstream never sees the proxy's key or state.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::hmac;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::elicit::{self, Reply};
use super::Ask;

/// The proxy's key in `inputRequests` / `inputResponses`: namespaced, so it cannot be taken for
/// one of the upstream's.
pub const KEY: &str = "io.portcullis/approval";
const PREFIX: &str = "portcullis:";
/// Spent nonces remembered at most; beyond it the oldest go (their states have expired by then
/// in any sane deployment, and a forgotten nonce only matters while its state is unexpired).
/// Spent nonces remembered at once. A spent nonce is kept until its state expires (a nonce
/// forgotten earlier would make its state replayable), so a full table refuses further retries
/// rather than evicting one.
const SPENT: usize = 100_000;

/// Why a retry's `requestState` was refused. The call is never forwarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("it is not a state this proxy issued (malformed or tampered with)")]
    Forged,
    #[error("it has expired")]
    Expired,
    #[error("it was already used")]
    Replayed,
    #[error("it was issued for a different call (tool, arguments, session or principal changed)")]
    OtherCall,
    #[error("the retry carries no answer to the approval")]
    Unanswered,
    #[error("too many approvals were answered recently to remember another; ask again later")]
    Full,
    /// The shared store that says whether a state was spent cannot be reached: a state whose
    /// single use cannot be recorded is never honoured (it could be replayed on another replica).
    #[error("the approval store is unreachable, so its single use cannot be recorded; ask again")]
    StoreDown,
}

/// What the proxy makes of an asked call in the modern era.
#[derive(Debug)]
pub enum Round {
    /// No state of ours: ask, with this `input_required` result.
    Ask(Value),
    /// A verified retry: the user's answer, how long they took, and the params to forward
    /// (the proxy's key and state removed, the upstream's restored).
    Answered {
        reply: Reply,
        waited: Duration,
        params: Value,
    },
    Refused(Refused),
}

#[derive(Debug, Serialize, Deserialize)]
struct Payload {
    /// Nonce.
    n: String,
    /// Issued and expires, Unix milliseconds.
    t: u64,
    x: u64,
    /// SHA-256 of what the state is bound to, hex.
    b: String,
    /// The upstream's `requestState` the request carried, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    u: Option<Value>,
    /// The upstream's `inputResponses` the request carried, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    r: Option<Value>,
}

/// The sealing key and the spent nonces: of one process, or — with a shared store — of every
/// replica (the key from `approvals.seal_key_env`, nonces spent with `SET NX`).
pub struct Seals {
    key: hmac::Key,
    ttl: Duration,
    /// Nonce → when its state expires (ms since the epoch).
    spent: std::sync::Mutex<std::collections::HashMap<String, u64>>,
    spent_max: usize,
    store: Option<std::sync::Arc<crate::state::RedisStore>>,
}

impl std::fmt::Debug for Seals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Seals").field("ttl", &self.ttl).finish_non_exhaustive()
    }
}

/// The wall clock, Unix milliseconds: what [`Seals::round`] seals and checks expiry against.
fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// What a state is bound to: every part length-prefixed, so no two tuples digest alike.
fn binding(principal: Option<&str>, ask: &Ask) -> String {
    let mut h = Sha256::new();
    let principal = principal.map(|p| {
        let d: [u8; 32] = Sha256::digest(p.as_bytes()).into();
        d
    });
    let principal = principal.as_ref().map_or(&[][..], |d| &d[..]);
    let session = ask.session.as_deref().unwrap_or("").as_bytes();
    for part in [principal, session, b"tools/call", ask.tool.as_bytes(), ask.args.as_bytes()] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    let d: [u8; 32] = h.finalize().into();
    d.iter().map(|b| format!("{b:02x}")).collect()
}

impl Seals {
    /// Seals with `key` (or one drawn for this process), spending nonces in `store` when given.
    pub fn with(
        ttl: Duration,
        key: Option<&[u8]>,
        store: Option<std::sync::Arc<crate::state::RedisStore>>,
    ) -> Seals {
        let mut s = Seals::new(ttl);
        if let Some(k) = key {
            s.key = hmac::Key::new(hmac::HMAC_SHA256, k);
        }
        s.store = store;
        s
    }

    pub fn new(ttl: Duration) -> Seals {
        let mut secret = [0u8; 32];
        if getrandom::fill(&mut secret).is_err() {
            // No OS randomness: derive one from RandomState-seeded tokens (still per process).
            let t = format!(
                "{}{}",
                crate::checker::prompt::random_token(),
                crate::checker::prompt::random_token()
            );
            secret = Sha256::digest(t.as_bytes()).into();
        }
        Seals {
            key: hmac::Key::new(hmac::HMAC_SHA256, &secret),
            ttl,
            spent: std::sync::Mutex::default(),
            spent_max: SPENT,
            store: None,
        }
    }

    /// Spends nonce `n` once across every replica: `SET key 1 NX PXAT expires`. Refused if it
    /// was spent, and refused (fail closed) if the store cannot say.
    async fn spend_shared(store: &crate::state::RedisStore, n: &str, expires: u64) -> Result<(), Refused> {
        let key = store.key(&format!("mrtr:{n}"));
        let set = redis::cmd("SET").arg(key).arg(1).arg("NX").arg("PXAT").arg(expires.max(1)).to_owned();
        match store.run::<Option<String>>(&set).await {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(Refused::Replayed),
            Err(_) => Err(Refused::StoreDown),
        }
    }

    /// Marks nonce `n` (whose state expires at `expires`) spent; refused if it already was, or
    /// if the table is full of nonces whose states are still live.
    fn spend(&self, n: &str, expires: u64, now: u64) -> Result<(), Refused> {
        let mut spent = self.spent.lock().unwrap_or_else(|p| p.into_inner());
        if spent.contains_key(n) {
            return Err(Refused::Replayed);
        }
        if spent.len() >= self.spent_max {
            spent.retain(|_, x| *x >= now);
            if spent.len() >= self.spent_max {
                return Err(Refused::Full);
            }
        }
        spent.insert(n.to_owned(), expires);
        Ok(())
    }

    fn seal(&self, payload: &Payload) -> String {
        let body = serde_json::to_vec(payload).expect("serialisable");
        let tag = hmac::sign(&self.key, &body);
        format!("{PREFIX}{}.{}", URL_SAFE_NO_PAD.encode(&body), URL_SAFE_NO_PAD.encode(tag.as_ref()))
    }

    fn open(&self, state: &str) -> Result<Payload, Refused> {
        let rest = state.strip_prefix(PREFIX).ok_or(Refused::Forged)?;
        let (body, tag) = rest.split_once('.').ok_or(Refused::Forged)?;
        let body = URL_SAFE_NO_PAD.decode(body).map_err(|_| Refused::Forged)?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| Refused::Forged)?;
        hmac::verify(&self.key, &body, &tag).map_err(|_| Refused::Forged)?;
        serde_json::from_slice(&body).map_err(|_| Refused::Forged)
    }

    /// Decides an asked call from its `tools/call` params: a fresh ask, or a retry answering one.
    pub async fn round(&self, params: Option<&RawValue>, ask: &Ask, principal: Option<&str>) -> Round {
        let now = now_ms();
        match self.round_at(params, ask, principal, now) {
            Checked::Done(round) => round,
            Checked::Spend { nonce, expires, answered } => {
                let spent = match &self.store {
                    Some(store) => Seals::spend_shared(store, &nonce, expires).await,
                    None => self.spend(&nonce, expires, now),
                };
                match spent {
                    Ok(()) => answered,
                    Err(e) => Round::Refused(e),
                }
            }
        }
    }

    /// As [`Seals::round`], at `now` (Unix milliseconds) rather than the wall clock: the clock is
    /// passed in so tests move it instead of sleeping.
    fn round_at(&self, params: Option<&RawValue>, ask: &Ask, principal: Option<&str>, now: u64) -> Checked {
        let mut params: Map<String, Value> = params
            .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
            .and_then(|v| match v {
                Value::Object(m) => Some(m),
                _ => None,
            })
            .unwrap_or_default();
        let bound = binding(principal, ask);
        let ours = params.get("requestState").and_then(Value::as_str).is_some_and(|s| s.starts_with(PREFIX));
        if !ours {
            // Whatever the request carried for the upstream travels inside the proxy's state.
            let n = crate::checker::prompt::random_token();
            let state = self.seal(&Payload {
                n,
                t: now,
                x: now + self.ttl.as_millis() as u64,
                b: bound,
                u: params.remove("requestState"),
                r: params.remove("inputResponses"),
            });
            let mut requests = Map::new();
            requests.insert(
                KEY.to_owned(),
                serde_json::json!({ "method": "elicitation/create", "params": elicit::params(ask) }),
            );
            return Checked::Done(Round::Ask(serde_json::json!({
                "resultType": "input_required",
                "inputRequests": requests,
                "requestState": state,
            })));
        }
        let state =
            params.remove("requestState").and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        let p = match self.open(&state) {
            Ok(p) => p,
            Err(e) => return Checked::Done(Round::Refused(e)),
        };
        if now > p.x {
            return Checked::Done(Round::Refused(Refused::Expired));
        }
        if p.b != bound {
            return Checked::Done(Round::Refused(Refused::OtherCall));
        }
        let mut responses = match params.remove("inputResponses") {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let Some(answer) = responses.remove(KEY) else {
            return Checked::Done(Round::Refused(Refused::Unanswered));
        };
        // Restored exactly as the request first carried them (the client answered only ours).
        if let Some(u) = p.u {
            params.insert("requestState".into(), u);
        }
        if let Some(r) = p.r {
            params.insert("inputResponses".into(), r);
        }
        // Spent only after every check: a retry refused above for another reason does not
        // burn the state.
        Checked::Spend {
            nonce: p.n,
            expires: p.x,
            answered: Round::Answered {
                reply: Reply::of_value(&answer),
                waited: Duration::from_millis(now.saturating_sub(p.t)),
                params: Value::Object(params),
            },
        }
    }
}

/// A round checked up to spending its state's nonce.
enum Checked {
    Done(Round),
    Spend { nonce: String, expires: u64, answered: Round },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A round with the wall clock, driven to its end (the nonce spent in memory).
    fn round(s: &Seals, params: Option<&RawValue>, ask: &Ask, principal: Option<&str>) -> Round {
        crate::gate::pre::block_on(s.round(params, ask, principal))
    }

    /// A round at `now`, its nonce spent in memory at the same instant.
    fn round_at(s: &Seals, params: Option<&RawValue>, ask: &Ask, principal: Option<&str>, now: u64) -> Round {
        match s.round_at(params, ask, principal, now) {
            Checked::Done(r) => r,
            Checked::Spend { nonce, expires, answered } => match s.spend(&nonce, expires, now) {
                Ok(()) => answered,
                Err(e) => Round::Refused(e),
            },
        }
    }
    use crate::approval::{Choice, Source};
    use serde_json::json;

    fn ask(args: &str, session: Option<&str>) -> Ask {
        Ask {
            tool: "mcp__up__write".into(),
            args: args.into(),
            reason: "asked".into(),
            source: Source::Floor,
            session: session.map(str::to_owned),
            definition: 0,
            agent: None,
        }
    }

    fn raw(v: Value) -> Box<RawValue> {
        serde_json::value::to_raw_value(&v).unwrap()
    }

    fn state_of(r: Round) -> (String, Value) {
        let Round::Ask(result) = r else { panic!("expected an ask: {r:?}") };
        (result["requestState"].as_str().unwrap().to_owned(), result)
    }

    fn retry(state: &str, decision: &str) -> Box<RawValue> {
        raw(json!({"name":"write","arguments":{"p":1},"requestState":state,
            "inputResponses":{KEY:{"action":"accept","content":{"decision":decision}}}}))
    }

    #[test]
    fn a_sealed_state_answers_once_for_exactly_the_call_it_was_issued_for() {
        let s = Seals::new(Duration::from_secs(60));
        let a = ask(r#"{"p":1}"#, None);
        let (state, result) = state_of(round(&s, Some(&raw(json!({"name":"write"}))), &a, Some("Bearer x")));
        assert_eq!(result["resultType"], "input_required");
        assert_eq!(result["inputRequests"][KEY]["method"], "elicitation/create");
        // Another principal, argument or session: refused, and the state is not burnt.
        assert!(matches!(
            round(&s, Some(&retry(&state, "allow_once")), &a, Some("Bearer y")),
            Round::Refused(Refused::OtherCall)
        ));
        let other = ask(r#"{"p":2}"#, None);
        assert!(matches!(
            round(&s, Some(&retry(&state, "allow_once")), &other, Some("Bearer x")),
            Round::Refused(Refused::OtherCall)
        ));
        let Round::Answered { reply, params, .. } =
            round(&s, Some(&retry(&state, "allow_once")), &a, Some("Bearer x"))
        else {
            panic!()
        };
        assert_eq!(reply, Reply::Accept(Choice::AllowOnce));
        assert_eq!(params, json!({"name":"write","arguments":{"p":1}}), "the proxy's key and state are gone");
        assert!(matches!(
            round(&s, Some(&retry(&state, "allow_once")), &a, Some("Bearer x")),
            Round::Refused(Refused::Replayed)
        ));
    }

    #[test]
    fn tampered_foreign_and_expired_states_are_refused() {
        let s = Seals::new(Duration::from_secs(60));
        let a = ask("{}", Some("s"));
        let (state, _) = state_of(round(&s, None, &a, None));
        let (body, tag) = state.strip_prefix(PREFIX).unwrap().split_once('.').unwrap();
        let mut payload: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(body).unwrap()).unwrap();
        payload["x"] = json!(u64::MAX);
        let forged = format!("{PREFIX}{}.{tag}", URL_SAFE_NO_PAD.encode(payload.to_string()));
        for bad in [forged, format!("{state}x"), format!("{PREFIX}garbage"), format!("{PREFIX}.")] {
            assert!(
                matches!(
                    round(&s, Some(&retry(&bad, "allow_once")), &a, None),
                    Round::Refused(Refused::Forged)
                ),
                "{bad}"
            );
        }
        // Another process (restart) cannot open it.
        let restarted = Seals::new(Duration::from_secs(60));
        assert!(matches!(
            round(&restarted, Some(&retry(&state, "allow_once")), &a, None),
            Round::Refused(Refused::Forged)
        ));
    }

    /// The clock is moved, not slept on: a state answers up to its last millisecond and is
    /// refused as expired one millisecond later (tests/integration/mrtr.rs proves the same on
    /// the wall clock, through the proxy).
    #[test]
    fn a_state_lives_exactly_its_ttl_and_waited_is_read_off_the_same_clock() {
        let s = Seals::new(Duration::from_secs(60));
        let a = ask("{}", Some("s"));
        let t0 = now_ms();
        let (live, _) = state_of(round_at(&s, None, &a, None, t0));
        let (late, _) = state_of(round_at(&s, None, &a, None, t0));
        let Round::Answered { waited, .. } =
            round_at(&s, Some(&retry(&live, "allow_once")), &a, None, t0 + 60_000)
        else {
            panic!("a state is live through the last millisecond of its ttl")
        };
        assert_eq!(waited, Duration::from_secs(60));
        assert!(matches!(
            round_at(&s, Some(&retry(&late, "allow_once")), &a, None, t0 + 60_001),
            Round::Refused(Refused::Expired)
        ));
    }

    #[test]
    fn the_upstreams_own_state_and_answers_are_restored_exactly() {
        let s = Seals::new(Duration::from_secs(60));
        let a = ask("{}", None);
        let theirs = json!({"name":"write","requestState":"upstream-opaque==","inputResponses":{"k":{"action":"accept","content":{"x":1}}}});
        let (state, result) = state_of(round(&s, Some(&raw(theirs)), &a, None));
        assert!(!result.to_string().contains("upstream-opaque"), "wrapped inside the proxy's state");
        let Round::Answered { params, .. } = round(&s, Some(&retry(&state, "deny")), &a, None) else {
            panic!()
        };
        assert_eq!(params["requestState"], "upstream-opaque==");
        assert_eq!(params["inputResponses"], json!({"k":{"action":"accept","content":{"x":1}}}));
    }

    #[test]
    fn a_spent_nonce_is_never_forgotten_while_its_state_lives() {
        let mut seals = Seals::new(Duration::from_secs(60));
        seals.spent_max = 2;
        assert_eq!(seals.spend("a", 100, 10), Ok(()));
        assert_eq!(seals.spend("b", 100, 10), Ok(()));
        assert_eq!(seals.spend("c", 100, 10), Err(Refused::Full), "full of live nonces: refused");
        assert_eq!(seals.spend("a", 100, 10), Err(Refused::Replayed), "nothing was evicted");
        assert_eq!(seals.spend("c", 200, 150), Ok(()), "expired states make room");
        assert_eq!(seals.spend("c", 200, 150), Err(Refused::Replayed));
    }
}
