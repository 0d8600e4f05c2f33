//! The pre-call decision over one parsed JSON-RPC payload, shared by the HTTP gate and the stdio
//! relay: which calls go on, which are refused, and which responses to watch on the way back.

use std::sync::Arc;

use serde_json::value::RawValue;

use super::post::{Watch, Watched};
use super::tally::{Counted, SharedCounter};
use super::{CallOutcome, Guard};
use crate::approval::{Approvals, Ask, Via};
use crate::call::{Method, ToolCall};
use crate::mcp::era::{Era, Version};
use crate::mcp::jsonrpc::{self, code, IdKey, Kind, Message, Payload};

mod ask;
pub mod judge;
pub mod reviewer;
mod routes;
pub mod task;
pub mod typed;
pub mod verdict;
pub(crate) mod why;
use ask::{asked, client_elicits, declares_elicitation};
use judge::Verdict;
use routes::routed;

/// What the transport knows about the exchange a payload belongs to.
#[derive(Debug, Clone)]
pub struct Context<'a> {
    pub upstream: &'a Arc<str>,
    /// The authenticated agent (its policy decides; see [`crate::identity`]).
    pub agent: Option<&'a Arc<crate::identity::Agent>>,
    pub era: Era,
    /// The version the session negotiated in `initialize`, if the proxy saw it.
    pub negotiated: Option<Version>,
    pub session: Option<&'a str>,
    /// Waivers, and whether a human can be asked.
    pub approvals: &'a Approvals,
    /// The client declared the `elicitation` capability (form mode) in `initialize`.
    pub elicits: bool,
    /// Who is calling, as the transport knows it (HTTP: the `Authorization` header, else the
    /// peer's address); a modern-era approval state is bound to it, and the repeated-denial
    /// breaker keeps a streak for it. Never logged.
    pub principal: Option<&'a str>,
    /// Where call outcomes are counted (none offline).
    pub counter: Option<&'a SharedCounter>,
    /// The transport tells the agent why a call was allowed (the hook: Claude Code logs it), so
    /// Layer 1's decision is kept with the verdict rather than evaluated a second time.
    pub explain: bool,
    /// The mode the transport was told beside the message (HTTP: the `Portcullis-Mode` header);
    /// a call's `_meta` saying plan puts it in plan mode too, and neither can clear the other.
    pub mode: crate::call::Mode,
}

impl<'a> Context<'a> {
    /// A headless context on `upstream` in `era`: no session, no caller, nothing counted, nobody
    /// to ask (the tests' and offline entrances' starting point).
    pub fn headless(upstream: &'a Arc<str>, approvals: &'a Approvals, era: Era) -> Context<'a> {
        Context {
            upstream,
            agent: None,
            era,
            negotiated: None,
            session: None,
            approvals,
            elicits: false,
            principal: None,
            counter: None,
            explain: false,
            mode: crate::call::Mode::Act,
        }
    }
}

impl Context<'_> {
    /// `call`, to be counted when it ends.
    fn counted(&self, call: ToolCall) -> Counted {
        Counted::new(call, self.counter.cloned())
    }

    /// `call`, refused with `outcome`: counted when dropped.
    fn refused(&self, call: ToolCall, outcome: CallOutcome) -> Counted {
        Counted::settled(call, self.counter.cloned(), outcome)
    }

    /// The answer to a request no route names, as the pseudo-tool `mcp__{upstream}__{method}`.
    fn unrouted(&self, method: &str) -> ToolCall {
        ToolCall::unrouted(self.upstream.clone(), method, self.era)
            .with_session(self.session.map(str::to_owned))
            .with_caller(self.principal)
            .with_agent(self.agent.cloned())
    }

    /// The watch on `call`'s answer under `id`, holding `permit` until the answer is done with.
    fn watch(&self, id: &RawValue, call: ToolCall, permit: crate::limits::Permit) -> (IdKey, Watch) {
        (IdKey::new(id), Watch::Call(self.counted(call).with_permit(permit)))
    }
}

