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
use crate::intent::{Named, UserTask};
use crate::read_mostly::ReadMostly;

/// Sessions whose task is kept.
const MAX_SESSIONS: usize = 16_384;
/// Between two prompts of one session.
const SEPARATOR: &str = "\n---\n";

#[derive(Debug)]
pub struct UserTasks {
    map: ReadMostly<Arc<UserTask>>,
}

impl Default for UserTasks {
    fn default() -> Self {
        UserTasks { map: ReadMostly::new(16) }
    }
}

impl UserTasks {
    /// Records `prompt` as the newest thing the user asked in `session` (a session key as the
    /// proxy keeps it). Where it asks to send is read from its words ([`crate::intent::asks`]),
    /// or, when a trusted front lists them, is exactly `sends_to` (the prompt's words then name
    /// nothing). The destinations of earlier prompts stay (at most 64 of each kind), except one
    /// this prompt's words mention without asking for it. A blank prompt with no list records
    /// nothing.
    pub fn record(&self, session: &str, prompt: &str, sends_to: Option<&[String]>) {
        let prompt = prompt.trim();
        if prompt.is_empty() && sends_to.is_none_or(<[String]>::is_empty) {
            return;
        }
        let (mut named, mut listed) = match sends_to {
            Some(list) => (Named::default(), Named::listed(list.iter().map(String::as_str))),
            // Read within the bound the text is kept to (a prompt may be a megabyte).
            None => (Named::of(clip_task(prompt)), Named::default()),
        };
        let mut text = clip_task(prompt).to_owned();
        if let Some(before) = self.map.get(session) {
            let room = MAX_TASK_BYTES.saturating_sub(text.len() + SEPARATOR.len());
            if room > 0 && !before.text.is_empty() {
                if !text.is_empty() {
                    text.push_str(SEPARATOR);
                }
                text.push_str(clip_task_to(&before.text, room));
            }
            // An earlier prompt's destination stays named unless this prompt's words mention it
            // without asking for it ("actually, never mail eve@…": red team R11-7).
            let mut kept = before.named.clone();
            if sends_to.is_none() {
                kept.remove(&Named::mentioned(clip_task(prompt)));
            }
            kept.merge(&named);
            named = kept;
            listed.merge(&before.listed);
        } else if self.map.len() >= MAX_SESSIONS {
            tracing::warn!(sessions = MAX_SESSIONS, "user tasks: the table is full and starts over");
            self.map.retain(|_, _| false);
        }
        self.map.insert(session, Arc::new(UserTask { text: Arc::from(text), named, listed }));
    }

    /// What the user asked in `session`, newest first; `None` when nothing was recorded.
    pub fn get(&self, session: Option<&str>) -> Option<Arc<UserTask>> {
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
        t.record("s", "  ", None);
        assert!(t.get(Some("s")).is_none(), "a blank prompt is no task");
        t.record("s", "Mail the report to bob@example.com", None);
        t.record("s", "yes, go on", None);
        let task = t.get(Some("s")).unwrap();
        assert_eq!(&*task.text, "yes, go on\n---\nMail the report to bob@example.com");
        assert!(!task.named.is_empty(), "an earlier prompt's destination stays named");
        assert!(t.get(Some("other")).is_none(), "one session's task is not another's");
        for i in 0..200 {
            t.record("s", &format!("prompt {i} {}", "é".repeat(40)), None);
        }
        let task = t.get(Some("s")).unwrap().text.clone();
        assert!(task.len() <= MAX_TASK_BYTES && task.starts_with("prompt 199 "), "{}", task.len());
        t.record("s", &"x".repeat(3 * MAX_TASK_BYTES), None);
        assert_eq!(t.get(Some("s")).unwrap().text.len(), MAX_TASK_BYTES, "one long prompt fills it alone");
    }

    #[test]
    fn a_fronts_list_names_exactly_what_it_lists() {
        let t = UserTasks::default();
        // The words ask for a send to eve, the front knows the user asked for bob only.
        t.record("s", "Reply with the statement to eve@eve.example", Some(&["bob@client.example".into()]));
        let task = t.get(Some("s")).unwrap();
        assert_eq!(task.listed, Named::listed(["bob@client.example"]));
        assert!(task.named.is_empty(), "the words of a prompt with a list name nothing");
        // A list with no prompt is recorded too; free text alone names what it asks for.
        t.record("q", "", Some(&["files.client.example".into()]));
        assert!(!t.get(Some("q")).unwrap().listed.is_empty());
        t.record("r", "Never send anything to eve@eve.example", None);
        assert!(t.get(Some("r")).unwrap().named.is_empty());
    }
}
