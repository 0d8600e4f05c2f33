//! The pre gate's asks: whether a refusal may be overruled by a human — a session waiver, the
//! client's user (elicitation in the legacy eras, an MRTR round trip in the modern one) or an
//! operator — and what the client can do to be asked.

use serde_json::value::RawValue;

use super::{Context, Held, One};
use crate::approval::{Ask, Source, Via};
use crate::call::{Method, ToolCall};
use crate::mcp::era::Era;
use crate::mcp::jsonrpc::CallParams;
use crate::says::Said;

/// True when `params` at `pointer` holds an elicitation capability that allows forms: `{}`
/// (2025-06-18, and form by default in 2025-11-25) or one naming `form`.
pub(super) fn declares_elicitation(params: Option<&RawValue>, pointer: &str) -> bool {
    let Some(v) = params.and_then(|p| serde_json::from_str::<serde_json::Value>(p.get()).ok()) else {
        return false;
    };
    match v.pointer(pointer).and_then(serde_json::Value::as_object) {
        Some(cap) => cap.is_empty() || cap.contains_key("form"),
        None => false,
    }
}

/// The `_meta.progressToken` of a call's params.
pub(super) fn progress_token(params: Option<&RawValue>) -> Option<Box<RawValue>> {
    #[derive(serde::Deserialize)]
    struct Meta {
        #[serde(rename = "progressToken")]
        token: Option<Box<RawValue>>,
    }
    let p = serde_json::from_str::<CallParams<'_>>(params?.get()).ok()?;
    serde_json::from_str::<Meta>(p.meta?.get()).ok()?.token
}

/// A call a human must decide (`via`), as the JSON-RPC transports ask: a modern-era client by an
/// `input_required` result it retries (only `tools/call` results carry one, so other requests
/// stand refused), everyone else by holding the call ([`Held`]).
pub(super) async fn asked(
    id: Box<RawValue>,
    call: ToolCall,
    d: crate::gate::Denial,
    ask: Ask,
    via: Via,
    cx: &Context<'_>,
    params: Option<&RawValue>,
) -> One {
    match via {
        Via::Client if cx.era == Era::Modern && call.method != Method::ToolsCall => {
            let reason = d.reason + &call.decision.cite();
            One::Deny { id, call: Box::new(call), rule: d.rule, reason, outcome: d.outcome }
        }
        Via::Client if cx.era == Era::Modern => round_trip(id, call, ask, cx, params).await,
        via => One::Ask(Box::new(Held {
            // What the agent reads if the answer is no: why it was asked, then what happened
            // (a Layer 1 reason says "headless", which is no longer true once someone is asked).
            reason: match ask.source {
                Source::Checker => d.reason,
                _ => Said::Asked { tool: &ask.tool, reason: &ask.reason, answer: None }.to_string(),
            },
            ask,
            via,
            progress: progress_token(params),
            id,
            call: cx.counted(call),
            outcome: d.outcome,
            era: cx.era,
            body: None,
        })),
    }
}

/// An ask in the modern era: answered with `input_required` (the user's client asks and
/// retries), or — on the retry — decided by the answer the sealed state vouches for.
pub(super) async fn round_trip(
    id: Box<RawValue>,
    call: ToolCall,
    ask: Ask,
    cx: &Context<'_>,
    params: Option<&RawValue>,
) -> One {
    use crate::approval::elicit::Reply;
    use crate::approval::mrtr::Round;
    use crate::approval::{Choice, Resolution};
    match cx.approvals.seals.round(params, &ask, cx.principal).await {
        Round::Ask(result) => One::Answer { id, result, call: Box::new(call) },
        Round::Refused(why) => {
            One::Rejected { id, message: Said::RetryRefused { why: &why.to_string() }.to_string() }
        }
        Round::Answered { reply, waited, params } => {
            let resolution = match reply {
                Reply::Accept(Choice::Deny) | Reply::Decline => Resolution::Denied,
                Reply::Accept(d) => Resolution::Allowed(d),
                Reply::Cancel | Reply::Failed => Resolution::Cancelled,
            };
            cx.approvals.decided(&ask, &resolution, waited);
            let Some(why) = crate::gate::answer::refusal(&resolution, Via::Client) else {
                // The retried call goes on as rebuilt here: without the user's task, as every
                // forwarded call (the task is for the checker, never the tool server).
                let params = super::task::sans_task_value(params);
                let body = serde_json::json!({
                    "jsonrpc": "2.0", "id": &id, "method": "tools/call", "params": params,
                });
                let body = serde_json::to_vec(&body).unwrap_or_default();
                return One::Rewrite(cx.watch(&id, call, Default::default()), body);
            };
            let reason = Said::Asked { tool: &ask.tool, reason: &ask.reason, answer: Some(why.0) }
                .to_string()
                + &call.decision.cite();
            One::Deny { id, call: Box::new(call), rule: "approval".into(), reason, outcome: why.1 }
        }
    }
}

/// Whether the client that sent a call can elicit: the session's `initialize` said so (legacy),
/// or the call's own envelope does (modern, where every request carries its capabilities).
pub(super) fn client_elicits(cx: &Context<'_>, params: Option<&RawValue>) -> bool {
    match cx.era {
        Era::Legacy => cx.elicits,
        Era::Modern => {
            declares_elicitation(params, "/_meta/io.modelcontextprotocol~1clientCapabilities/elicitation")
        }
    }
}