/// The pre-call decision for a payload.
#[derive(Debug)]
pub enum Plan {
    /// Forward the payload's bytes unchanged; watch these responses.
    Forward(Watched),
    /// Answer with `body` (a JSON-RPC response or array of them) and forward nothing.
    Refuse(Refusal),
    /// One call that a human must decide: forward it (watching its result) only if allowed.
    Ask(Box<Held>),
    /// Forward this message in place of the payload (a modern-era retry the user approved, with
    /// the proxy's approval key and state taken out); watch these responses.
    Rewrite(Watched, Vec<u8>),
}

/// A single call waiting for a human.
#[derive(Debug)]
pub struct Held {
    pub ask: Ask,
    /// Who is asked.
    pub via: Via,
    /// The call's `_meta.progressToken`, to keep its progress flowing while it waits.
    pub progress: Option<Box<RawValue>>,
    id: Box<RawValue>,
    call: Counted,
    /// The refusal to give if the answer is no (or never comes).
    reason: String,
    outcome: CallOutcome,
    era: Era,
    /// What to forward if it is allowed, when not the payload's own bytes (the user's task taken
    /// out: [`task::sans_task`]).
    pub body: Option<Vec<u8>>,
}

impl Held {
    /// What to watch when the call is allowed.
    pub fn allowed(self) -> Watched {
        let counter = self.call.counter().cloned();
        Watched::from_iter([(IdKey::new(&self.id), Watch::Call(self.call))]).with_counter(counter)
    }

    /// The answer when it is not: the refusal, with what the human did (`why`), and the call
    /// settled with `outcome` (the ask's own label when `None`), counted when dropped.
    pub fn refused(self, why: &str, outcome: Option<CallOutcome>) -> (Vec<u8>, Counted) {
        let reason = format!("{} {why}{}", self.reason, self.call.decision.cite());
        let body = self.call.method.refusal(&self.id, &reason, self.era);
        let mut call = self.call;
        call.settle(outcome.unwrap_or(self.outcome));
        (body, call)
    }

    /// Nobody will read an answer (the agent went away, which withdraws the ask): counted as an
    /// ask refused, never as an upstream failure.
    pub fn withdraw(self) {
        let mut call = self.call;
        call.settle(CallOutcome::AskRefused);
    }

    pub fn id(&self) -> &RawValue {
        &self.id
    }

    pub fn call(&self) -> &ToolCall {
        &self.call
    }
}

#[derive(Debug)]
pub struct Refusal {
    pub body: Vec<u8>,
    /// `true` when the payload was malformed for the protocol (a client fault, HTTP 400);
    /// `false` for a policy denial (answered as a normal result, HTTP 200).
    pub invalid: bool,
    /// The calls refused, each counted with its outcome when the refusal is dropped.
    pub calls: Vec<Counted>,
}

/// One message's decision: final, or a call to put through the door ([`judge::judge`]), which may
/// wait on a Layer 2 check, a waiver lookup or a modern-era retry's sealed state.
enum Pre<'a> {
    Done(One),
    Judge { id: Box<RawValue>, call: ToolCall, params: Option<&'a RawValue> },
}

impl From<One> for Pre<'_> {
    fn from(o: One) -> Self {
        Pre::Done(o)
    }
}

enum One {
    Forward(Option<(IdKey, Watch)>),
    Rewrite((IdKey, Watch), Vec<u8>),
    /// Answered by the proxy with this result (a modern-era `input_required`).
    Answer {
        id: Box<RawValue>,
        result: serde_json::Value,
        call: Box<ToolCall>,
    },
    Ask(Box<Held>),
    Deny {
        id: Box<RawValue>,
        call: Box<ToolCall>,
        rule: String,
        reason: String,
        outcome: CallOutcome,
    },
    Invalid {
        id: Option<Box<RawValue>>,
        message: String,
    },
    /// A request whose params the proxy will not act on (a bad approval state): never forwarded.
    Rejected {
        id: Box<RawValue>,
        message: String,
    },
}

