//! Content of any length judged in windows that fit the model's context: cut to the window the
//! server has said it holds (or `max_content_bytes`), each window asked; a window the server
//! answers does not fit is cut again, once, to the window that answer names; the verdicts are
//! combined into one.
//!
//! ```text
//!  context known? ── Learn, content > 4 KiB: ask the server once (/props, /models)
//!        ▼
//!  cap = min(max_bytes, what fits the context)
//!  windows of cap (at most max_windows) ──▶ ask each
//!        │ a window overflows (its answer names n_ctx, remembered by the client)
//!        ▼
//!  cut again, once: to fit n_ctx at 2 bytes a token if it was longer; else at 1 byte a token
//!  (dense content); else in halves — at most max_windows parts; unnamed: in quarters
//! ```
//!
//! Work is bounded: at most `max_windows × (1 + max_windows)` model calls for one content, and
//! the server's description is asked once per client.

use std::future::Future;

use futures_util::future::join_all;

use crate::openai::{OpenAi, MAX_TOKENS};
use crate::verdict::Verdict;
use crate::window::{self, Density, Plan};
use crate::Failure;

/// Content up to this many bytes fits the contexts checker models are served with (4,096 tokens
/// and up) with room to spare, so checking it never waits to ask the server; on a smaller
/// context its refusal says so.
pub const LEARN_ABOVE: usize = 4 << 10;

/// How much of a content the model is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    /// The most bytes one model call carries (`max_content_bytes`, already cut to a configured
    /// `context_tokens`).
    pub max_bytes: usize,
    /// The most windows one content is cut into (`model_windows`); a window cut again is cut
    /// into at most as many.
    pub max_windows: usize,
    /// The prompt's bytes besides the window ([`crate::prompt::Prompt::overhead`]).
    pub overhead: usize,
    /// Whether to ask the server its context window.
    pub context: Context,
}

/// Where the context window comes from before any answer has named it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// `context_tokens` is configured and `max_bytes` already fits it; the server is not asked
    /// (an answer saying a prompt did not fit still corrects it).
    Configured,
    /// Nothing configured: ask the server's description, once per client, the first time a
    /// content longer than [`LEARN_ABOVE`] is checked.
    Learn,
}

/// The model's verdict on `text`, each window asked with `ask` (the caller's cache, fair-share
/// slot, breaker and timeout around [`OpenAi::complete`]).
pub async fn judge<'t, F, Fut>(
    client: &OpenAi,
    text: &'t str,
    shown: Shown,
    ask: F,
) -> Result<Verdict, Failure>
where
    F: Fn(&'t str) -> Fut,
    Fut: Future<Output = Result<Verdict, Failure>>,
{
    let known = match shown.context {
        Context::Learn if text.len() > LEARN_ABOVE => client.context_tokens().await,
        _ => client.known_context_tokens(),
    };
    let fits = known.and_then(|n| window::fit(n, MAX_TOKENS, shown.overhead, Density::Typical));
    let cap = fits.map_or(shown.max_bytes, |fits| fits.min(shown.max_bytes));
    let plan = window::plan(text, cap, shown.max_windows);
    let verdicts = join_all(plan.windows.iter().map(|w| judge_window(client, w, shown, &ask))).await;
    combine(verdicts, plan.unseen, text.len())
}

/// One window; one the server says does not fit is cut again, once ([`recut`]).
async fn judge_window<'t, F, Fut>(
    client: &OpenAi,
    window: &'t str,
    shown: Shown,
    ask: &F,
) -> Result<Verdict, Failure>
where
    F: Fn(&'t str) -> Fut,
    Fut: Future<Output = Result<Verdict, Failure>>,
{
    let why = match ask(window).await {
        Err(Failure::ContextLength(why)) if window.len() >= 64 => why,
        other => return other,
    };
    let parts = recut(window, client.known_context_tokens(), shown);
    let verdicts = join_all(parts.windows.iter().map(|w| ask(w))).await;
    match combine(verdicts, parts.unseen, window.len()) {
        Err(Failure::ContextLength(_)) => Err(Failure::ContextLength(why)),
        other => other,
    }
}

/// The parts of a window that did not fit a context of `n_ctx` tokens: cut to fit it at
/// [`Density::Typical`] when the window was longer (it was cut before the window was known);
/// else at [`Density::Worst`] (it was cut to the window and its content tokenizes densely);
/// else in halves. In quarters when no window is known or none fits.
pub fn recut(window: &str, n_ctx: Option<u32>, shown: Shown) -> Plan<'_> {
    let fit = |density| n_ctx.and_then(|n| window::fit(n, MAX_TOKENS, shown.overhead, density));
    let cap = match (fit(Density::Typical), fit(Density::Worst)) {
        (Some(typical), _) if window.len() > typical => typical,
        (_, Some(worst)) if window.len() > worst => worst,
        (Some(_), _) => window.len().div_ceil(2),
        (None, _) => return Plan { windows: window::quarters(window), unseen: 0 },
    };
    window::plan(window, cap, shown.max_windows)
}

