//! Asking the agent's own user through MCP elicitation. The form is the same in every era: the
//! tool, its arguments shown as canonical JSON, why it is asked, and one choice — allow once,
//! allow for this session (only where a waiver may answer), or deny.
//!
//! Legacy eras (2025-06-18, 2025-11-25) carry it as a server-to-client `elicitation/create`
//! request on the call's own SSE stream. Its id is `portcullis-elicit-<random>-<n>`: the random
//! part is drawn once per process and the upstream never sees it, and a client's answer is only
//! taken when it comes from the session that was asked, so an upstream cannot make an id the
//! proxy would claim, nor answer for the user. The answer is consumed here and never forwarded.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::sync::oneshot;

use super::{Ask, Choice, Source};
use crate::mcp::jsonrpc::Message;

/// How many characters of the arguments the form shows before it says how many it left out.
const SHOWN_ARGS: usize = 2_000;

/// What the user answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// `accept` with a choice (an accepted form without a usable choice reads as deny).
    Accept(Choice),
    /// The user refused the request itself.
    Decline,
    /// The user dismissed it without choosing.
    Cancel,
    /// The client answered with a JSON-RPC error (it could not show the form).
    Failed,
}

impl Reply {
    /// Reads an `ElicitResult` (or the JSON-RPC error in its place).
    pub fn of(result: Option<&RawValue>, error: Option<&RawValue>) -> Reply {
        if error.is_some() {
            return Reply::Failed;
        }
        let Some(v) = result.and_then(|r| serde_json::from_str::<Value>(r.get()).ok()) else {
            return Reply::Failed;
        };
        Reply::of_value(&v)
    }

    pub fn of_value(v: &Value) -> Reply {
        match v.get("action").and_then(Value::as_str) {
            Some("accept") => Reply::Accept(
                v.pointer("/content/decision")
                    .and_then(Value::as_str)
                    .and_then(Choice::parse)
                    .unwrap_or(Choice::Deny),
            ),
            Some("decline") => Reply::Decline,
            Some("cancel") => Reply::Cancel,
            _ => Reply::Failed,
        }
    }
}

/// The `elicitation/create` params for `ask`: a form with one required choice.
pub fn params(ask: &Ask) -> Value {
    let mut choices = vec![("allow_once", "Allow once")];
    if ask.session.is_some() && matches!(ask.source, Source::Floor | Source::Checker) {
        choices.push(("allow_session", "Allow this exact call for the rest of the session"));
    }
    choices.push(("deny", "Deny"));
    let shown = if ask.args.chars().count() > SHOWN_ARGS {
        let cut: String = ask.args.chars().take(SHOWN_ARGS).collect();
        format!("{cut}… ({} more characters not shown)", ask.args.chars().count() - SHOWN_ARGS)
    } else {
        ask.args.clone()
    };
    json!({
        "message": format!(
            "portcullis is holding a tool call for your decision.\n\nTool: {}\nArguments: {}\nWhy it is asked: {}\n\nAllow it?",
            ask.tool, shown, ask.reason
        ),
        "requestedSchema": {
            "type": "object",
            "properties": {
                "decision": {
                    "type": "string",
                    "title": "Decision",
                    "description": format!("Whether {} may run with exactly these arguments", ask.tool),
                    "enum": choices.iter().map(|c| c.0).collect::<Vec<_>>(),
                    "enumNames": choices.iter().map(|c| c.1).collect::<Vec<_>>(),
                }
            },
            "required": ["decision"]
        }
    })
}

struct Entry {
    session: Option<String>,
    reply: oneshot::Sender<Reply>,
}

type Table = Arc<Mutex<HashMap<String, Entry>>>;

/// Elicitations the proxy sent and waits on, by request id.
pub struct Elicitations {
    prefix: String,
    next: AtomicU64,
    table: Table,
    /// At most this many wait at once (`approvals.max_pending`, as for asks parked for an
    /// operator); beyond it an ask is refused, never sent.
    max: usize,
}

impl std::fmt::Debug for Elicitations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Elicitations").finish_non_exhaustive()
    }
}

impl Default for Elicitations {
    fn default() -> Self {
        Elicitations::new(super::Settings::default().max_pending)
    }
}

/// One elicitation in flight; withdrawn when dropped (answered, timed out, or the agent left).
pub struct Open {
    pub id: String,
    table: Table,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.table.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.id);
    }
}

impl Open {
    /// The JSON-RPC request to send the client.
    pub fn request(&self, ask: &Ask) -> String {
        json!({ "jsonrpc": "2.0", "id": self.id, "method": "elicitation/create", "params": params(ask) })
            .to_string()
    }
}

/// What became of a client message in the proxy's id namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answered {
    /// Delivered to the waiting ask.
    Delivered,
    /// Ours, but nobody waits (late, duplicate, or from another session): dropped.
    Stale,
}

impl Elicitations {
    pub fn new(max: usize) -> Elicitations {
        Elicitations {
            prefix: format!("portcullis-elicit-{}-", crate::checker::prompt::random_token()),
            next: AtomicU64::new(1),
            table: Table::default(),
            max,
        }
    }

