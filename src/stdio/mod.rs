//! `portcullis wrap`: the stdio transport. The agent launches portcullis in place of a stdio MCP
//! server; portcullis spawns the real one and relays newline-delimited JSON-RPC both ways through
//! the same gate decisions as the HTTP proxy. Responses may come back in any order: watched ids
//! are correlated in a table, not by position. The server's stderr is the agent's stderr.

mod channel_note;
mod lines;
mod sealed;
mod spawn;

pub use sealed::{seal_process, Sealed};
pub use spawn::server_command;

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::process::Child;
use tokio::sync::mpsc;

use crate::approval::Via;
use crate::config::Config;
use crate::gate::post::{inspect_from_upstream, waits, Envelope, Release, Seen, Watched};
use crate::gate::pre::{decide_to_forward, Context, Held, Plan};
use crate::gate::Guard;
use crate::mcp::era::{self, Version};
use crate::mcp::jsonrpc::{self, Payload};
use crate::telemetry::otel;
use futures_util::FutureExt;
use lines::{LineReader, ReadLine};
use tracing::Instrument;

/// Why the relay stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum WrapError {
    #[error("cannot start {cmd:?}")]
    Spawn {
        cmd: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Start(#[from] crate::runtime::StartError),
    #[error(transparent)]
    Agent(#[from] crate::identity::UnknownAgent),
    #[error("i/o with the server process failed")]
    Io(#[from] std::io::Error),
}

/// What both directions of one relay share.
struct Relay {
    guard: Guard,
    /// Where call outcomes are counted ([`crate::gate::tally`]).
    counter: crate::gate::tally::SharedCounter,
    upstream: Arc<str>,
    /// The configured agent the relay decides as (`wrap --agent`), if any.
    agent: Option<Arc<crate::identity::Agent>>,
    /// Client requests awaiting their responses. Locked only around pure, synchronous work.
    pending: Mutex<Watched>,
    approvals: crate::approval::Approvals,
    /// What `initialize` settled: the version, and whether the client can elicit.
    client: Mutex<(Option<Version>, bool)>,
    max_line: usize,
}

impl Relay {
    /// Adds a forwarded message's watches to the table the server's answers are matched in.
    fn watch(&self, watched: Watched) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        for (id, w) in watched.into_entries() {
            pending.insert(id, w);
        }
    }
}

/// Runs `cmd` as the guarded server, relaying `agent_in`/`agent_out`, until either side ends.
/// Returns the server's exit code.
pub async fn wrap<R, W>(
    config: &Config,
    upstream: &str,
    agent: Option<&str>,
    cmd: &[String],
    agent_in: R,
    agent_out: W,
) -> Result<i32, WrapError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let agent = match agent {
        Some(name) => Some(Arc::new(crate::identity::Agent::named(&config.policy.identity, name)?)),
        None => None,
    };
    let crate::runtime::RelayParts { metrics, guard, approvals } = crate::runtime::Runtime::relay(config)?;
    let (program, args) = cmd.split_first().ok_or_else(|| WrapError::Spawn {
        cmd: String::new(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "no command given"),
    })?;
    spawn::warn_if_unconfigured(config, upstream);
    // Never the guard's own credentials (the checker's key, the admin and agent tokens, …).
    let mut child: Child = server_command(config, upstream, program, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| WrapError::Spawn { cmd: cmd.join(" "), source })?;
    let child_in = child.stdin.take().expect("piped");
    let child_out = child.stdout.take().expect("piped");

    let relay = Arc::new(Relay {
        guard,
        counter: metrics.clone(),
        upstream: upstream.into(),
        agent,
        pending: Mutex::new(Watched::counting(Some(metrics))),
        approvals,
        client: Mutex::new((None, false)),
        max_line: config.limits.max_body.max(config.limits.max_response),
    });

    // One writer owns the agent's stdout, so lines from both directions never interleave.
    // Likewise one writer owns the server's stdin: a call a human approved later is written by
    // the task that waited for the answer, between the relay's own lines.
    let (to_agent, from_relay) = mpsc::channel::<Bytes>(256);
    let writer = tokio::spawn(write_lines(from_relay, agent_out));
    let (to_server, for_server) = mpsc::channel::<Bytes>(256);
    let server_writer = tokio::spawn(write_lines(for_server, child_in));
    // Weak: the server's stdin closes when the agent's side is done, whatever the server sent.
    let answers_to_server = to_server.downgrade();
    let inbound = tokio::spawn(agent_to_server(relay.clone(), agent_in, to_server, to_agent.clone()));
    let outbound = tokio::spawn(server_to_agent(relay, child_out, to_agent, answers_to_server));

    // The server's stdout closing means it is done; the agent closing stdin means we are done:
    // close the server's stdin and give it the grace period to exit.
    tokio::select! {
        _ = outbound => {}
        _ = inbound => {
            if tokio::time::timeout(config.limits.shutdown_grace, child.wait()).await.is_err() {
                tracing::warn!("server did not exit after stdin closed; killing it");
                let _ = child.kill().await;
            }
        }
    }
    let status = match tokio::time::timeout(config.limits.shutdown_grace, child.wait()).await {
        Ok(s) => s?,
        Err(_) => {
            let _ = child.kill().await;
            child.wait().await?
        }
    };
    let _ = writer.await;
    server_writer.abort();
    // The last spans: exported from a blocking thread while the runtime still runs.
    if otel::on() {
        let _ = tokio::task::spawn_blocking(otel::flush).await;
    }
    Ok(status.code().unwrap_or(1))
}

async fn write_lines<W: AsyncWrite + Unpin>(mut rx: mpsc::Receiver<Bytes>, mut out: W) {
    while let Some(line) = rx.recv().await {
        if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
            return;
        }
    }
}

