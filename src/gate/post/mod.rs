//! The post-call inspection of responses, shared by JSON bodies, SSE events and stdio lines.
//!
//! Only responses whose id the pre path chose to watch are parsed beyond their envelope; every
//! other message is relayed as the exact bytes received.

use serde_json::Value;

use super::tally::Counted;
use super::{Guard, PostOutcome};
use crate::call::{ToolCall, Transport};
use crate::mcp::era::{Era, Version};
use crate::mcp::jsonrpc::{IdKey, Message};

pub mod envelope;
pub mod server;
mod watched;

pub use envelope::Envelope;

pub use crate::session::{Pending, SessionCalls};
pub use watched::{Lister, Watch, Watched};

/// What inspection saw in one message.
#[derive(Debug)]
pub enum Seen {
    /// A watched call's response, settled with its outcome (counted when `call` is dropped).
    Call { call: Counted },
    /// An `initialize` result naming this version, for a client that can (or cannot) elicit.
    Initialized { version: Version, elicits: bool },
    /// A `tools/list` result of this upstream.
    Listed { upstream: std::sync::Arc<str>, result: Value },
    /// A `tools/call` answered with a task: task `task` of `upstream` runs tool `tool`.
    TaskCreated { upstream: std::sync::Arc<str>, task: String, tool: String },
}

/// What may be released after inspecting one JSON text.
#[derive(Debug, Default, PartialEq, Eq)]
pub enum Release {
    /// The bytes as received.
    #[default]
    Unchanged,
    /// This JSON text instead.
    Rewritten(String),
    /// Nothing: the text is not a well-formed JSON-RPC message while results are pending, so the
    /// proxy cannot tell whether it carries one (a duplicate `id` key, say, that the client would
    /// read differently). A real server never sends this.
    Withheld,
    /// Nothing: a server-to-client message a rule refused ([`server`]).
    Dropped,
}

/// The result of inspecting one JSON text (a message or an array of messages).
#[derive(Debug, Default)]
pub struct Inspection {
    pub release: Release,
    pub seen: Vec<Seen>,
    /// JSON-RPC errors to send the upstream for server requests that were dropped.
    pub replies: Vec<Vec<u8>>,
}

enum One {
    Unchanged,
    Rewritten(String),
    Malformed,
}

/// The answers to every call `watched` holds when a message that may carry their results was
/// withheld (malformed, cut off, too large to inspect): each gets a JSON-RPC error saying so, and
/// is counted as failed as its watch is dropped. Every transport answers them this way — a JSON
/// body, SSE events, stdio lines — so a waiting call is never left hanging.
pub fn withheld_answers(watched: &mut Watched, why: &str) -> Vec<Vec<u8>> {
    watched
        .drain()
        .filter(|(_, w)| matches!(w, Watch::Call(_)))
        .map(|(id, _)| {
            let id = serde_json::value::RawValue::from_string(id.as_raw().to_owned()).ok();
            crate::mcp::jsonrpc::error_response(id.as_deref(), crate::mcp::jsonrpc::code::UPSTREAM_ERROR, why)
        })
        .collect()
}

/// True when an answer no route names carries text a client gives its model: `initialize`'s
/// `instructions`, a task's `statusMessage` (as written, or with an escape in it).
fn carries_model_text(text: &str) -> bool {
    text.contains("\"instructions\"") || text.contains("\"statusMessage\"") || text.contains('\\')
}

/// Brings into `watched` the session's calls that responses in `text` may answer: any stream of
/// a session can carry any of its answers, and a client takes them wherever they turn up. Free
/// (no parse, no lock) while the session has watched nothing.
///
/// On a POST's stream, an answer under another call's id has two readings: the TypeScript SDK
/// routes it to the call its id names, the Python SDK takes it as the POST's own. It is judged
/// as the call its id names unless the POST's own call is judged where that one is not (a rule
/// reads the own call's result and not the other's, or the own tool is `flows.private` and the
/// other is not): then as the own call ([`adopt_strays`]; red team R10-2). Two calls judged by
/// different rules are judged by the one the id names.
pub fn adopt(
    answer: &Envelope<'_>,
    watched: &mut Watched,
    calls: &SessionCalls,
    own: Option<&Own>,
    guard: &Guard,
) {
    if !calls.is_active() {
        return;
    }
    // The stream's own call: the POST's (SSE: kept from its start), else the first watched —
    // copied only when a stray turns up (an answer under the stream's own id needs none).
    let mut first: Option<Option<ToolCall>> = None;
    for id in answer.response_ids() {
        let key = IdKey::new(id);
        // The stream's own watch (if any) is the one inspected.
        if watched.0.iter().any(|(k, _)| key.answers(k)) {
            continue;
        }
        let own = first.get_or_insert_with(|| match own {
            Some(Own::Call(c)) => Some(c.clone()),
            Some(Own::List(_) | Own::Initialize { .. }) => None,
            None => watched.calls().next().map(|(_, c)| c.clone()),
        });
        if let (Some(own), Some(Pending::Call(named))) = (own.as_ref(), calls.peek(&key)) {
            if guard.judges_more(own, &named) {
                continue;
            }
        }
        match calls.answer(&key) {
            Some(Pending::Call(call)) => watched.insert_call(key, call),
            Some(Pending::List(agent)) => {
                watched.insert(key, Watch::List(Lister::new(calls.upstream().clone(), agent)))
            }
            None => {}
        }
    }
}