    /// Registers an elicitation for `session`; its reply arrives on the receiver. `None` when
    /// `max` already wait: the ask is refused rather than an older one withdrawn.
    pub fn open(&self, session: Option<&str>) -> Option<(Open, oneshot::Receiver<Reply>)> {
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        if table.len() >= self.max {
            return None;
        }
        let id = format!("{}{}", self.prefix, self.next.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        table.insert(id.clone(), Entry { session: session.map(str::to_owned), reply: tx });
        Some((Open { id, table: self.table.clone() }, rx))
    }

    /// True when `msg` is a client response in the proxy's namespace (it must not be forwarded).
    pub fn is_ours(&self, msg: &Message<'_>) -> bool {
        msg.method.is_none()
            && msg.id.is_some_and(|id| {
                serde_json::from_str::<&str>(id.get()).is_ok_and(|s| s.starts_with(&self.prefix))
            })
    }

    /// Takes the client's answer to one of the proxy's elicitations, from `session`.
    pub fn answer(&self, msg: &Message<'_>, session: Option<&str>) -> Answered {
        let Some(id) = msg.id.and_then(|id| serde_json::from_str::<String>(id.get()).ok()) else {
            return Answered::Stale;
        };
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        match table.get(&id) {
            Some(e) if e.session.as_deref() == session => {
                let entry = table.remove(&id).expect("present");
                drop(table);
                let _ = entry.reply.send(Reply::of(msg.result, msg.error));
                Answered::Delivered
            }
            _ => Answered::Stale,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::jsonrpc::parse;
    use crate::mcp::jsonrpc::Payload;

    fn ask(source: Source, session: Option<&str>) -> Ask {
        Ask {
            tool: "mcp__up__sh".into(),
            args: r#"{"command":"rm -rf build"}"#.into(),
            reason: "not proven read-only".into(),
            source,
            session: session.map(str::to_owned),
            definition: 0,
            agent: None,
        }
    }

    fn answer(e: &Elicitations, text: &str, session: Option<&str>) -> Answered {
        let Payload::Single(m) = parse(text.as_bytes()).unwrap() else { panic!() };
        assert!(e.is_ours(&m));
        e.answer(&m, session)
    }

    #[test]
    fn the_form_offers_a_session_waiver_only_where_one_may_answer() {
        let choices = |a: &Ask| params(a)["requestedSchema"]["properties"]["decision"]["enum"].clone();
        assert_eq!(choices(&ask(Source::Floor, Some("s"))), json!(["allow_once", "allow_session", "deny"]));
        assert_eq!(choices(&ask(Source::Configured, Some("s"))), json!(["allow_once", "deny"]));
        assert_eq!(choices(&ask(Source::Floor, None)), json!(["allow_once", "deny"]));
        let msg = params(&ask(Source::Floor, None))["message"].as_str().unwrap().to_owned();
        assert!(msg.contains("mcp__up__sh") && msg.contains("rm -rf build") && msg.contains("read-only"));
    }

    #[test]
    fn an_answer_is_taken_once_and_only_from_the_session_asked() {
        let e = Elicitations::default();
        let (open, mut rx) = e.open(Some("s1")).expect("room");
        let reply = format!(
            r#"{{"jsonrpc":"2.0","id":"{}","result":{{"action":"accept","content":{{"decision":"allow_session"}}}}}}"#,
            open.id
        );
        assert_eq!(answer(&e, &reply, Some("s2")), Answered::Stale);
        assert!(rx.try_recv().is_err());
        assert_eq!(answer(&e, &reply, Some("s1")), Answered::Delivered);
        assert_eq!(rx.try_recv().unwrap(), Reply::Accept(Choice::AllowSession));
        assert_eq!(answer(&e, &reply, Some("s1")), Answered::Stale);
    }

    #[test]
    fn replies_read_safely() {
        let r = |v: Value| Reply::of_value(&v);
        assert_eq!(
            r(json!({"action":"accept","content":{"decision":"allow_once"}})),
            Reply::Accept(Choice::AllowOnce)
        );
        assert_eq!(
            r(json!({"action":"accept","content":{"decision":"yes please"}})),
            Reply::Accept(Choice::Deny)
        );
        assert_eq!(r(json!({"action":"accept"})), Reply::Accept(Choice::Deny));
        assert_eq!(r(json!({"action":"decline"})), Reply::Decline);
        assert_eq!(r(json!({"action":"cancel"})), Reply::Cancel);
        assert_eq!(r(json!({"weird":1})), Reply::Failed);
        let other = Elicitations::default();
        let Payload::Single(m) =
            parse(br#"{"jsonrpc":"2.0","id":"portcullis-elicit-0-1","result":{}}"#).unwrap()
        else {
            panic!()
        };
        assert!(!other.is_ours(&m), "another process's (or a guessed) prefix is not ours");
    }

    #[test]
    fn beyond_max_an_elicitation_is_not_opened_and_a_closed_one_makes_room() {
        let e = Elicitations::new(2);
        let first = e.open(Some("s1")).expect("room");
        let _second = e.open(Some("s1")).expect("room");
        assert!(e.open(Some("s2")).is_none(), "two already wait");
        drop(first);
        assert!(e.open(Some("s2")).is_some(), "an answered or withdrawn one makes room");
    }

    #[test]
    fn dropping_the_open_elicitation_withdraws_it() {
        let e = Elicitations::default();
        let (open, _rx) = e.open(None).expect("room");
        let id = open.id.clone();
        drop(open);
        let reply = format!(r#"{{"jsonrpc":"2.0","id":"{id}","result":{{"action":"cancel"}}}}"#);
        assert_eq!(answer(&e, &reply, None), Answered::Stale);
    }
}
