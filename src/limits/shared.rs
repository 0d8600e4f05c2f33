//! The windows replicas share, in the state store: one Lua script checks every window a call
//! counts in and, only if all have room, counts it in each — atomically, so two replicas cannot
//! both take the last place, and a call one bound refuses spends no other bound's budget.
//!
//! Keys: `{prefix}limits:{SUBJECT}:{entry}:{m|d}{window}` — the subject is a configured agent's
//! name or an anonymous caller's digest (never a credential), in braces so a cluster keeps one
//! call's keys on one node; the entry is a digest of its `agent` and `tool` as configured, so
//! replicas whose configs differ do not share counts for entries that differ. Each key expires
//! with its window.

use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::window::Span;
use crate::state::{RedisStore, StoreError};

/// KEYS: the windows; ARGV: each window's limit then its lifetime in seconds. Returns 0 when
/// the call was counted in every window, else the 1-based index of the first full one.
const SCRIPT: &str = "\
for i = 1, #KEYS do
  if tonumber(redis.call('GET', KEYS[i]) or '0') >= tonumber(ARGV[2 * i - 1]) then return i end
end
for i = 1, #KEYS do
  if redis.call('INCR', KEYS[i]) == 1 then redis.call('EXPIRE', KEYS[i], ARGV[2 * i]) end
end
return 0";

/// One window a call counts in.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub entry: usize,
    pub span: Span,
    pub number: u32,
    pub limit: u32,
}

/// The shared windows, through `store`.
#[derive(Debug)]
pub struct SharedWindows {
    store: Arc<RedisStore>,
    /// Each entry's key part.
    entries: Vec<String>,
}

/// An entry's key part: 16 hex digits of the digest of how it is configured.
pub fn entry_key(agent: &str, tool: &str) -> String {
    // Length-prefixed: no spelling of one pair is another's.
    let d = Sha256::digest(format!("{}:{agent}{tool}", agent.len()).as_bytes());
    d[..8].iter().map(|b| format!("{b:02x}")).collect()
}

impl SharedWindows {
    pub fn new(store: Arc<RedisStore>, entries: Vec<String>) -> SharedWindows {
        SharedWindows { store, entries }
    }

    /// Whether the store answered the last time anyone asked (a store known down is not waited on).
    pub fn up(&self) -> bool {
        self.store.up()
    }

    /// Counts one call in every window of `windows` if each has room: `Ok(None)` when counted,
    /// `Ok(Some(i))` when `windows[i]` is full (nothing counted), `Err` when the store did not
    /// answer within `state.timeout`.
    pub async fn take(&self, subject: &str, windows: &[Window]) -> Result<Option<usize>, StoreError> {
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(SCRIPT).arg(windows.len());
        for w in windows {
            let span = match w.span {
                Span::Minute => 'm',
                Span::Day => 'd',
            };
            cmd.arg(
                self.store.key(&format!("limits:{{{subject}}}:{}:{span}{}", self.entries[w.entry], w.number)),
            );
        }
        for w in windows {
            // A window's key outlives it by a little, so a replica whose clock runs behind still
            // finds the count.
            cmd.arg(w.limit).arg(w.span.seconds() + 60);
        }
        let full: i64 = self.store.run(&cmd).await?;
        match usize::try_from(full) {
            Ok(0) => Ok(None),
            Ok(i) if i <= windows.len() => Ok(Some(i - 1)),
            _ => Err(StoreError::Protocol(format!("the limits script answered {full}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_key_is_fixed_width_hex_and_differs_by_agent_and_tool() {
        let k = entry_key("dev", "mcp__*");
        assert_eq!(k.len(), 16);
        assert!(k.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(k, entry_key("*", "mcp__*"));
        assert_ne!(entry_key("a", "bc"), entry_key("ab", "c"), "no spelling of one pair is another's");
    }
}
