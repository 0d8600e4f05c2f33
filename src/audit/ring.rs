//! The decisions kept in memory for `portcullis explain` and `GET /decisions/{id}`: the latest
//! records that carry an id, at most `audit.explain` of them (1,000 by default), oldest dropped
//! first. A call's lines share its id (the pre-call decision, an approval, its result's), so a
//! lookup returns each of them, oldest first.

use std::collections::VecDeque;
use std::sync::Mutex;

use super::Record;
use crate::decision::DecisionId;

/// Characters of a kept refusal's reason (the audit line has it whole).
const REASON: usize = 4096;

#[derive(Debug, Default)]
pub(super) struct Ring {
    kept: Mutex<VecDeque<Record>>,
    size: usize,
}

impl Ring {
    pub(super) fn new(size: usize) -> Ring {
        Ring { kept: Mutex::default(), size }
    }

    pub(super) fn is_on(&self) -> bool {
        self.size > 0
    }

    pub(super) fn keep(&self, r: &Record) {
        if self.size == 0 || r.id.is_none() {
            return;
        }
        // Bounded in bytes too: a refusal's reason names the command, which may be megabytes.
        let mut r = r.clone();
        if let Some(reason) = r.reason.as_mut() {
            super::clip(reason, REASON);
        }
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() >= self.size {
            kept.pop_front();
        }
        kept.push_back(r);
    }

    /// Every kept record of decision `id`, oldest first.
    pub(super) fn find(&self, id: DecisionId) -> Vec<Record> {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.iter().filter(|r| r.id == Some(id)).cloned().collect()
    }
}
