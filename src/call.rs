//! The typed tool call every transport is normalised into.

use std::sync::Arc;

use serde_json::value::RawValue;

use crate::mcp::era::Era;

mod digest;
pub mod exact;
pub use digest::{hex_key, principal_digest};

/// How a call reached the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// MCP over Streamable HTTP or stdio, in the given era.
    Mcp(Era),
    /// A plain HTTP tool endpoint (`/http/{upstream}/{path…}`).
    Http,
    /// An agent's own tool, reported by its hook (`portcullis hook`, Claude Code).
    Hook,
}

/// Which MCP request a call is. A `tools/call` names its tool; every other method a client asks
/// for text a model reads (or a resource it touches) is decided or judged as the pseudo-tool
/// `mcp__{upstream}__{method}` (`mcp__fs__resources/read`), which rules and guardrail rules name
/// like any tool (docs/config.md). Tool names never hold `/` in MCP, so these do not collide
/// with a tool's name unless a server breaks that rule — and then the stricter reading (the
/// resource kind) holds for its tool too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    ToolsCall,
    ResourcesRead,
    ResourcesSubscribe,
    ResourcesList,
    ResourcesTemplatesList,
    PromptsGet,
    PromptsList,
    CompletionComplete,
    /// A task's deferred result: a tool call's output, delivered later.
    TasksResult,
    /// A task's state (its `statusMessage` is text a client shows).
    TasksGet,
    /// The session's tasks, each with its state.
    TasksList,
    /// The 2026-07-28 era's long-lived request whose stream carries the session's notifications.
    SubscriptionsListen,
    /// Any other request (`initialize`, `ping`, `tasks/cancel`, `server/discover`, a method of a
    /// later era): forwarded, and its answer judged as `mcp__{upstream}__{its method}` — what a
    /// server puts in an answer nobody named (`initialize`'s `instructions`, which clients give
    /// their model; a cancelled task's `statusMessage`) reaches the client judged.
    Unrouted,
}

impl Method {
    /// Every method other than `tools/call` whose request or answer the gate watches.
    pub const ROUTES: [Method; 11] = [
        Method::ResourcesRead,
        Method::ResourcesSubscribe,
        Method::ResourcesList,
        Method::ResourcesTemplatesList,
        Method::PromptsGet,
        Method::PromptsList,
        Method::CompletionComplete,
        Method::TasksResult,
        Method::TasksGet,
        Method::TasksList,
        Method::SubscriptionsListen,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Method::ToolsCall => "tools/call",
            Method::ResourcesRead => "resources/read",
            Method::ResourcesSubscribe => "resources/subscribe",
            Method::ResourcesList => "resources/list",
            Method::ResourcesTemplatesList => "resources/templates/list",
            Method::PromptsGet => "prompts/get",
            Method::PromptsList => "prompts/list",
            Method::CompletionComplete => "completion/complete",
            Method::TasksResult => "tasks/result",
            Method::TasksGet => "tasks/get",
            Method::TasksList => "tasks/list",
            Method::SubscriptionsListen => "subscriptions/listen",
            Method::Unrouted => "(unrouted request)",
        }
    }

    /// The method of one of [`Method::ROUTES`] (not `tools/call`, which the gate matches first).
    pub fn route(method: &str) -> Option<Method> {
        Method::ROUTES.into_iter().find(|m| m.as_str() == method)
    }

    /// True when Layer 1 (and a pre rule) decides the request before it is sent: it names a
    /// resource, or carries the agent's text to the server (a prompt's arguments, a value to
    /// complete). The others are forwarded and their answers judged.
    pub fn decided(self) -> bool {
        matches!(
            self,
            Method::ToolsCall
                | Method::ResourcesRead
                | Method::ResourcesSubscribe
                | Method::PromptsGet
                | Method::CompletionComplete
        )
    }

    /// The refusal a client shows for this request: an `isError` result for a tool call (the
    /// model reads why and adapts), a JSON-RPC error for anything else (whose result schema has
    /// no room for a reason: `contents`, `messages`, …). Both say why.
    pub fn refusal(self, id: &RawValue, reason: &str, era: Era) -> Vec<u8> {
        match self {
            Method::ToolsCall => {
                crate::mcp::jsonrpc::result_response(id, &crate::mcp::result::refusal(reason, era))
            }
            _ => crate::mcp::jsonrpc::error_response(Some(id), crate::mcp::jsonrpc::code::REFUSED, reason),
        }
    }

    /// The member (`result` or `error`) of the message that replaces a blocked answer.
    pub fn blocked_member(self) -> &'static str {
        match self {
            Method::ToolsCall => "result",
            _ => "error",
        }
    }

    /// The value of [`Method::blocked_member`] that replaces a blocked answer.
    pub fn blocked(self, reason: &str, era: Era) -> serde_json::Value {
        match self {
            Method::ToolsCall => crate::mcp::result::refusal_value(reason, era),
            _ => serde_json::json!({ "code": crate::mcp::jsonrpc::code::REFUSED, "message": reason }),
        }
    }
}