fn one<'a>(msg: &Message<'a>, cx: &Context<'_>) -> Pre<'a> {
    match (msg.method(), msg.kind(), msg.id) {
        (Some("tools/call"), Kind::Request, Some(id)) => match routes::tool_call(msg, cx) {
            Err(message) => One::Invalid { id: Some(id.to_owned()), message }.into(),
            Ok(call) => decided(id, call, msg.params),
        },
        // A `tools/call` that is not a well-formed request (no id, or an id of null) is refused:
        // the proxy must not guess how the server treats it.
        (Some("tools/call"), _, _) => One::Invalid {
            id: None,
            message: "tools/call must be a request with a string or number id".into(),
        }
        .into(),
        // Tool definitions are learnt so a waiver dies with the definition it was armed for.
        (Some("tools/list"), Kind::Request, Some(id)) => {
            let lister = super::post::Lister::new(cx.upstream.clone(), cx.agent.cloned());
            One::Forward(Some((IdKey::new(id), Watch::List(lister)))).into()
        }
        (Some("initialize"), Kind::Request, _) => {
            let elicits = declares_elicitation(msg.params, "/capabilities/elicitation");
            let answer = |id| {
                let call = cx.unrouted("initialize");
                (IdKey::new(id), Watch::Initialize { elicits, answer: cx.counted(call) })
            };
            One::Forward(msg.id.map(answer)).into()
        }
        (_, Kind::Invalid, _) => One::Invalid {
            id: msg.id.map(|i| i.to_owned()),
            message: "not a JSON-RPC request, notification or response".into(),
        }
        .into(),
        (Some(m), kind, id) => match (Method::route(m), kind, id) {
            // A request naming a resource is decided like a tool call.
            (Some(method), Kind::Request, Some(id)) if method.decided() => match routed(method, msg, cx) {
                Err(message) => One::Invalid { id: Some(id.to_owned()), message }.into(),
                Ok(call) => decided(id, call, msg.params),
            },
            (Some(method), _, _) if method.decided() => One::Invalid {
                id: None,
                message: format!("{m} must be a request with a string or number id"),
            }
            .into(),
            // Any other request a client shows the answer of: forwarded, its answer judged.
            (Some(method), Kind::Request, Some(id)) => {
                let call = routes::answered(method, msg, cx);
                let call = call
                    .with_session(cx.session.map(str::to_owned))
                    .with_caller(cx.principal)
                    .with_agent(cx.agent.cloned());
                One::Forward(Some(cx.watch(id, call, Default::default()))).into()
            }
            // A request no route names: its answer is judged all the same.
            (None, Kind::Request, Some(id)) => {
                One::Forward(Some(cx.watch(id, cx.unrouted(m), Default::default()))).into()
            }
            _ => One::Forward(None).into(),
        },
        _ => One::Forward(None).into(),
    }
}

/// A call that is a request with `id`, to be judged.
fn decided<'a>(id: &RawValue, call: ToolCall, params: Option<&'a RawValue>) -> Pre<'a> {
    Pre::Judge { id: id.to_owned(), call, params }
}

/// Records one message's decision (calls only) through the one [`judge::decided`] event.
fn recorded(one: One, cx: &Context<'_>, guard: &Guard, started: std::time::Instant) -> One {
    use judge::Decided;
    let what = match &one {
        One::Forward(Some((_, Watch::Call(call)))) | One::Rewrite((_, Watch::Call(call)), _) => {
            Some((&**call, Decided::Forwarded))
        }
        One::Ask(p) => Some((p.call(), Decided::Asked { reason: Some(&p.ask.reason) })),
        One::Answer { call, .. } => Some((&**call, Decided::Asked { reason: None })),
        One::Deny { call, rule, reason, outcome, .. } => {
            Some((&**call, Decided::Refused { rule, reason, outcome: *outcome }))
        }
        _ => None,
    };
    // A request no route names is not decided: nothing to record before its answer.
    if let Some((call, what)) = what.filter(|(c, _)| c.method != Method::Unrouted) {
        judge::decided(call, what, cx, guard, started);
    }
    one
}

