//! The typed tool call every transport is normalised into.

use std::sync::Arc;

use serde_json::value::RawValue;

use crate::mcp::era::Era;

/// How a call reached the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// MCP over Streamable HTTP or stdio, in the given era.
    Mcp(Era),
    /// A plain HTTP tool endpoint (`/http/{upstream}/{path…}`).
    Http,
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
    pub transport: Transport,
}

impl ToolCall {
    pub fn mcp(upstream: Arc<str>, name: &str, args: Option<&RawValue>, era: Era) -> ToolCall {
        ToolCall {
            qualified: format!("mcp__{upstream}__{name}"),
            upstream,
            name: name.to_owned(),
            args: args.map(|a| a.to_owned()),
            session: None,
            transport: Transport::Mcp(era),
        }
    }

    pub fn http(upstream: Arc<str>, path: &str, args: Option<Box<RawValue>>) -> ToolCall {
        let path = path.trim_matches('/');
        ToolCall {
            qualified: format!("http__{upstream}__{path}"),
            upstream,
            name: path.to_owned(),
            args,
            session: None,
            transport: Transport::Http,
        }
    }

    pub fn with_session(mut self, session: Option<String>) -> ToolCall {
        self.session = session;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names_follow_the_agent_convention() {
        let c = ToolCall::mcp("fs".into(), "read_file", None, Era::Legacy);
        assert_eq!(c.qualified, "mcp__fs__read_file");
        let h = ToolCall::http("weather".into(), "/v1/forecast/", None);
        assert_eq!(h.qualified, "http__weather__v1/forecast");
    }
}