/// One tool call, as the policy sees it.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The configured upstream name.
    pub upstream: Arc<str>,
    /// The tool's own name (`params.name`, or the path of a plain HTTP tool).
    pub name: String,
    /// The name rules address: `mcp__{upstream}__{name}` or `http__{upstream}__{path}`.
    pub qualified: String,
    /// The arguments as received (JSON); `None` when the call carried none.
    pub args: Option<Box<RawValue>>,
    /// The session the call belongs to, when the transport has one.
    pub session: Option<String>,
    /// Who is calling, as budgets count it, as a digest (never the credential): the agent, else
    /// the peer address ([`budget_key`]: an unverified `Authorization` does not make a caller
    /// new). Shares of checker capacity and rate limits are kept per caller, since session ids
    /// are the caller's to choose.
    pub caller: Option<Arc<str>>,
    /// The authenticated agent, when agents are configured.
    pub agent: Option<Arc<crate::identity::Agent>>,
    pub transport: Transport,
    /// The MCP request this is (`tools/call` for plain HTTP tools and hooks too).
    pub method: Method,
    /// What the user asked the agent to do, when the client says (`_meta["portcullis/task"]`,
    /// or the `Portcullis-Task` header of a plain HTTP tool call): shown to the checker, fenced,
    /// so it can tell a send the user asked for from one an injection asked for. Never trusted
    /// as an instruction, never a reason to allow anything Layer 1 does not.
    pub task: Option<Arc<str>>,
    /// What the user asked, recorded through a channel the agent does not control
    /// ([`crate::session::tasks`]): the one task that may show a send to be the user's intent,
    /// with the destinations it asks to send to ([`crate::intent`]).
    pub user_task: Option<Arc<crate::intent::UserTask>>,
    /// Whether the agent says it is planning ([`Mode::Plan`]: edits, writes and shell not proven
    /// read-only are refused before the rules).
    pub mode: Mode,
    /// Whether the agent's own client says a subagent of it makes the call (Claude Code's
    /// `agent_id` in a hook's input): decided as a delegated child's call.
    pub spawn: Spawn,
    /// The id its decisions are recorded and cited under ([`crate::decision`]).
    pub decision: crate::decision::DecisionId,
}

/// Who in the agent's client makes a call. Only the client's harness says it (never the model's
/// text), and a subagent is decided as a delegated child: the root's rules with
/// `permissions.subagent`'s denies and asks joined, no relaxed escape rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Spawn {
    /// The agent itself.
    #[default]
    Main,
    /// One of its subagents (Claude Code's `Task` tool).
    Subagent,
}

/// What the agent says it is doing. Only the agent says it, and it can only narrow: plan mode
/// refuses more, never less.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Act,
    /// Claude Code's plan mode (`permission_mode: plan` in a hook's input), or an MCP client that
    /// says so (`_meta["portcullis/mode"]: "plan"`, the `Portcullis-Mode: plan` header).
    Plan,
}