fn with_newline(mut v: Vec<u8>) -> Bytes {
    v.push(b'\n');
    Bytes::from(v)
}

async fn agent_to_server<R>(
    relay: Arc<Relay>,
    agent_in: R,
    to_server: mpsc::Sender<Bytes>,
    to_agent: mpsc::Sender<Bytes>,
) where
    R: AsyncRead + Unpin,
{
    let mut reader = LineReader::new(agent_in, relay.max_line);
    loop {
        let line = match reader.next_line().await {
            Ok(ReadLine::Line(l)) => l,
            Ok(ReadLine::TooLong(n)) => {
                let msg =
                    format!("message of {n}+ bytes exceeds the {}-byte limit; not sent", relay.max_line);
                let body = jsonrpc::error_response(None, jsonrpc::code::INVALID_REQUEST, &msg);
                let _ = to_agent.send(with_newline(body)).await;
                continue;
            }
            Ok(ReadLine::Eof) | Err(_) => return,
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let payload = match jsonrpc::parse(&line) {
            Ok(p) => p,
            Err(e) => {
                let body = jsonrpc::error_response(None, e.code(), &e.to_string());
                let _ = to_agent.send(with_newline(body)).await;
                continue;
            }
        };
        // A method a lenient server could read as a known one is never sent undecided.
        if let Some(body) = crate::mcp::method::refusal(&payload) {
            let _ = to_agent.send(with_newline(body)).await;
            continue;
        }
        if let Payload::Single(m) = &payload {
            // The client's answer to the proxy's own elicitation: taken here, never forwarded.
            if relay.approvals.elicitations.is_ours(m) {
                let answered = relay.approvals.elicitations.answer(m, Some(SESSION));
                tracing::debug!(?answered, "the client answered an approval elicitation");
                continue;
            }
        }
        let era = match &payload {
            Payload::Single(m) => era::of_message(m),
            Payload::Batch(_) => era::Era::Legacy,
        };
        let (negotiated, elicits) = *relay.client.lock().unwrap_or_else(|p| p.into_inner());
        let cx = Context {
            agent: relay.agent.as_ref(),
            upstream: &relay.upstream,
            era,
            negotiated,
            session: Some(SESSION),
            approvals: &relay.approvals,
            elicits,
            // The process that launched `wrap` is the only principal a stdio relay has.
            principal: None,
            counter: Some(&relay.counter),
            explain: false,
            mode: crate::call::Mode::Act,
        };
        // The message's trace spans (`network.transport` pipe), ended once it is handed on.
        let traced = otel::exchange::stdio(&line, &relay.upstream);
        match decide_to_forward(&line, &payload, &cx, &relay.guard).instrument(traced.span.clone()).await {
            Plan::Refuse(r) => {
                // Each refused call is counted as `r` is dropped.
                for call in &r.calls {
                    tracing::info!(tool = %call.qualified, outcome = call.outcome().as_str(), "refused before the server");
                }
                if to_agent.send(with_newline(r.body)).await.is_err() {
                    return;
                }
            }
            // The client's user decides while the relay goes on: the answer arrives on this very
            // stream, so waiting here would wait forever.
            Plan::Ask(pending) if pending.via == Via::Client => {
                let asking = ask_the_user(relay.clone(), pending, line, to_server.clone(), to_agent.clone());
                tokio::spawn(asking.instrument(traced.span.clone()));
            }
            // Nobody else can be asked in `wrap` (no admin API); were it to happen, the refusal.
            Plan::Ask(pending) => {
                let (body, _counted) = pending.refused(crate::gate::answer::HEADLESS, None);
                if to_agent.send(with_newline(body)).await.is_err() {
                    return;
                }
            }
            Plan::Rewrite(watched, body) => {
                relay.watch(watched);
                let body = relay.guard.unmask_payload(&relay.upstream, era, &body).unwrap_or(body);
                let body = otel::spans::stamp_meta(&traced, &body).unwrap_or(body);
                if to_server.send(with_newline(body)).await.is_err() {
                    return;
                }
            }
            Plan::Forward(watched) => {
                relay.watch(watched);
                // Held secrets go in after every check, as the last step before forwarding.
                let line = relay.guard.unmask_payload(&relay.upstream, era, &line).unwrap_or(line);
                let line = otel::spans::stamp_meta(&traced, &line).unwrap_or(line);
                if to_server.send(with_newline(line)).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// The one session a stdio relay carries.
const SESSION: &str = "stdio";

/// Sends the proxy's `elicitation/create` to the client, waits for its user's answer, then
/// writes the call to the server (watching its result) or answers it with the refusal.
async fn ask_the_user(
    relay: Arc<Relay>,
    mut pending: Box<Held>,
    line: Vec<u8>,
    to_server: mpsc::Sender<Bytes>,
    to_agent: mpsc::Sender<Bytes>,
) {
    let resolution = match relay.approvals.open_elicitation(&pending.ask) {
        Ok((open, reply)) => {
            if to_agent.send(with_newline(open.request(&pending.ask).into_bytes())).await.is_err() {
                return;
            }
            let resolution = relay.approvals.ask_client(&pending.ask, reply).await;
            drop(open);
            resolution
        }
        Err(overloaded) => overloaded,
    };
    let Some((why, outcome)) = crate::gate::answer::refusal(&resolution, Via::Client) else {
        let line = pending.body.take().unwrap_or(line);
        // Held secrets go in after every check, as the last step before forwarding (the era
        // only names the transport of the call the destination is worked out for).
        let line = relay.guard.unmask_payload(&relay.upstream, era::Era::Legacy, &line).unwrap_or(line);
        let line = otel::spans::stamp_meta(&tracing::Span::current(), &line).unwrap_or(line);
        relay.watch(pending.allowed());
        let _ = to_server.send(with_newline(line)).await;
        return;
    };
    let (body, call) = pending.refused(why, Some(outcome));
    tracing::info!(tool = %call.qualified, outcome = outcome.as_str(), "refused before the server");
    let _ = to_agent.send(with_newline(body)).await;
}

async fn server_to_agent<R>(
    relay: Arc<Relay>,
    child_out: R,
    to_agent: mpsc::Sender<Bytes>,
    to_server: mpsc::WeakSender<Bytes>,
) where
    R: AsyncRead + Unpin,
{
    let mut reader = LineReader::new(child_out, relay.max_line);
    loop {
        let line = match reader.next_line().await {
            Ok(ReadLine::Line(l)) => l,
            Ok(ReadLine::TooLong(n)) => {
                // It might be a watched result: too large to inspect means never released.
                tracing::error!(
                    bytes = n,
                    limit = relay.max_line,
                    "dropped an oversized message from the server"
                );
                continue;
            }
            Ok(ReadLine::Eof) | Err(_) => return,
        };
        let text = String::from_utf8_lossy(&line);
        let answer = Envelope::parse(&text);
        let inspection = {
            let mut pending = relay.pending.lock().unwrap_or_else(|p| p.into_inner());
            match waits(&answer, &pending, &relay.guard) {
                // Completes on its first poll: nothing in it waits.
                false => {
                    inspect_from_upstream(&answer, &mut pending, &relay.guard, &relay.upstream).now_or_never()
                }
                true => None,
            }
        };
        let inspection = match inspection {
            Some(i) => i,
            None => {
                // A Layer 2 check: take this message's watches out of the shared table so the
                // other direction is not locked out while the checker thinks, then put back
                // whatever the message did not answer.
                let mut mine = relay.pending.lock().unwrap_or_else(|p| p.into_inner()).extract(&answer);
                let i = inspect_from_upstream(&answer, &mut mine, &relay.guard, &relay.upstream).await;
                relay.pending.lock().unwrap_or_else(|p| p.into_inner()).merge(mine);
                i
            }
        };
        for seen in inspection.seen {
            match seen {
                // Counted as it is dropped here.
                Seen::Call { .. } => {}
                Seen::Initialized { version, elicits } => {
                    channel_note::log(&relay.approvals, elicits);
                    *relay.client.lock().unwrap_or_else(|p| p.into_inner()) = (Some(version), elicits)
                }
                Seen::Listed { upstream, result } => relay.approvals.tools.record(&upstream, &result),
                Seen::TaskCreated { upstream, task, tool } => {
                    relay.approvals.task_ids.created(&upstream, &task, &tool)
                }
            }
        }
        let out = match inspection.release {
            Release::Unchanged => with_newline(line),
            Release::Rewritten(new) => with_newline(new.into_bytes()),
            // The calls it may have answered are answered with an error now, as on every
            // transport: a waiting call is never left hanging.
            Release::Withheld => {
                tracing::warn!("withheld a malformed message from the server while a result was pending");
                let why = crate::says::Said::MalformedAnswer { upstream: &relay.upstream }.to_string();
                let answers = {
                    let mut pending = relay.pending.lock().unwrap_or_else(|p| p.into_inner());
                    crate::gate::post::withheld_answers(&mut pending, &why)
                };
                for body in answers {
                    if to_agent.send(with_newline(body)).await.is_err() {
                        return;
                    }
                }
                continue;
            }
            Release::Dropped => {
                crate::gate::post::server::count_dropped(&relay.upstream, Some(&relay.counter));
                // The refused request is answered so the server does not wait on it.
                if let Some(to_server) = to_server.upgrade() {
                    for reply in inspection.replies {
                        let _ = to_server.send(with_newline(reply)).await;
                    }
                }
                continue;
            }
        };
        if to_agent.send(out).await.is_err() {
            return;
        }
    }
}
