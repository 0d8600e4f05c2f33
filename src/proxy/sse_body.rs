//! The post gate over an SSE response: an explicit state machine that relays every event as
//! soon as it is whole, holds only the event carrying a watched result, and inspects it before
//! it is released. Events of other kinds — progress notifications, log messages, server
//! requests — flow on while a result is still outstanding.
//!
//! ```text
//!  Relaying ──(watched response event)──▶ inspect ──▶ release raw │ release rewritten
//!     │  │                                     └─(a guardrail rule covers it)──▶ Checking
//!     │  │        Checking: the upstream is not read (back-pressure), events stay in order;
//!     │  │        the verdict releases, rewrites or replaces the event, then Relaying resumes
//!     │  └─(all watched answered, framer empty)──▶ Passthrough (chunks untouched)
//!     └─(upstream error │ event too large)──▶ error event per unanswered call ──▶ Done
//! ```

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};

use super::{Body, BoxError};
use crate::call::ToolCall;
use crate::gate::post::{
    adopt, adopt_strays, inspect_from_upstream, waits, Envelope, Inspection, Own, Release, SessionCalls,
    Watched,
};
use crate::mcp::era::Era;
use crate::mcp::jsonrpc::{IdKey, Kind};
use crate::mcp::sse::{self, Framer};
use crate::runtime::Shared;
use crate::telemetry::otel;
use futures_util::FutureExt;
use tracing::Instrument;

/// Which responses the gate inspects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// Only the watched ids (a POST's own stream).
    Watched,
    /// Every response (a GET stream that may replay earlier results).
    AllResponses,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Relaying,
    Passthrough,
    Done,
}

/// Sends a JSON-RPC message (the answer to a refused server request) to the upstream, in the
/// background, on the session of the stream it came from.
pub type Replier = Arc<dyn Fn(Vec<u8>) + Send + Sync>;

/// Whose stream this is: the upstream, the session, the session's watched calls (an answer to
/// any of them may turn up on this stream) and how to answer the upstream.
#[derive(Clone, Default)]
pub struct Exchange {
    pub upstream: Arc<str>,
    /// The session's key (scoped by the agent: [`crate::session::key`]).
    pub session: Option<String>,
    /// The authenticated agent, which scopes a session id the answer assigns.
    pub agent: Option<Arc<crate::identity::Agent>>,
    pub calls: Option<Arc<SessionCalls>>,
    pub replier: Option<Replier>,
    /// The trace span of the request that opened the stream: each server request judged on
    /// it is its child.
    pub trace: otel::Exchange,
}

/// A Layer 2 check of one event, owning what it needs; it hands the watch table back.
type Checking = Pin<Box<dyn Future<Output = (Watched, Bytes, Inspection)> + Send>>;

pub struct SseGate {
    inner: Body,
    /// The event being checked; while set, nothing else is read or released.
    checking: Option<Checking>,
    /// The upstream's body has ended (the rest of the buffer is being finished).
    ended: bool,
    framer: Framer,
    watched: Watched,
    scope: Coverage,
    state: State,
    out: VecDeque<Bytes>,
    shared: Arc<Shared>,
    upstream: Arc<str>,
    session: Option<String>,
    /// The session's watched calls: an answer to any of them may turn up on this stream.
    calls: Option<Arc<SessionCalls>>,
    replier: Option<Replier>,
    trace: tracing::Span,
    /// What this POST stream was opened for (a call, a tool list): every response on it may be
    /// taken as its answer.
    own: Option<Own>,
}

/// A trace span for a request the upstream sent (a batch's are not named one by one).
fn server_request_span(stream: &tracing::Span, answer: &Envelope<'_>) -> tracing::Span {
    if stream.is_none() {
        return tracing::Span::none();
    }
    match answer.single() {
        Some(m) if m.kind() == Kind::Request => {
            let id = m.id.map(|id| id.get().trim_matches('"'));
            otel::spans::server_request(stream, m.method().unwrap_or(""), id)
        }
        _ => tracing::Span::none(),
    }
}

