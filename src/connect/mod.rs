//! `portcullis connect <client>`: the MCP configuration that points an agent's client at the
//! proxy, printed, or merged into the client's own file.
//!
//! One [`Server`] per configured upstream (`portcullis-{upstream}`, over HTTP at
//! `http://{listen}/mcp/{upstream}`) and, when a stdio server's command is given, one launched
//! through `portcullis wrap`. Each client's file format lives in its own module ([`json`] for the
//! five JSON clients, [`codex`] for Codex's TOML); [`mod@file`] merges and writes.
//!
//! Tokens: with agents configured, the client must send the agent's bearer token. It is written
//! as a reference to the environment variable the agent's `token_env` names, in the client's own
//! spelling (`${VAR}`, `${env:VAR}`, `bearer_token_env_var`, a VS Code input), never the secret,
//! unless [`TokenMode::Inline`] asks for it (for clients that cannot read the environment).

pub mod cli;
pub mod codex;
pub mod file;
pub mod json;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use crate::config::Config;

/// The clients `connect` knows the configuration format of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    ClaudeCode,
    ClaudeDesktop,
    Cursor,
    VsCode,
    Codex,
    Windsurf,
}

impl Client {
    pub const ALL: [Client; 6] = [
        Client::ClaudeCode,
        Client::ClaudeDesktop,
        Client::Cursor,
        Client::VsCode,
        Client::Codex,
        Client::Windsurf,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::ClaudeDesktop => "claude-desktop",
            Client::Cursor => "cursor",
            Client::VsCode => "vscode",
            Client::Codex => "codex",
            Client::Windsurf => "windsurf",
        }
    }

    pub fn parse(s: &str) -> Option<Client> {
        Client::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// How the agent's token appears in the written configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenMode {
    /// No agents are configured: the proxy takes anonymous callers.
    Anonymous,
    /// A reference to this environment variable, resolved by the client when it starts.
    Env(String),
    /// The secret itself (asked for with `--inline-token`), read from this variable now.
    Inline { var: String, value: String },
}

/// How a client reaches one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// Streamable HTTP to the proxy.
    Http { url: String, token: TokenMode },
    /// A local process: `portcullis wrap … -- server command`.
    Stdio { command: String, args: Vec<String> },
}

/// One entry of the client's server list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// `portcullis-{upstream}`.
    pub name: String,
    pub transport: Transport,
}

/// A stdio server to connect through `wrap`.
#[derive(Debug, Clone)]
pub struct Wrapped {
    /// The `wrap --name` (an `upstreams` entry without `url:`, or any name).
    pub name: String,
    /// The server command and its arguments.
    pub cmd: Vec<String>,
    /// The portcullis executable and the config file `wrap` is started with.
    pub exe: String,
    pub config: Option<String>,
}

/// What to connect.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only these upstreams (all HTTP upstreams when empty).
    pub upstreams: Vec<String>,
    /// The configured agent whose token the client sends.
    pub agent: Option<String>,
    /// Write the secret itself instead of a reference to its variable.
    pub inline_token: bool,
    /// Replaces `http://{listen}` (a proxy behind a name, TLS).
    pub base_url: Option<String>,
    pub wrapped: Option<Wrapped>,
}

/// Why no configuration could be produced.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("no upstream named {0:?} is configured (HTTP upstreams: {1})")]
    NoUpstream(String, String),
    #[error("agents are configured, so the client must send one's token: pass --agent NAME (one of {0})")]
    AgentNeeded(String),
    #[error("no agent named {0:?} is configured")]
    NoAgent(String),
    #[error("agent {0:?} has no token_env (it is named by a JWT claim): its client gets its token from the issuer, not from portcullis connect")]
    NoTokenEnv(String),
    #[error("--inline-token: {0} is not set in this environment")]
    Unset(String),
    #[error("nothing to connect: no HTTP upstream is configured and no stdio server was given (--name NAME -- CMD)")]
    Nothing,
}

/// The servers a client gets for `config`.
pub fn plan(config: &Config, opts: &Options) -> Result<Vec<Server>, PlanError> {
    let names: Vec<&String> = config.upstreams.keys().collect();
    let list = || names.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
    for u in &opts.upstreams {
        if !config.upstreams.contains_key(u) {
            return Err(PlanError::NoUpstream(u.clone(), list()));
        }
    }
    let chosen: Vec<&String> =
        names.iter().copied().filter(|n| opts.upstreams.is_empty() || opts.upstreams.contains(n)).collect();
    let token = if chosen.is_empty() { TokenMode::Anonymous } else { token_mode(config, opts)? };
    let base = opts.base_url.clone().unwrap_or_else(|| base_url(config.listen));
    let base = base.trim_end_matches('/');
    let mut out: Vec<Server> = chosen
        .into_iter()
        .map(|n| Server {
            name: format!("portcullis-{n}"),
            transport: Transport::Http { url: format!("{base}/mcp/{n}"), token: token.clone() },
        })
        .collect();
    if let Some(w) = &opts.wrapped {
        let mut args: Vec<String> = vec!["wrap".into()];
        if let Some(c) = &w.config {
            args.extend(["--config".into(), c.clone()]);
        }
        args.extend(["--name".into(), w.name.clone()]);
        if let Some(a) = &opts.agent {
            args.extend(["--agent".into(), a.clone()]);
        }
        args.push("--".into());
        args.extend(w.cmd.iter().cloned());
        out.push(Server {
            name: format!("portcullis-{}", w.name),
            transport: Transport::Stdio { command: w.exe.clone(), args },
        });
    }
    if out.is_empty() {
        return Err(PlanError::Nothing);
    }
    Ok(out)
}

fn token_mode(config: &Config, opts: &Options) -> Result<TokenMode, PlanError> {
    let agents = &config.policy.identity.agents;
    if !config.policy.identity.enabled() && opts.agent.is_none() {
        return Ok(TokenMode::Anonymous);
    }
    let Some(name) = &opts.agent else {
        let names: Vec<&str> = agents.keys().map(|k| &**k).collect();
        return Err(PlanError::AgentNeeded(names.join(", ")));
    };
    let agent = agents.get(name.as_str()).ok_or_else(|| PlanError::NoAgent(name.clone()))?;
    let var = agent.token_env.clone().ok_or_else(|| PlanError::NoTokenEnv(name.clone()))?;
    if !opts.inline_token {
        return Ok(TokenMode::Env(var));
    }
    match std::env::var(&var) {
        Ok(value) if !value.is_empty() => Ok(TokenMode::Inline { var, value }),
        _ => Err(PlanError::Unset(var)),
    }
}

/// `http://{listen}`, with an unspecified listen address (all interfaces) spelled as loopback.
fn base_url(listen: SocketAddr) -> String {
    let ip = match listen.ip() {
        IpAddr::V4(v) if v.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v) if v.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    format!("http://{}", SocketAddr::new(ip, listen.port()))
}

/// The configuration a client gets, as text: the file's content as if merged into an empty file,
/// and, for Claude Code, the equivalent `claude mcp add` commands.
pub fn render(client: Client, servers: &[Server]) -> String {
    match client {
        Client::Codex => codex::merge("", servers).unwrap_or_default(),
        c => {
            let doc = json::merge(c, "", servers).unwrap_or_default();
            if c != Client::ClaudeCode {
                return doc;
            }
            let mut out = String::from("# .mcp.json (project scope):\n");
            out.push_str(&doc);
            out.push_str("\n# or, with the claude CLI:\n");
            for s in servers {
                out.push_str(&json::claude_mcp_add(s));
                out.push('\n');
            }
            out
        }
    }
}

#[cfg(test)]
mod tests;