/// The `_meta` key and the header a client names its mode with.
pub const MODE_META_KEY: &str = "portcullis/mode";
pub const MODE_HEADER: &str = "portcullis-mode";

impl Mode {
    /// `plan` is plan mode; anything else (absent, `default`, unknown) acts.
    pub fn parse(s: Option<&str>) -> Mode {
        match s {
            Some(m) if m.eq_ignore_ascii_case("plan") => Mode::Plan,
            _ => Mode::Act,
        }
    }

    /// Plan mode when either says so: a second channel can narrow, never widen.
    pub fn or(self, other: Mode) -> Mode {
        match (self, other) {
            (Mode::Act, Mode::Act) => Mode::Act,
            _ => Mode::Plan,
        }
    }
}

/// Who a budget (rate limits, the checker's fair share) counts a caller as: an agent as itself,
/// an anonymous caller by the address it calls from. An `Authorization` header nobody verified
/// (`peer:IP/authorization:…`, see `proxy/pre.rs`) is the caller's to change at will, and each
/// new spelling would otherwise be a fresh budget.
pub fn budget_key(caller: &str) -> &str {
    const AUTHORIZATION: &str = "/authorization:";
    if !caller.starts_with("peer:") {
        return caller;
    }
    // The first `/authorization:`, found from the `/`s (a substring search's setup cost a call
    // more than the rest of this key).
    let at =
        caller.bytes().enumerate().position(|(i, b)| b == b'/' && caller[i..].starts_with(AUTHORIZATION));
    at.map_or(caller, |i| &caller[..i])
}

/// The portcullis keys of a `tools/call`'s `_meta`, each read on its own: one that is not a
/// string is absent, and never takes the other with it (a task sent as an object must not drop
/// the plan mode beside it).
#[derive(serde::Deserialize)]
struct Meta {
    #[serde(rename = "portcullis/task", default, deserialize_with = "text")]
    task: Option<String>,
    #[serde(rename = "portcullis/mode", default, deserialize_with = "text")]
    mode: Option<String>,
}

/// A string, or `None` for any other JSON value.
fn text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Text {
        String(String),
        Other(serde::de::IgnoredAny),
    }
    Ok(match serde::Deserialize::deserialize(d)? {
        Text::String(s) => Some(s),
        Text::Other(_) => None,
    })
}

/// The `_meta` key a client puts the user's task under (MCP's `prefix/name` form).
pub const TASK_META_KEY: &str = "portcullis/task";
/// The header a plain HTTP tool call carries the user's task in (never forwarded: it is one of
/// the proxy's own headers `upstream.rs` strips from every upstream request).
pub const TASK_HEADER: &str = "portcullis-task";

/// The pieces one after another, in one allocation of the right size (`format!` through
/// `Display` cost a call a tenth of what making it does).
pub(crate) fn joined(pieces: &[&str]) -> String {
    let mut s = String::with_capacity(pieces.iter().map(|p| p.len()).sum());
    pieces.iter().for_each(|p| s.push_str(p));
    s
}

impl ToolCall {
    pub fn mcp(upstream: Arc<str>, name: &str, args: Option<&RawValue>, era: Era) -> ToolCall {
        ToolCall {
            qualified: joined(&["mcp__", &*upstream, "__", name]),
            upstream,
            name: name.to_owned(),
            args: args.map(|a| a.to_owned()),
            session: None,
            caller: None,
            agent: None,
            transport: Transport::Mcp(era),
            method: Method::ToolsCall,
            task: None,
            user_task: None,
            mode: Mode::Act,
            spawn: Spawn::Main,
            decision: crate::decision::DecisionId::next(),
        }
    }

    /// The request `method` on `upstream`, as the pseudo-tool `mcp__{upstream}__{method}`, with
    /// the request's params as its arguments.
    pub fn route(upstream: Arc<str>, method: Method, params: Option<&RawValue>, era: Era) -> ToolCall {
        ToolCall { method, ..ToolCall::mcp(upstream, method.as_str(), params, era) }
    }

