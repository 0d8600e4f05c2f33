//! What the user's own words ask for: the task recorded through a channel the agent does not
//! control (the hook's `UserPromptSubmit`, an operator-trusted front's `POST /sessions/{id}/task`),
//! and the destinations it asks to send to — the one excuse a flow has besides an egress `allow`.
//!
//! A free-text prompt names a destination only where it reads as a request to send there
//! ([`asks`]); a front that knows the recipients lists them (`sends_to`), and its prompt's text
//! then names nothing. Computed once, when the prompt is recorded, never per call.

pub mod asks;
pub mod named;
pub mod quoted;

use std::sync::Arc;

pub use named::Named;

/// What the user asked in one session, newest prompt first, and where it asks to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserTask {
    /// The prompts, newest first (shown to the checker as the user's intent).
    pub text: Arc<str>,
    /// The destinations the prompts' words ask to send to, across the session (what
    /// `flows.task` decides about).
    pub named: Named,
    /// The destinations a trusted front listed (`sends_to`): always excused.
    pub listed: Named,
}

impl UserTask {
    /// A task of one free-text prompt: it names what it asks to send to.
    pub fn from_prompt(text: &str) -> UserTask {
        UserTask { text: Arc::from(text), named: Named::of(text), listed: Named::default() }
    }
}
