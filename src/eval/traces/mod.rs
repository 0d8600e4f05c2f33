//! `portcullis eval --traces`: replays recorded agent sessions (calls, their results, a label per
//! call) through the real proxy in front of a replay upstream, and scores what it refused:
//! recall on `exfil` calls and false positives on `benign` ones, overall and per mechanism
//! (egress, flow fingerprints, pieces across calls, destination provenance, secret sentinels,
//! the detectors, a model, other rules).
//!
//! Sessions run one after another, each in its own MCP session, so per-session state (flow
//! fingerprints of what was read, sentinels) builds up as it would for an agent. A refusal is
//! attributed by the `rule` of the call's audit line, read from the audit ring in memory.

pub mod data;
pub mod mechanism;
mod replay;
pub mod report;
mod upstream;

use std::path::PathBuf;

use self::data::{Trace, TraceError};
use self::mechanism::Checker;
use crate::config::{Backend, Config};

/// How many audit lines the replay keeps in memory: one call writes a few.
const AUDIT_RING: usize = 64;

/// What `portcullis eval --traces` was asked to do.
#[derive(Debug, Clone)]
pub struct TraceOptions {
    pub traces: PathBuf,
    /// Print one JSON document.
    pub json: bool,
    /// How many missed exfil calls and refused benign calls to list.
    pub errors: usize,
    pub progress: bool,
}

/// Why a trace evaluation cannot run.
#[derive(Debug, thiserror::Error)]
pub enum TracesError {
    #[error(transparent)]
    Data(#[from] TraceError),
    #[error("the config must have exactly one upstream (the traces' tools are its tools); it has {0}")]
    Upstreams(usize),
    #[error("the replay upstream cannot start: {0}")]
    Replay(#[source] std::io::Error),
    #[error("the proxy cannot start")]
    Proxy(#[source] crate::runtime::StartError),
    #[error(transparent)]
    Replaying(#[from] replay::ReplayError),
}

/// Runs the whole of `portcullis eval --traces` and returns the report to print.
pub async fn run(config: &Config, opts: &TraceOptions) -> Result<String, TracesError> {
    let traces = data::load(&opts.traces)?;
    let measured = measure(config, &traces, opts.progress).await?;
    let doc = report::Report::of(&opts.traces.display().to_string(), &traces, &measured);
    Ok(match opts.json {
        true => serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n",
        false => report::text(&doc, &measured, opts.errors),
    })
}

/// Replays `traces` through a proxy started on `config` (its one upstream pointed at the
/// replay server, its listeners on 127.0.0.1 port 0).
pub async fn measure(
    config: &Config,
    traces: &[Trace],
    progress: bool,
) -> Result<Vec<replay::Replayed>, TracesError> {
    if config.upstreams.len() != 1 {
        return Err(TracesError::Upstreams(config.upstreams.len()));
    }
    let server = upstream::Replay::start().await.map_err(TracesError::Replay)?;
    let mut config = config.clone();
    let name = config.upstreams.keys().next().cloned().unwrap_or_default();
    if let Some(u) = config.upstreams.get_mut(&name) {
        u.url = server.url.parse().map_err(|_| TracesError::Upstreams(1))?;
    }
    let local = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    config.listen = local;
    config.admin.listen = local;
    config.audit.recent = AUDIT_RING;
    let how = match config.policy.guardrails.as_mut() {
        None => replay::Attribution { guardrail_labels: Vec::new(), checker: Checker::Local },
        Some(g) => {
            g.probe = None;
            replay::Attribution {
                guardrail_labels: g.rules.0.iter().map(|r| r.label.clone()).collect(),
                checker: match g.backend {
                    Backend::Local => Checker::Local,
                    Backend::OpenAi(_) => Checker::Model,
                },
            }
        }
    };
    // The admin token the replay records each session's prompt with (the trusted channel);
    // the replayed calls never carry it. Nobody answers on the operator API it would open to
    // asks: an ask reaches only a client that elicits (the replay's does not), else is refused.
    let token = admin_token();
    if config.approvals.channel != crate::config::approvals::Channel::None {
        config.approvals.channel = crate::config::approvals::Channel::Elicitation;
    }
    let proxy =
        crate::app::start_with_token(&config, Some(token.clone())).await.map_err(TracesError::Proxy)?;
    let url = format!("http://{}/mcp/{name}", proxy.addr);
    let admin = replay::Admin { url: format!("http://{}", proxy.admin_addr), token };
    let replayed = replay::replay_all(traces, &proxy, &url, &admin, &server, &how, progress).await;
    proxy.shutdown().await;
    Ok(replayed?)
}

/// A fresh admin token: 32 random bytes in hex.
fn admin_token() -> String {
    let mut seed = [0u8; 32];
    let _ = getrandom::fill(&mut seed);
    seed.iter().map(|b| format!("{b:02x}")).collect()
}
