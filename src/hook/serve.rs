//! The proxy's side of `portcullis hook … --proxy URL`: `POST /hook/pre` and `POST /hook/post` on
//! the admin listener (bearer token required, like the rest of its API). The body is the
//! envelope exactly as Claude Code wrote it; the answer is `{"answer": {…}, "error": "…"?}`,
//! where `answer` is what the hook prints.
//!
//! Decided with the running proxy's guard, approvals and counters, so the verdict cache, session
//! waivers, the repeated-denial breaker, metrics and the audit log are the ones MCP traffic
//! uses. Claude Code's `session_id` is the session. A call asked about is answered with Claude
//! Code's own `ask` at once and also parked for an operator (it shows in `GET /approvals` and the
//! console until `approvals.timeout`): "allow for the session" there arms a waiver, which answers
//! the next identical call in that session with an allow.

use std::sync::Arc;

use http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::{json, Value};

use super::answer::{Answer, Permission};
use super::envelope::{Envelope, Event, MAX_ENVELOPE};
use super::{decide, map};
use crate::approval::{Ask, Choice};
use crate::audit::Stage;
use crate::gate::pre::typed::{decide_typed, CallPlan};
use crate::gate::pre::Context;
use crate::gate::CallOutcome;
use crate::identity::Agent;
use crate::mcp::era::Era;
use crate::proxy::{full, Resp};
use crate::runtime::Shared;
use crate::shell::Dialect;

/// The header naming the configured agent to decide as (`--agent`).
pub const AGENT_HEADER: &str = "x-portcullis-agent";

/// The header naming the shell that runs Claude Code's `Bash` where the hook runs (`$SHELL`
/// there, not the proxy's): `bash`, `zsh`, `dash`, `sh`, `ksh`; bash when absent or unknown.
pub const SHELL_HEADER: &str = "x-portcullis-shell";

/// Serves `POST /hook/{phase}` (already authenticated).
pub async fn endpoint(req: Request<Incoming>, phase: &str, shared: Arc<Shared>) -> Resp {
    if req.method() != Method::POST {
        return reply(StatusCode::METHOD_NOT_ALLOWED, json!({"error": "POST only"}));
    }
    if phase == "prompt" {
        return prompt(req, &shared).await;
    }
    let Some(event) = Event::parse(phase) else {
        return reply(StatusCode::NOT_FOUND, json!({"error": "POST /hook/pre, /hook/post or /hook/prompt"}));
    };
    let agent = req.headers().get(AGENT_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let shell = req.headers().get(SHELL_HEADER).and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
    let shell = shell.unwrap_or(Dialect::Bash);
    let limit = usize::try_from(MAX_ENVELOPE).unwrap_or(usize::MAX);
    let body = match http_body_util::Limited::new(req.into_body(), limit).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return reply(
                StatusCode::PAYLOAD_TOO_LARGE,
                json!({"error": "the hook input is too large or unreadable"}),
            )
        }
    };
    let (answer, error) = match answer(&shared, event, &body, agent.as_deref(), shell).await {
        Ok(a) => (a, None),
        Err(why) => (super::standalone::fallback(event, &why), Some(why)),
    };
    let mut v = json!({ "answer": answer.to_json() });
    if let Some(e) = error {
        v["error"] = Value::String(e);
    }
    reply(StatusCode::OK, v)
}