fn server_request_decided(span: &tracing::Span, inspection: &Inspection) {
    if !span.is_none() {
        let decision = match inspection.release {
            Release::Unchanged | Release::Rewritten(_) => "allow",
            Release::Withheld | Release::Dropped => "refuse",
        };
        span.record("portcullis.decision", decision);
    }
}

impl SseGate {
    pub fn new(
        inner: Body,
        watched: Watched,
        scope: Coverage,
        shared: Arc<Shared>,
        exchange: Exchange,
    ) -> Self {
        let Exchange { upstream, session, calls, replier, agent: _, trace: otel::Exchange(trace) } = exchange;
        let max = shared.limits.max_response;
        let own = match scope {
            Coverage::Watched => Own::of(&watched),
            Coverage::AllResponses => None,
        };
        SseGate {
            inner,
            checking: None,
            ended: false,
            framer: Framer::new(max),
            watched,
            scope,
            state: State::Relaying,
            out: VecDeque::new(),
            shared,
            upstream,
            session,
            calls,
            replier,
            trace,
            own,
        }
    }

    fn on_event(&mut self, raw: Bytes, data: Option<String>) {
        let Some(data) = data else {
            self.out.push_back(raw);
            return;
        };
        // Parsed once for adopting, deciding and inspecting (a check parses its own copy again,
        // which costs nothing beside the model's time).
        let answer = Envelope::parse(&data);
        if let Some(calls) = &self.calls {
            adopt(&answer, &mut self.watched, calls, self.own.as_ref(), &self.shared.guard.load());
        }
        if let Some(own) = &self.own {
            adopt_strays(&answer, &mut self.watched, own);
        }
        if self.scope == Coverage::AllResponses {
            self.watch_any_response(&answer);
        }
        let guard = self.shared.guard.load_full();
        let span = server_request_span(&self.trace, &answer);
        if waits(&answer, &self.watched, &guard) {
            drop(answer);
            let mut watched = std::mem::take(&mut self.watched);
            let upstream = self.upstream.clone();
            self.checking = Some(Box::pin(async move {
                let answer = Envelope::parse(&data);
                let inspection = inspect_from_upstream(&answer, &mut watched, &guard, &upstream)
                    .instrument(span.clone())
                    .await;
                server_request_decided(&span, &inspection);
                (watched, raw, inspection)
            }));
            return;
        }
        // Nothing in it waits: it completes on this poll.
        let inspection = span
            .in_scope(|| {
                inspect_from_upstream(&answer, &mut self.watched, &guard, &self.upstream).now_or_never()
            })
            .unwrap_or(Inspection { release: Release::Withheld, ..Default::default() });
        server_request_decided(&span, &inspection);
        drop(answer);
        self.release(raw, inspection);
    }

    fn release(&mut self, raw: Bytes, inspection: Inspection) {
        for seen in inspection.seen {
            self.shared.saw(seen, self.session.as_deref());
        }
        for reply in inspection.replies {
            if let Some(send) = &self.replier {
                send(reply);
            }
        }
        match inspection.release {
            Release::Unchanged => self.out.push_back(raw),
            Release::Rewritten(new) => self.out.push_back(sse::replace_data(&raw, &new)),
            // Dropped; the calls it may have answered are answered with an error now (as a JSON
            // body's would be), and the stream goes on.
            Release::Withheld => {
                tracing::warn!(upstream = %self.upstream, "withheld a malformed event while a result was pending");
                let why = crate::says::Said::MalformedAnswer { upstream: &self.upstream }.to_string();
                for body in crate::gate::post::withheld_answers(&mut self.watched, &why) {
                    self.out.push_back(sse::message_event(&String::from_utf8_lossy(&body)));
                }
            }
            Release::Dropped => {
                crate::gate::post::server::count_dropped(&self.upstream, self.shared.counter())
            }
        }
    }