/// What the POST a stream answers was for: every response on the stream may be taken as its
/// answer.
#[derive(Debug, Clone)]
pub enum Own {
    /// A call (its first, in a batch).
    Call(ToolCall),
    /// A `tools/list` of this upstream, by this caller.
    List(Lister),
    /// An `initialize` (its answer judged as this call), for a client that can (or cannot)
    /// elicit: the Python SDK takes any response on the handshake's stream as its answer, and
    /// gives its `instructions` to the model (red team R10-3).
    Initialize { call: ToolCall, elicits: bool },
}

impl Own {
    /// The request `watched` was made for: its first call, else its `tools/list`.
    pub fn of(watched: &Watched) -> Option<Own> {
        watched.calls().next().map(|(_, c)| Own::Call(c.clone())).or_else(|| {
            watched.0.iter().find_map(|(_, w)| match w {
                Watch::List(lister) => Some(Own::List(lister.clone())),
                Watch::Initialize { elicits, answer } => {
                    Some(Own::Initialize { call: answer.call().clone(), elicits: *elicits })
                }
                Watch::Call(_) => None,
            })
        })
    }
}

/// On the SSE stream of a POST that carried `own`, a response with any other id is inspected as
/// its answer — a call's result, or the tool list: the Python SDK rewrites the id of every
/// response on a request's stream to the request's own before it routes it.
pub fn adopt_strays(answer: &Envelope<'_>, watched: &mut Watched, own: &Own) {
    for id in answer.response_ids() {
        if watched.peek(id).is_none() {
            match own {
                Own::Call(call) => watched.insert_call(IdKey::new(id), call.clone()),
                Own::List(lister) => watched.insert(IdKey::new(id), Watch::List(lister.clone())),
                Own::Initialize { call, elicits } => watched.insert(
                    IdKey::new(id),
                    Watch::Initialize { elicits: *elicits, answer: Counted::new(call.clone(), None) },
                ),
            }
        }
    }
}

/// True when inspecting `text` will wait on a Layer 2 check: some response in it answers a
/// watched call that a guardrail rule covers. Without guardrails on results, this is free.
pub fn needs_check(answer: &Envelope<'_>, watched: &Watched, guard: &Guard) -> bool {
    if watched.is_empty() {
        return false;
    }
    // A result recorded in a flow index shared across replicas is written to the store: a wait.
    if guard.shares_flows()
        && answer.response_ids().any(|id| matches!(watched.peek(id), Some(Watch::Call(_))))
    {
        return true;
    }
    let results = guard.guardrails().is_some_and(|g| g.watches_results());
    // A `tools/list` result is screened (pins, a `tools` phase rule): that may wait on a check.
    let lists = guard.screens_tools();
    if !results && !lists {
        return false;
    }
    answer.response_ids().any(|id| match watched.peek(id) {
        Some(Watch::Call(c)) => {
            results
                && (c.method != crate::call::Method::Unrouted || carries_model_text(answer.text()))
                && guard.checks_result_of(c)
        }
        Some(Watch::Initialize { answer: c, .. }) => {
            results && carries_model_text(answer.text()) && guard.checks_result_of(c.call())
        }
        Some(Watch::List(_)) => lists,
        _ => false,
    })
}

/// True when inspecting `text` as it came from an upstream will wait on a Layer 2 check: a
/// watched result or a server-to-client message a guardrail rule covers.
pub fn waits(answer: &Envelope<'_>, watched: &Watched, guard: &Guard) -> bool {
    needs_check(answer, watched, guard)
        || (guard.guardrails().is_some_and(|g| g.watches_results()) && server::present(answer.text()))
}

