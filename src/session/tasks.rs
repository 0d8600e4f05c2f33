//! The user's own words per session, recorded through a channel the agent does not control:
//! Claude Code's `UserPromptSubmit` hook (`portcullis hook prompt --proxy`, `POST /hook/prompt`)
//! or an operator-trusted front (`POST /sessions/{id}/task` on the admin API). Both need the
//! admin token, which the agent never holds. The checker may read a send this task plainly asks
//! for as the user's intent; the task the agent writes (`_meta["portcullis/task"]`) never can.
//!
//! A session keeps its latest prompts, newest first, at most [`MAX_TASK_BYTES`] in all (a new
//! prompt pushes the oldest out). Bounded at 16384 sessions: a full table starts over, so a live
//! session's sends are judged without its task until the user's next prompt — stricter, never
//! looser.

use std::sync::Arc;

use crate::checker::prompt::{clip_task, MAX_TASK_BYTES};
use crate::read_mostly::ReadMostly;

/// Sessions whose task is kept.
const MAX_SESSIONS: usize = 16_384;
/// Between two prompts of one session.
const SEPARATOR: &str = "\n---\n";

#[derive(Debug)]
pub struct UserTasks {
    map: ReadMostly<Arc<str>>,
}

impl Default for UserTasks {
    fn default() -> Self {
        UserTasks { map: ReadMostly::new(16) }
    }
}

impl UserTasks {
    /// Records `prompt` as the newest thing the user asked in `session` (a session key as the
    /// proxy keeps it). A blank prompt records nothing.
    pub fn record(&self, session: &str, prompt: &str) {
        let prompt = prompt.trim();
        if prompt.is_empty() {
            return;
        }
        let mut task = clip_task(prompt).to_owned();
        if let Some(before) = self.map.get(session) {
            let room = MAX_TASK_BYTES.saturating_sub(task.len() + SEPARATOR.len());
            if room > 0 {
                task.push_str(SEPARATOR);
                task.push_str(clip_task_to(&before, room));
            }
        } else if self.map.len() >= MAX_SESSIONS {
            tracing::warn!(sessions = MAX_SESSIONS, "user tasks: the table is full and starts over");
            self.map.retain(|_, _| false);
        }
        self.map.insert(session, Arc::from(task));
    }

    /// What the user asked in `session`, newest first; `None` when nothing was recorded.
    pub fn get(&self, session: Option<&str>) -> Option<Arc<str>> {
        if self.map.len() == 0 {
            return None;
        }
        self.map.get(session?)
    }
}

/// `text` cut to at most `max` bytes on a character boundary.
fn clip_task_to(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_keeps_its_latest_prompts_newest_first_within_the_bound() {
        let t = UserTasks::default();
        assert!(t.get(Some("s")).is_none() && t.get(None).is_none());
        t.record("s", "  ");
        assert!(t.get(Some("s")).is_none(), "a blank prompt is no task");
        t.record("s", "Mail the report to bob@example.com");
        t.record("s", "yes, go on");
        assert_eq!(t.get(Some("s")).as_deref(), Some("yes, go on\n---\nMail the report to bob@example.com"));
        assert!(t.get(Some("other")).is_none(), "one session's task is not another's");
        for i in 0..200 {
            t.record("s", &format!("prompt {i} {}", "é".repeat(40)));
        }
        let task = t.get(Some("s")).unwrap();
        assert!(task.len() <= MAX_TASK_BYTES && task.starts_with("prompt 199 "), "{}", task.len());
        t.record("s", &"x".repeat(3 * MAX_TASK_BYTES));
        assert_eq!(t.get(Some("s")).unwrap().len(), MAX_TASK_BYTES, "one long prompt fills it alone");
    }
}