/// The windows' verdicts as one: any unsafe window makes the content unsafe; else a failure
/// (an unjudged answer first, as `on_malformed` is the stricter policy); else content the model
/// was not shown is [`Failure::TooLarge`] — never a silent pass. A rewrite of one window of
/// several is not a rewrite of the content, so sanitize falls back to block there.
pub fn combine(
    verdicts: Vec<Result<Verdict, Failure>>,
    unseen: usize,
    len: usize,
) -> Result<Verdict, Failure> {
    let whole = verdicts.len() == 1 && unseen == 0;
    let mut failure: Option<Failure> = None;
    for v in verdicts {
        match v {
            Ok(Verdict::Unsafe { reason, sanitized }) => {
                return Ok(Verdict::Unsafe { reason, sanitized: sanitized.filter(|_| whole) })
            }
            Ok(Verdict::Safe) => {}
            Err(f) => {
                if failure.as_ref().is_none_or(|held| !held.unjudged_answer() && f.unjudged_answer()) {
                    failure = Some(f);
                }
            }
        }
    }
    match (failure, unseen) {
        (Some(f), _) => Err(f),
        (None, 0) => Ok(Verdict::Safe),
        (None, _) => Err(Failure::TooLarge(len)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHOWN: Shown =
        Shown { max_bytes: 256 << 10, max_windows: 4, overhead: 3000, context: Context::Learn };

    fn unsafe_(reason: &str) -> Result<Verdict, Failure> {
        Ok(Verdict::Unsafe { reason: reason.into(), sanitized: Some("x".into()) })
    }

    #[test]
    fn a_window_is_cut_again_to_the_context_then_denser_then_in_halves() {
        // 4,096 tokens, 512 for the reply, 3,000 bytes of prompt (1,128 tokens): 2,456 left.
        let (typical, worst) = (2 * 2456, 2456);
        assert_eq!(window::fit(4096, MAX_TOKENS, 3000, Density::Typical), Some(typical));
        let text = "x".repeat(10_240);
        let table: [(usize, Option<u32>, usize, usize); 5] = [
            // (window length, n_ctx named, parts, the longest part); parts overlap by an eighth.
            (10_240, Some(4096), 3, typical),
            (typical, Some(4096), 3, worst),
            (worst, Some(4096), 3, worst.div_ceil(2)),
            (10_240, None, 5, 10_240usize.div_ceil(4)),
            (10_240, Some(1024), 5, 10_240usize.div_ceil(4)),
        ];
        for (len, n_ctx, parts, longest) in table {
            let p = recut(&text[..len], n_ctx, SHOWN);
            assert_eq!(p.windows.len(), parts, "{len} {n_ctx:?}");
            assert_eq!(p.windows.iter().map(|w| w.len()).max(), Some(longest), "{len} {n_ctx:?}");
            assert_eq!(p.unseen, 0, "{len} {n_ctx:?}");
        }
        // Never more parts than windows: what they cannot cover is unseen, for the failure mode.
        let p = recut(&text, Some(4096), Shown { max_windows: 2, ..SHOWN });
        assert_eq!(p.windows.len(), 2);
        assert!(p.unseen > 0);
    }

    #[test]
    fn one_unsafe_window_decides_and_unseen_bytes_are_never_a_pass() {
        let too_long = || Err(Failure::ContextLength("400".into()));
        assert_eq!(combine(vec![Ok(Verdict::Safe), Ok(Verdict::Safe)], 0, 9), Ok(Verdict::Safe));
        let verdict = combine(vec![Ok(Verdict::Safe), too_long(), unsafe_("exfil")], 0, 9);
        assert_eq!(
            verdict,
            Ok(Verdict::Unsafe { reason: "exfil".into(), sanitized: None }),
            "no partial rewrite"
        );
        assert_eq!(combine(vec![unsafe_("exfil")], 0, 9), unsafe_("exfil"), "a whole rewrite is kept");
        assert_eq!(combine(vec![Ok(Verdict::Safe)], 5, 9), Err(Failure::TooLarge(9)));
        let malformed = Err(Failure::Malformed("prose".into()));
        assert_eq!(combine(vec![too_long(), malformed.clone(), too_long()], 0, 9), malformed);
    }
}