/// Inspects one JSON text an upstream sent the client: server-to-client messages in it are
/// judged ([`server`]), responses to watched calls inspected ([`inspect`]). It waits only when
/// [`waits`] says so.
pub async fn inspect_from_upstream(
    answer: &Envelope<'_>,
    watched: &mut Watched,
    guard: &Guard,
    upstream: &std::sync::Arc<str>,
) -> Inspection {
    let text = answer.text();
    // A text that is not a well-formed message may be a server message the client still reads
    // (a `params` named twice: the SDKs keep the last) or an answer: it is judged by nobody, so
    // it is never relayed while results are judged — whether or not a call is pending.
    if guard.inspects_results() && !answer.well_formed() {
        return Inspection { release: Release::Withheld, ..Default::default() };
    }
    if !guard.inspects_results() || !server::present(text) {
        return inspect(answer, watched, guard).await;
    }
    let call = watched.calls().next().map(|(_, c)| c.clone());
    let origin = server::Origin { upstream, call: call.as_ref() };
    match server::judge(text, guard, origin).await {
        server::Judged::Release => inspect(answer, watched, guard).await,
        server::Judged::Rewritten(new) => {
            let mut i = inspect(&Envelope::parse(&new), watched, guard).await;
            if i.release == Release::Unchanged {
                i.release = Release::Rewritten(new);
            }
            i
        }
        server::Judged::Drop { replies } => {
            Inspection { release: Release::Dropped, seen: Vec::new(), replies }
        }
    }
}

/// Inspects `answer`, which may be one JSON-RPC message or a batch array of them. It waits only
/// when [`needs_check`] says so; otherwise it completes on its first poll.
pub async fn inspect(answer: &Envelope<'_>, watched: &mut Watched, guard: &Guard) -> Inspection {
    let mut out = Inspection::default();
    if watched.is_empty() || answer.is_blank() {
        return out;
    }
    if answer.is_batch() {
        let Some(messages) = answer.batch() else {
            out.release = Release::Withheld;
            return out;
        };
        let mut parts: Vec<String> = Vec::with_capacity(messages.len());
        let mut changed = false;
        for (text, msg) in messages {
            match inspect_one(text, msg.as_ref(), watched, guard, &mut out.seen).await {
                One::Rewritten(new) => {
                    changed = true;
                    parts.push(new);
                }
                One::Unchanged => parts.push((*text).to_owned()),
                One::Malformed => {
                    out.release = Release::Withheld;
                    return out;
                }
            }
        }
        if changed {
            out.release = Release::Rewritten(format!("[{}]", parts.join(",")));
        }
        return out;
    }
    out.release = match inspect_one(answer.text(), answer.single(), watched, guard, &mut out.seen).await {
        One::Unchanged => Release::Unchanged,
        One::Rewritten(new) => Release::Rewritten(new),
        One::Malformed => Release::Withheld,
    };
    out
}

async fn inspect_one(
    text: &str,
    msg: Option<&Message<'_>>,
    watched: &mut Watched,
    guard: &Guard,
    seen: &mut Vec<Seen>,
) -> One {
    let Some(msg) = msg else {
        return One::Malformed;
    };
    // Only responses answer watched ids; a server-to-client *request* may reuse an id value.
    if msg.method.is_some() {
        return One::Unchanged;
    }
    let Some(watch) = msg.id.and_then(|id| watched.take(id)) else {
        return One::Unchanged;
    };
    // JSON-RPC 2.0 answers with a result or an error, never both. The Python SDK reads such a
    // message as its error (whose message the client raises, and an agent shows its model),
    // another reader as its result: judging one of them releases the other unread.
    if msg.result.is_some() && msg.error.is_some() {
        return One::Malformed;
    }
    match watch {
        Watch::Initialize { elicits, answer } => {
            let version = msg
                .result
                .and_then(|r| serde_json::from_str::<Value>(r.get()).ok())
                .and_then(|v| v.get("protocolVersion").and_then(Value::as_str).and_then(Version::parse));
            if let Some(v) = version {
                seen.push(Seen::Initialized { version: v, elicits });
            }
            judged(text, msg, answer, guard, seen).await
        }
        Watch::List(lister) => {
            let Some(raw) = msg.result else { return One::Unchanged };
            let screens = guard.screens_tools();
            // Some tool may be denied to this caller by name: its list is filtered for it.
            let filters = guard.lists_filtered(lister.agent.as_deref());
            let Ok(result) = serde_json::from_str::<Value>(raw.get()) else {
                // What cannot be read cannot be screened: not released while screening is on.
                return if screens || filters { One::Malformed } else { One::Unchanged };
            };
            let screened = match screens {
                true => guard.tool_defs().screen(guard.screening(), &lister.upstream, &result).await,
                false => None,
            };
            let shown = match filters {
                true => guard.shown(&lister, screened.as_ref().unwrap_or(&result)),
                false => None,
            };
            seen.push(Seen::Listed { upstream: lister.upstream, result });
            match shown.or(screened).map(|new| envelope::splice(text, raw, &new.to_string())) {
                None => One::Unchanged,
                Some(Some(spliced)) => One::Rewritten(spliced),
                Some(None) => One::Malformed,
            }
        }
        Watch::Call(call) => judged(text, msg, call, guard, seen).await,
    }
}