    fn watch_any_response(&mut self, answer: &Envelope<'_>) {
        for id in answer.response_ids() {
            if self.watched.peek(id).is_some() {
                continue;
            }
            let call = ToolCall::mcp(self.upstream.clone(), "(resumed stream)", None, Era::Legacy);
            self.watched.insert_call(IdKey::new(id), call);
        }
    }

    /// The stream cannot go on: answer every outstanding call with an error event, then end.
    /// (Each call is counted as failed as its watch is dropped.)
    fn fail_outstanding(&mut self, why: &str) {
        for body in crate::gate::post::withheld_answers(&mut self.watched, why) {
            self.out.push_back(sse::message_event(&String::from_utf8_lossy(&body)));
        }
        self.state = State::Done;
    }

    fn drain_framer(&mut self) {
        while self.checking.is_none() {
            match self.framer.next_event() {
                Ok(Some(ev)) => self.on_event(ev.raw, ev.data),
                Ok(None) => break,
                Err(e) => {
                    // An event too large to inspect is never released raw.
                    self.framer = Framer::new(self.shared.limits.max_response);
                    self.fail_outstanding(
                        &crate::says::Said::AnswerWithheld { why: &e.to_string() }.to_string(),
                    );
                    return;
                }
            }
        }
        if self.checking.is_none()
            && self.watched.is_empty()
            && self.scope == Coverage::Watched
            && self.calls.is_none()
            // Server messages after the answer are read by the client too.
            && !self.shared.guard.load().inspects_results()
            && self.framer.is_empty()
            && self.state == State::Relaying
        {
            self.state = State::Passthrough;
        }
    }

    /// The upstream's body ended. Resumable: a check started here is awaited and `finish` is
    /// called again.
    fn finish(&mut self) {
        if !self.ended {
            self.ended = true;
            self.framer.end();
        }
        self.drain_framer();
        if self.state == State::Done || self.checking.is_some() {
            return;
        }
        if let Some(rest) = self.framer.finish() {
            // A last event without its blank line: inspected like any other, never slipped past.
            let data = sse::lines(&rest).any(|l| l.starts_with(b"data")).then(|| {
                let mut whole = rest.to_vec();
                whole.extend_from_slice(b"\n\n");
                whole
            });
            match data {
                Some(whole) => {
                    let mut f = Framer::new(usize::MAX);
                    f.push(&whole);
                    if let Ok(Some(ev)) = f.next_event() {
                        self.on_event(ev.raw, ev.data);
                    }
                }
                None => self.out.push_back(rest),
            }
            if self.checking.is_some() {
                return;
            }
        }
        // The server closed the stream without answering these (the client may resume via
        // GET): dropping their watches counts them as failed.
        self.watched.drain().for_each(drop);
        self.state = State::Done;
    }
}

impl HttpBody for SseGate {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        loop {
            if let Some(b) = this.out.pop_front() {
                return Poll::Ready(Some(Ok(Frame::data(b))));
            }
            if this.state == State::Done {
                return Poll::Ready(None);
            }
            if let Some(check) = this.checking.as_mut() {
                let (watched, raw, inspection) = ready!(check.as_mut().poll(cx));
                this.checking = None;
                this.watched = watched;
                this.release(raw, inspection);
                match this.ended {
                    true => this.finish(),
                    false => this.drain_framer(),
                }
                continue;
            }
            let frame = ready!(Pin::new(&mut this.inner).poll_frame(cx));
            match (frame, this.state) {
                (Some(Ok(frame)), State::Passthrough) => return Poll::Ready(Some(Ok(frame))),
                (Some(Ok(frame)), _) => match frame.into_data() {
                    Ok(data) => {
                        this.framer.push(&data);
                        this.drain_framer();
                    }
                    Err(other) => return Poll::Ready(Some(Ok(other))),
                },
                (Some(Err(e)), _) => {
                    tracing::warn!(upstream = %this.upstream, error = %e, "upstream stream failed");
                    this.fail_outstanding(&format!(
                        "upstream {} broke the stream before answering: {e}",
                        this.upstream
                    ));
                }
                (None, _) => this.finish(),
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.state == State::Done && self.out.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

#[cfg(test)]
mod tests;
