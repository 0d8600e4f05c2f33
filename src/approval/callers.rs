//! Who a `caller:…` key is, for the operator who must decide whether to clear its flag: the
//! address (or agent) it digests, the user agent it first called with, and when.
//!
//! Only principals that are not secrets are remembered — peer addresses and agent names; a key
//! digesting an `Authorization` value is shown as such, never the value. Bounded: past
//! 4096 principals new ones are not remembered (their keys still work; the console says it
//! does not know them). A principal already seen costs one lock-free lookup per call.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::flags::principal_key;
use crate::read_mostly::ReadMostly;

/// Principals remembered at most.
const MAX: usize = 4096;
/// Bytes of a user agent kept.
const USER_AGENT: usize = 160;

/// What is known of one caller.
#[derive(Debug)]
struct Seen {
    /// Its breaker key (`caller:` and hex).
    key: String,
    /// `peer:IP` or `agent:ID`.
    principal: String,
    user_agent: Option<String>,
    /// Seconds since the Unix epoch.
    first_seen: u64,
}

#[derive(Debug)]
pub struct Callers {
    seen: ReadMostly<Arc<Seen>>,
}

impl Default for Callers {
    fn default() -> Self {
        Callers { seen: ReadMostly::new(16) }
    }
}

impl Callers {
    /// Notes a call from `principal` (as the transports spell it), with the `User-Agent` it sent.
    pub fn note(&self, principal: &str, user_agent: Option<&[u8]>) {
        // A token sent from an address: only the address is remembered (never the token).
        let principal = crate::call::budget_key(principal);
        if !(principal.starts_with("peer:") || principal.starts_with("agent:"))
            || self.seen.contains(principal)
        {
            return;
        }
        if self.seen.len() >= MAX {
            return;
        }
        let user_agent = user_agent.map(printable);
        let first_seen = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let key = principal_key(principal);
        self.seen.insert(
            principal,
            Arc::new(Seen { key, principal: principal.to_owned(), user_agent, first_seen }),
        );
    }

    /// What the console shows for the breaker key `key`: `None` for a key that is not a
    /// caller's (a session id).
    pub fn describe(&self, key: &str) -> Option<Value> {
        if !key.starts_with("caller:") {
            return None;
        }
        let (base, pool) = match key.strip_suffix("#more") {
            Some(b) => (b, true),
            None => (key, false),
        };
        let found = self.seen.find(|_, s| s.key == base).map(|(_, s)| s);
        Some(match found {
            Some(s) => {
                let (kind, name) = s.principal.split_once(':').unwrap_or(("", &s.principal));
                let kind = if kind == "peer" { "address" } else { kind };
                json!({
                    "kind": kind, kind: name, "user_agent": s.user_agent, "first_seen": s.first_seen,
                    "sessions_beyond_share": pool,
                })
            }
            None => json!({
                "kind": "unknown",
                "note": "an Authorization credential (never shown), or a caller this replica has not seen",
                "sessions_beyond_share": pool,
            }),
        })
    }
}

/// `bytes` as text an operator can read safely: control characters dropped, clipped.
fn printable(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out: String = text.chars().filter(|c| !c.is_control()).collect();
    if out.len() > USER_AGENT {
        let mut end = USER_AGENT;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_key_is_described_by_its_address_user_agent_and_first_sighting() {
        let c = Callers::default();
        c.note("peer:127.0.0.1", Some(b"claude-code/2.1 \x1b[31mred"));
        c.note("peer:127.0.0.1", Some(b"a later agent"));
        let key = principal_key("peer:127.0.0.1");
        let d = c.describe(&key).expect("a caller key");
        assert_eq!(d["kind"], "address");
        assert_eq!(d["address"], "127.0.0.1");
        assert_eq!(d["user_agent"], "claude-code/2.1 [31mred", "the first one, without control characters");
        assert!(d["first_seen"].as_u64().is_some_and(|t| t > 1_700_000_000));
        assert_eq!(c.describe(&format!("{key}#more")).unwrap()["sessions_beyond_share"], true);
    }

    #[test]
    fn a_credential_is_never_remembered_and_a_session_is_not_a_caller() {
        let c = Callers::default();
        c.note("authorization:Bearer secret-token", Some(b"x"));
        let d = c.describe(&principal_key("authorization:Bearer secret-token")).unwrap();
        assert_eq!(d["kind"], "unknown");
        assert!(!d.to_string().contains("secret-token"));
        assert!(c.describe("some-session").is_none());
    }

    #[test]
    fn an_agent_key_names_the_agent() {
        let c = Callers::default();
        c.note("agent:dev>kid", None);
        let d = c.describe(&principal_key("agent:dev>kid")).unwrap();
        assert_eq!((d["kind"].as_str(), d["agent"].as_str()), (Some("agent"), Some("dev>kid")));
    }

    #[test]
    fn a_long_user_agent_is_clipped_on_a_character_boundary() {
        assert_eq!(printable("é".repeat(200).as_bytes()).len(), USER_AGENT);
    }
}