/// `POST /hook/prompt`: records a `UserPromptSubmit` envelope's prompt for its session
/// ([`super::prompt`]); answers `{"answer": {}}` (the hook prints nothing).
async fn prompt(req: Request<Incoming>, shared: &Arc<Shared>) -> Resp {
    let agent = req.headers().get(AGENT_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let agent = match agent {
        None => None,
        Some(name) if shared.guard.load().agent_profile(&name).is_some() => {
            Some(Agent::configured(name.into()))
        }
        Some(name) => {
            return reply(
                StatusCode::BAD_REQUEST,
                json!({"error": format!("no agent {name:?} in the proxy's config")}),
            )
        }
    };
    let limit = usize::try_from(super::prompt::MAX_PROMPT_ENVELOPE).unwrap_or(usize::MAX);
    let Ok(body) = http_body_util::Limited::new(req.into_body(), limit).collect().await else {
        return reply(
            StatusCode::PAYLOAD_TOO_LARGE,
            json!({"error": "the hook input is too large or unreadable"}),
        );
    };
    match super::prompt::record(shared, &body.to_bytes(), agent.as_ref()) {
        Ok(_) => reply(StatusCode::OK, json!({"answer": {}})),
        Err(e) => reply(StatusCode::BAD_REQUEST, json!({"error": e.to_string()})),
    }
}

fn reply(status: StatusCode, v: Value) -> Resp {
    let mut resp = Resp::new(full(v.to_string()));
    *resp.status_mut() = status;
    resp.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    resp
}

/// Decides one envelope with the running proxy's parts.
pub async fn answer(
    shared: &Arc<Shared>,
    event: Event,
    body: &[u8],
    agent: Option<&str>,
    shell: Dialect,
) -> Result<Answer, String> {
    let env = Envelope::parse(body, event).map_err(|e| e.to_string())?;
    let guard = shared.guard.load_full();
    // The workspace's tiers (`.portcullis/`, the user's file) on the running guard.
    let guard = super::workspace::shared().guard_for(&guard, env.cwd.as_deref())?;
    let agent = match agent {
        None => None,
        Some(name) if guard.agent_profile(name).is_some() => Some(Arc::new(Agent::configured(name.into()))),
        Some(name) => return Err(format!("no agent {name:?} in the proxy's config")),
    };
    // Claude Code's session id, kept in the `hook:` namespace of the session tables: no hook
    // envelope can spell an MCP session's key, nor an MCP session id a hook's.
    let session = env.session.as_deref().map(|s| crate::session::hook_key(s, agent.as_deref()));
    let call = map::call_in(&env, shell)
        .map_err(|e| e.to_string())?
        .with_user_task(shared.approvals.user_tasks.get(session.as_deref()))
        .with_session(session.clone())
        .with_agent(agent);
    let started = std::time::Instant::now();
    match event {
        Event::Pre => {
            let (upstream, agent) = (call.upstream.clone(), call.agent.clone());
            let cx = Context {
                upstream: &upstream,
                agent: agent.as_ref(),
                era: Era::Legacy,
                negotiated: None,
                session: session.as_deref(),
                approvals: &shared.approvals,
                elicits: false,
                principal: None,
                counter: shared.counter(),
                explain: true,
                mode: call.mode,
            };
            Ok(match decide_typed(call.clone(), &cx, &guard).await {
                CallPlan::Forward(mut counted, d) => {
                    counted.settle(CallOutcome::Forwarded);
                    match d {
                        Some(d) => decide::allowed(&call, &d),
                        // A session waiver answered it: no rule allowed it.
                        None => Answer::Pre {
                            permission: Permission::Allow,
                            reason: crate::says::Said::HookAllows {
                                tool: &call.qualified,
                                reason: "an operator allowed it for this session",
                                rule: "session waiver",
                            }
                            .to_string(),
                        },
                    }
                }
                CallPlan::Refuse(_counted, d) => decide::refused(&call, d),
                CallPlan::Ask(asked) => {
                    let mut counted = asked.call;
                    counted.settle(CallOutcome::AskRefused);
                    let parked = park(shared, asked.ask.clone());
                    let reason = crate::says::Said::HookAsks {
                        tool: &call.qualified,
                        reason: &asked.ask.reason,
                        rule: None,
                        operator: parked,
                    };
                    Answer::Pre { permission: Permission::Ask, reason: reason.to_string() }
                }
            })
        }
        Event::Post => {
            let response = env.response.as_ref().ok_or("a PostToolUse input carries tool_response")?;
            let mut result = map::result(&call, response);
            let (redacted, report) = guard.judge_result(&call, &mut result).await;
            let judgement = report.map(|r| r.judgement);
            let answer = decide::post_answer(&call, redacted, judgement, result);
            let reason = match &answer {
                Answer::Block { reason, .. } | Answer::Rewritten { reason, .. } => Some(reason.as_str()),
                _ => None,
            };
            let outcome = decide::post_outcome(&answer);
            guard.audit().call(Stage::Post, &call, outcome.into(), None, reason, None, started.elapsed());
            Ok(answer)
        }
    }
}

/// Parks `ask` for an operator without waiting on it: Claude Code's user is asked meanwhile. An
/// operator's "allow for the session" arms the waiver; nothing else an operator or the clock
/// does here counts against the session (the user at the terminal may well have said yes).
fn park(shared: &Arc<Shared>, ask: Ask) -> Option<u64> {
    let (parked, decided) = shared.approvals.pending.park(ask.clone())?;
    let id = parked.id();
    let (shared, wait) = (shared.clone(), shared.approvals.timeout());
    tokio::spawn(async move {
        if let Ok(Ok(choice)) = tokio::time::timeout(wait, decided).await {
            shared.metrics.approvals(choice.as_str());
            if choice == Choice::AllowSession {
                shared.approvals.waivers.arm(&ask);
            }
        }
        drop(parked);
    });
    Some(id)
}