/// A watched call's answer, judged: its result, or its error (whose message and data can carry
/// tool output too), redacted and checked; a refusal takes its place.
async fn judged(
    text: &str,
    msg: &Message<'_>,
    mut call: Counted,
    guard: &Guard,
    seen: &mut Vec<Seen>,
) -> One {
    let (field, raw) = match (msg.result, msg.error) {
        (Some(r), _) => ("result", r),
        (None, Some(e)) => ("error", e),
        (None, None) => return One::Malformed,
    };
    // A tool called as a task: its output comes later, judged as this tool (red team R10-4).
    if call.method == crate::call::Method::ToolsCall && field == "result" {
        if let Some(task) = crate::session::task_ids::created_by(raw.get()) {
            let tool = call.name.clone();
            seen.push(Seen::TaskCreated { upstream: call.upstream.clone(), task, tool });
        }
    }
    let started = std::time::Instant::now();
    // An answer no route names goes to Layer 2 only when it carries text a client gives its
    // model (`initialize`'s `instructions`, a task's `statusMessage`); a check of every `ping`
    // is work nobody configured. It is always redacted.
    let plumbing = call.method == crate::call::Method::Unrouted && !carries_model_text(raw.get());
    let checked = !plumbing && guard.checks_result_of(&call);
    if !guard.inspects_results() || (!checked && !guard.redacts() && !guard.records_flows()) {
        if guard.audit().is_on() {
            let raw_text = Value::String(raw.get().to_owned());
            audit_post(guard, &call, PostOutcome::Pass, &raw_text, started);
        }
        call.settle(PostOutcome::Pass.into());
        seen.push(Seen::Call { call });
        return One::Unchanged;
    }
    let Ok(mut value) = serde_json::from_str::<Value>(raw.get()) else {
        return One::Malformed;
    };
    let era = match call.transport {
        Transport::Mcp(era) => era,
        Transport::Http | Transport::Hook => Era::Legacy,
    };
    let method = call.method;
    let outcome = match plumbing {
        true => guard.post(&call, &mut value),
        false => guard.result_outcome(&call, &mut value, |reason| method.blocked(reason, era)).await,
    };
    // A refusal takes the answer's place: an `isError` result for a tool call, a
    // JSON-RPC error for any other request.
    let (original, field) = match outcome {
        PostOutcome::Blocked | PostOutcome::Unavailable => (field, method.blocked_member()),
        _ => (field, field),
    };
    audit_post(guard, &call, outcome, &value, started);
    call.settle(outcome.into());
    seen.push(Seen::Call { call });
    match outcome {
        PostOutcome::Pass => One::Unchanged,
        // The new value in the original bytes: every other field as the upstream sent it.
        _ if field == original => match envelope::splice(text, raw, &value.to_string()) {
            Some(spliced) => One::Rewritten(spliced),
            None => One::Malformed,
        },
        _ => {
            // An answer that became the other kind (an error a result, a result an
            // error): rebuild the message, so fields beside it survive.
            let Ok(mut whole) = serde_json::from_str::<serde_json::Map<String, Value>>(text) else {
                return One::Malformed;
            };
            whole.remove(original);
            whole.insert(field.into(), value);
            One::Rewritten(Value::Object(whole).to_string())
        }
    }
}

/// The audit line of a result's decision; `released` is what the agent gets (its digest and a
/// masked preview are written, never the text).
fn audit_post(
    guard: &Guard,
    call: &ToolCall,
    outcome: PostOutcome,
    released: &Value,
    started: std::time::Instant,
) {
    // Plumbing (an answer to `initialize`, `ping`) is written only when the gate changed it.
    if call.method == crate::call::Method::Unrouted && outcome == PostOutcome::Pass {
        return;
    }
    let label = crate::gate::CallOutcome::from(outcome).into();
    guard.audit().call(crate::audit::Stage::Post, call, label, None, None, Some(released), started.elapsed());
}

#[cfg(test)]
mod tests;
