//! Which tool each task runs: a tool called as a task (SEP-1686) answers `tools/call` with a
//! task, and its output comes later from `tasks/result` (its state, with a `statusMessage`, from
//! `tasks/get`) — requests that name only the task. Their answers are judged as the tool the task
//! runs, so a rule, a `flows.private` entry or a pin naming the tool reads its output however it
//! is fetched (red team R10-4). A task id the proxy did not see created (a server restarted,
//! the table started over) is judged as `mcp__{upstream}__tasks/result`, as before.
//!
//! Keyed by upstream and task id (ids are the server's, unguessable); at most 16,384, a full
//! table starts over.

use crate::read_mostly::ReadMostly;

const MAX_TASKS: usize = 16_384;

#[derive(Debug)]
pub struct TaskIds {
    map: ReadMostly<std::sync::Arc<str>>,
}

impl Default for TaskIds {
    fn default() -> Self {
        TaskIds { map: ReadMostly::new(16) }
    }
}

fn key(upstream: &str, task: &str) -> String {
    format!("{upstream}\u{0}{task}")
}

impl TaskIds {
    /// Records that task `task` of `upstream` runs the tool named `tool` (its own name).
    pub fn created(&self, upstream: &str, task: &str, tool: &str) {
        if task.len() > 256 {
            return;
        }
        if self.map.len() >= MAX_TASKS {
            self.map.retain(|_, _| false);
        }
        self.map.insert(&key(upstream, task), std::sync::Arc::from(tool));
    }

    /// The tool task `task` of `upstream` runs, when its creation was seen.
    pub fn tool(&self, upstream: &str, task: &str) -> Option<std::sync::Arc<str>> {
        if self.map.len() == 0 {
            return None;
        }
        self.map.get(&key(upstream, task))
    }
}

/// The task id a `tools/call` answer creates (`result.task.taskId`), when it is one.
pub fn created_by(result: &str) -> Option<String> {
    if !result.contains("taskId") {
        return None;
    }
    #[derive(serde::Deserialize)]
    struct Created {
        task: Task,
    }
    #[derive(serde::Deserialize)]
    struct Task {
        #[serde(rename = "taskId")]
        task_id: String,
    }
    serde_json::from_str::<Created>(result).ok().map(|c| c.task.task_id)
}

/// The task id a `tasks/*` request names (`params.taskId`).
pub fn named_by(params: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "taskId")]
        task_id: String,
    }
    serde_json::from_str::<Params>(params).ok().map(|p| p.task_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_read_where_it_is_created_and_where_it_is_named() {
        let t = TaskIds::default();
        assert_eq!(created_by(r#"{"task":{"taskId":"t-1","status":"working"}}"#).as_deref(), Some("t-1"));
        assert_eq!(created_by(r#"{"content":[{"type":"text","text":"taskId"}]}"#), None);
        assert_eq!(named_by(r#"{"taskId":"t-1","_meta":{}}"#).as_deref(), Some("t-1"));
        t.created("up", "t-1", "research");
        assert_eq!(t.tool("up", "t-1").as_deref(), Some("research"));
        assert_eq!(t.tool("other", "t-1"), None, "another upstream's task");
        assert_eq!(t.tool("up", "t-2"), None);
    }
}