    /// The answer to the request `method` on `upstream`, which no route names
    /// ([`Method::Unrouted`]): the pseudo-tool `mcp__{upstream}__{method}`.
    pub fn unrouted(upstream: Arc<str>, method: &str, era: Era) -> ToolCall {
        ToolCall { method: Method::Unrouted, ..ToolCall::mcp(upstream, method, None, era) }
    }

    pub fn http(upstream: Arc<str>, path: &str, args: Option<Box<RawValue>>) -> ToolCall {
        let path = path.trim_matches('/');
        ToolCall {
            qualified: joined(&["http__", &*upstream, "__", path]),
            upstream,
            name: path.to_owned(),
            args,
            session: None,
            caller: None,
            agent: None,
            transport: Transport::Http,
            method: Method::ToolsCall,
            task: None,
            user_task: None,
            mode: Mode::Act,
            spawn: Spawn::Main,
            decision: crate::decision::DecisionId::next(),
        }
    }

    pub fn with_session(mut self, session: Option<String>) -> ToolCall {
        self.session = session;
        self
    }

    /// Records who is calling (`principal`: the `Authorization` value or `peer:IP`), digested.
    pub fn with_caller(mut self, principal: Option<&str>) -> ToolCall {
        self.caller = principal.map(|p| digest::hex_key("caller:", &principal_digest(budget_key(p)), 12));
        self
    }

    /// The call as made by `agent`: the checker's fair share and the repeated-denial streak are
    /// kept per agent (its name is who it is; no digest needed).
    pub fn with_agent(mut self, agent: Option<Arc<crate::identity::Agent>>) -> ToolCall {
        if let Some(a) = &agent {
            self.caller = Some(joined(&["agent:", &*a.id]).into());
        }
        self.agent = agent;
        self
    }

    /// The call with the user's task the client reported (clipped; blank is none).
    pub fn with_task(mut self, task: Option<&str>) -> ToolCall {
        self.task =
            task.map(crate::checker::prompt::clip_task).filter(|t| !t.trim().is_empty()).map(Arc::from);
        self
    }

    /// The call made in `mode`.
    pub fn with_mode(mut self, mode: Mode) -> ToolCall {
        self.mode = mode;
        self
    }

    /// The call made by `spawn`.
    pub fn with_spawn(mut self, spawn: Spawn) -> ToolCall {
        self.spawn = spawn;
        self
    }

    /// The call with the user's own task, as a trusted channel recorded it for its session.
    pub fn with_user_task(mut self, task: Option<Arc<crate::intent::UserTask>>) -> ToolCall {
        self.user_task = task;
        self
    }

    /// The arguments' exact canonical spelling (what a waiver is keyed by: [`exact`]), `None`
    /// when the call carries none or they are not JSON.
    pub fn exact_args(&self) -> Option<String> {
        self.args.as_deref().and_then(exact::canonical)
    }

    /// The words of the user's own task, when a trusted channel recorded one.
    pub fn user_words(&self) -> Option<&str> {
        self.user_task.as_ref().map(|t| &*t.text)
    }

    /// The user's task from a `tools/call`'s `_meta`, if it carries one as a string.
    pub fn task_in_meta(meta: Option<&RawValue>) -> Option<String> {
        Self::meta(meta).and_then(|m| m.task)
    }

    /// The user's task and the mode a `tools/call`'s `_meta` names, read in one parse.
    pub fn task_and_mode_in_meta(meta: Option<&RawValue>) -> (Option<String>, Mode) {
        match Self::meta(meta) {
            Some(m) => (m.task, Mode::parse(m.mode.as_deref())),
            None => (None, Mode::Act),
        }
    }

    fn meta(meta: Option<&RawValue>) -> Option<Meta> {
        meta.and_then(|m| serde_json::from_str::<Meta>(m.get()).ok())
    }

    /// The key checker capacity is shared by: the caller (an anonymous one by its address,
    /// see [`budget_key`]), else the session.
    pub fn share_key(&self) -> Option<&str> {
        self.caller.as_deref().or(self.session.as_deref())
    }
}

#[cfg(test)]
mod tests;
