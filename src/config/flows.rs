//! `flows:`: which tools' results must not leave (`private`), what a flow of them to a sink
//! whose destination egress does not allow meets (`mode`), and the index's memory bounds.

use serde::Deserialize;

use super::Problems;
use crate::rules::glob::{Flavour, Glob};

/// As written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// Globs over qualified tool names whose results are private (`mcp__mail__*`).
    #[serde(default)]
    pub private: Vec<String>,
    /// `deny` (the default) or `ask`.
    pub mode: Option<String>,
    /// What a destination the user's free-text task asks to send to does to a flow: `ask` (the
    /// default), `allow` or `off`.
    pub task: Option<String>,
    #[serde(default)]
    pub limits: RawLimits,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    pub per_session: Option<u64>,
    pub sessions: Option<u64>,
    pub total: Option<u64>,
    pub sources_per_session: Option<u64>,
    pub evicted: Option<u64>,
    /// How long a caller's shared entries outlive its last write (with a shared `state:`).
    pub shared_ttl: Option<super::raw::Scalar>,
    /// Entries (one per recorded result) a caller's shared list holds.
    pub shared_records: Option<u64>,
}

/// What a destination the user's free-text task asks to send to does to a flow that would be
/// refused ([`crate::intent`]). A front's `sends_to` list always excuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskNames {
    /// The refusal becomes an ask that says the task asks for it: a person (or the ask
    /// reviewer, reading the user's words) confirms; headless, refused.
    #[default]
    Ask,
    /// Excused, as an egress `allow` would: the reader of free text decides alone.
    Allow,
    /// Not read.
    Off,
}

/// What a flow of private text to a sink with an unallowed destination meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlowMode {
    #[default]
    Deny,
    Ask,
}

/// The index's bounds. Each fingerprint costs about 16 bytes in its session's table (a 64-bit
/// hash, a source index, the table's slack), so the defaults hold at most ~1 MiB per session
/// and ~16 MiB in total.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowLimits {
    pub per_session: usize,
    pub sessions: usize,
    pub total: usize,
    pub sources_per_session: usize,
    pub evicted: usize,
    pub shared_ttl: std::time::Duration,
    pub shared_records: usize,
}

impl Default for FlowLimits {
    fn default() -> Self {
        FlowLimits {
            per_session: 65_536,
            sessions: 10_000,
            total: 1 << 20,
            sources_per_session: 64,
            evicted: 65_536,
            shared_ttl: std::time::Duration::from_secs(24 * 3600),
            shared_records: 1024,
        }
    }
}

/// `flows:` compiled.
#[derive(Debug, Clone)]
pub struct FlowSettings {
    pub private: Vec<Glob>,
    pub mode: FlowMode,
    pub task: TaskNames,
    pub limits: FlowLimits,
}

impl FlowSettings {
    /// Whether `qualified`'s results are private.
    pub fn is_private(&self, qualified: &str) -> bool {
        self.private.iter().any(|g| g.matches(qualified))
    }
}

/// `flows:` compiled, with `preset_private` (the upstreams' presets' private tools) joined to
/// its `private:` — only when the section is there: a preset never turns the index on.
pub(crate) fn compile(
    raw: Option<Raw>,
    preset_private: Vec<String>,
    p: &mut Problems,
) -> Option<FlowSettings> {
    let raw = raw?;
    let mut private: Vec<Glob> = preset_private.iter().map(|t| Glob::new(t, Flavour::Text)).collect();
    for (i, glob) in raw.private.iter().enumerate() {
        match glob.trim().is_empty() {
            true => p.add(format!("flows.private[{i}]"), "an empty glob names no tool"),
            false => private.push(Glob::new(glob, Flavour::Text)),
        }
    }
    let mode = match raw.mode.as_deref() {
        None | Some("deny") => FlowMode::Deny,
        Some("ask") => FlowMode::Ask,
        Some(other) => {
            p.add("flows.mode", format!("{other:?} is not deny or ask"));
            FlowMode::Deny
        }
    };
    let task = match raw.task.as_deref() {
        None | Some("ask") => TaskNames::Ask,
        Some("allow") => TaskNames::Allow,
        Some("off") => TaskNames::Off,
        Some(other) => {
            p.add("flows.task", format!("{other:?} is not ask, allow or off"));
            TaskNames::Ask
        }
    };
    let d = FlowLimits::default();
    let l = raw.limits;
    let shared_ttl = match p.duration("flows.limits.shared_ttl", l.shared_ttl, d.shared_ttl) {
        t if t.is_zero() => {
            p.add("flows.limits.shared_ttl", "must be longer than zero");
            d.shared_ttl
        }
        t => t,
    };
    let mut bound = |key: &str, v: Option<u64>, default: usize| match v {
        None => default,
        Some(0) => {
            p.add(format!("flows.limits.{key}"), "must be at least 1");
            default
        }
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
    };
    let limits = FlowLimits {
        per_session: bound("per_session", l.per_session, d.per_session),
        sessions: bound("sessions", l.sessions, d.sessions),
        total: bound("total", l.total, d.total),
        sources_per_session: bound("sources_per_session", l.sources_per_session, d.sources_per_session),
        evicted: bound("evicted", l.evicted, d.evicted),
        shared_records: bound("shared_records", l.shared_records, d.shared_records),
        shared_ttl,
    };
    Some(FlowSettings { private, mode, task, limits })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bad_entry_is_reported_with_its_path() {
        let mut p = Problems::default();
        let raw = Raw {
            private: vec!["mcp__mail__*".into(), " ".into()],
            mode: Some("block".into()),
            task: Some("maybe".into()),
            limits: RawLimits { sessions: Some(0), ..Default::default() },
        };
        let s = compile(Some(raw), Vec::new(), &mut p).expect("compiled");
        let paths: Vec<&str> = p.problems.iter().map(|x| x.path.as_str()).collect();
        assert_eq!(paths, ["flows.private[1]", "flows.mode", "flows.task", "flows.limits.sessions"]);
        assert_eq!(s.task, TaskNames::Ask, "the default");
        assert!(s.is_private("mcp__mail__read_inbox"));
        assert!(!s.is_private("mcp__web__post"));
    }

    #[test]
    fn no_section_is_no_flow_index() {
        assert!(compile(None, Vec::new(), &mut Problems::default()).is_none());
    }
}