/// Puts a call through the door and renders the verdict as JSON-RPC (an ask boxed: it is rare).
async fn settle(p: Pre<'_>, cx: &Context<'_>, guard: &Guard) -> One {
    let Pre::Judge { id, call, params } = p else {
        let Pre::Done(one) = p else { unreachable!("two variants") };
        return one;
    };
    match judge::judge(&call, cx, guard, client_elicits(cx, params)).await {
        Verdict::Forward(_, permit) => One::Forward(Some(cx.watch(&id, call, permit))),
        Verdict::Refuse(d) => {
            One::Deny { id, call: Box::new(call), rule: d.rule, reason: d.reason, outcome: d.outcome }
        }
        Verdict::Ask { denial, ask, via } => Box::pin(asked(id, call, denial, *ask, via, cx, params)).await,
    }
}

/// [`decide`], for a transport that forwards what is decided: a payload to forward that carries
/// the user's task is rewritten without it ([`task::sans_task`]; the task is for the checker).
/// `text`: the bytes `payload` was parsed from.
pub async fn decide_to_forward(text: &[u8], payload: &Payload<'_>, cx: &Context<'_>, guard: &Guard) -> Plan {
    match decide(payload, cx, guard).await {
        Plan::Forward(w) => match task::sans_task(text, payload) {
            Some(body) => Plan::Rewrite(w, body),
            None => Plan::Forward(w),
        },
        Plan::Ask(mut held) => {
            held.body = task::sans_task(text, payload);
            Plan::Ask(held)
        }
        other => other,
    }
}

/// Decides a payload: Layer 1 for every element, then the Layer 2 checks it asked for (all of a
/// batch's at once). Without a pending check nothing is awaited.
pub async fn decide(payload: &Payload<'_>, cx: &Context<'_>, guard: &Guard) -> Plan {
    let started = std::time::Instant::now();
    match payload {
        Payload::Single(msg) => match recorded(settle(one(msg, cx), cx, guard).await, cx, guard, started) {
            One::Forward(w) => Plan::Forward(Watched::from_iter(w).with_counter(cx.counter.cloned())),
            One::Rewrite(w, body) => {
                Plan::Rewrite(Watched::from_iter([w]).with_counter(cx.counter.cloned()), body)
            }
            One::Ask(p) => Plan::Ask(p),
            One::Answer { id, result, .. } => Plan::Refuse(Refusal {
                body: jsonrpc::result_response(&id, &result.to_string()),
                invalid: false,
                calls: Vec::new(),
            }),
            One::Rejected { id, message } => Plan::Refuse(Refusal {
                body: jsonrpc::error_response(Some(&id), code::INVALID_PARAMS, &message),
                invalid: true,
                calls: Vec::new(),
            }),
            One::Deny { id, call, reason, outcome, .. } => Plan::Refuse(Refusal {
                body: call.method.refusal(&id, &reason, cx.era),
                invalid: false,
                calls: vec![cx.refused(*call, outcome)],
            }),
            One::Invalid { id, message } => Plan::Refuse(Refusal {
                body: jsonrpc::error_response(id.as_deref(), code::INVALID_REQUEST, &message),
                invalid: true,
                calls: Vec::new(),
            }),
        },
        Payload::Batch(msgs) => batch(msgs, cx, guard).await,
    }
}

