//! Claude Code's `UserPromptSubmit` hook: the user's own words, recorded per session at the
//! running proxy (`portcullis hook prompt --proxy URL` → `POST /hook/prompt`, admin token), where
//! the checker reads them as the one task that may show a send to be the user's intent
//! ([`crate::session::tasks`]). The agent cannot write there: it holds no admin token, and the
//! hook runs outside the model.
//!
//! The command never blocks or changes the prompt: it prints nothing (Claude Code would add
//! stdout to the model's context) and exits 0 whatever happens; what went wrong goes to stderr.
//! Without a proxy there is nowhere to keep a task between calls, so it records nothing. This is
//! the proxy's side; the command is in [`super::cli`].

use std::sync::Arc;

use serde::Deserialize;

use crate::runtime::Shared;

/// The most of a prompt envelope read (a prompt may hold pasted text; the task keeps 2 KiB).
pub const MAX_PROMPT_ENVELOPE: u64 = 1024 * 1024;

#[derive(Deserialize)]
struct Raw {
    hook_event_name: String,
    #[serde(default)]
    session_id: Option<String>,
    prompt: String,
}

/// Why a prompt envelope was not recorded.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("the hook input is not a UserPromptSubmit object with a prompt: {0}")]
    Malformed(#[source] serde_json::Error),
    #[error("hook_event_name is {0:?}: `portcullis hook prompt` answers UserPromptSubmit")]
    WrongEvent(String),
    #[error("the hook input names no session_id: the task has no session to belong to")]
    NoSession,
}

/// Records the prompt in `body` for its session (in the `hook:` namespace, scoped by `agent`
/// like the hook's calls); returns the session key.
pub fn record(
    shared: &Arc<Shared>,
    body: &[u8],
    agent: Option<&crate::identity::Agent>,
) -> Result<String, PromptError> {
    let raw: Raw = serde_json::from_slice(body).map_err(PromptError::Malformed)?;
    if raw.hook_event_name != "UserPromptSubmit" {
        return Err(PromptError::WrongEvent(raw.hook_event_name));
    }
    let session = raw.session_id.filter(|s| !s.is_empty()).ok_or(PromptError::NoSession)?;
    let key = crate::session::hook_key(&session, agent);
    shared.approvals.user_tasks.record(&key, &raw.prompt, None);
    Ok(key)
}