async fn batch(msgs: &[Message<'_>], cx: &Context<'_>, guard: &Guard) -> Plan {
    let started = std::time::Instant::now();
    if !cx.negotiated.is_some_and(Version::allows_batches) {
        let version = cx.negotiated.map(Version::as_str).unwrap_or("this session's protocol version");
        return Plan::Refuse(Refusal {
            body: jsonrpc::error_response(
                None,
                code::INVALID_REQUEST,
                &format!("JSON-RPC batches are not part of MCP {version}; send one message per request"),
            ),
            invalid: true,
            calls: Vec::new(),
        });
    }
    // 2025-03-26: every element is decided. If any is refused, none is forwarded — a partial
    // batch would make the proxy splice its answers into the server's, and a caller that mixes a
    // refused call into a batch gets a clear per-element answer to resend the rest alone.
    let decided: Vec<Pre> = msgs.iter().map(|m| one(m, cx)).collect();
    let decided: Vec<One> =
        futures_util::future::join_all(decided.into_iter().map(|p| settle(p, cx, guard))).await;
    let decided: Vec<One> = decided.into_iter().map(|o| recorded(o, cx, guard, started)).collect();
    if decided.iter().all(|d| matches!(d, One::Forward(_))) {
        return Plan::Forward(
            decided
                .into_iter()
                .filter_map(|d| if let One::Forward(w) = d { w } else { None })
                .collect::<Watched>()
                .with_counter(cx.counter.cloned()),
        );
    }
    let mut bodies = Vec::new();
    let mut calls = Vec::new();
    let mut invalid = false;
    for (d, m) in decided.into_iter().zip(msgs) {
        match d {
            One::Deny { id, call, reason, outcome, .. } => {
                bodies.push(call.method.refusal(&id, &reason, cx.era));
                calls.push(cx.refused(*call, outcome));
            }
            // A human is asked about one call at a time: inside a batch an ask stands refused.
            One::Ask(p) => {
                let (body, call) = p.refused(crate::says::answer::IN_BATCH, None);
                calls.push(call);
                bodies.push(body);
            }
            One::Invalid { id, message } => {
                invalid = true;
                bodies.push(jsonrpc::error_response(id.as_deref(), code::INVALID_REQUEST, &message));
            }
            One::Rejected { id, message } => {
                invalid = true;
                bodies.push(jsonrpc::error_response(Some(&id), code::INVALID_PARAMS, &message));
            }
            // Batches exist only in a legacy era, where no round trip is answered or rewritten.
            One::Rewrite(..) | One::Answer { .. } | One::Forward(_) => {
                if let (Some(id), Kind::Request) = (m.id, m.kind()) {
                    bodies.push(jsonrpc::error_response(
                        Some(id),
                        code::INVALID_REQUEST,
                        "not sent: another request in this batch was refused; resend it on its own",
                    ));
                }
            }
        }
    }
    let mut body = b"[".to_vec();
    for (i, b) in bodies.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(b);
    }
    body.push(b']');
    Plan::Refuse(Refusal { body, invalid, calls })
}

/// Runs a future to completion on a throwaway runtime (tests of async decisions).
#[cfg(test)]
pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime").block_on(f)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod properties {
    use super::*;
    use crate::mcp::jsonrpc::parse;

    proptest::proptest! {
        /// No body — valid JSON-RPC, near-misses or noise — makes the gate panic.
        #[test]
        fn the_gate_never_panics_on_any_body(
            body in proptest::prop_oneof![
                ".*",
                r#"\{"jsonrpc":"2\.0","id":(1|"a"|null|1\.0|\[\]),"method":"(tools/call|initialize|x)","params":\{"name":"[a-z_]{0,6}","arguments":(\{\}|null|1|"x")\}\}"#,
                r#"\[(\{"jsonrpc":"2\.0","id":[0-9],"method":"tools/call","params":\{"name":"rm"\}\},?){0,3}\]"#,
            ]
        ) {
            let guard = crate::gate::guard::tests::guard("permissions: { deny: [mcp__up__rm] }\n");
            let up: Arc<str> = "up".into();
            for negotiated in [None, Some(Version::V2025_03_26)] {
                let approvals = Approvals::headless();
        let cx = Context { negotiated, ..Context::headless(&up, &approvals, Era::Legacy) };
                if let Ok(payload) = parse(body.as_bytes()) {
                    let _ = block_on(decide(&payload, &cx, &guard));
                }
            }
        }
    }
}
