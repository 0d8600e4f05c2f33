//! The units of a call the rules judge one by one: a command, a path, a fetch, the call itself.

use std::fmt;

use super::super::destination::{HostMatch, Reading};
use super::super::kinds::Access;
use super::super::spec::Subject as RuleSubject;
use super::super::{Effect, Rule};
use super::SYSTEM_BIN;
use portcullis_shell::Command;

/// One judgeable piece of a call. A fetch's `reading` is where each kind of fetcher connects:
/// `domain:` rules match it.
pub(super) enum Unit<'a> {
    Command {
        cmd: &'a Command,
        read_only: bool,
    },
    /// `path` as the jail resolved it; `written` as the call spelt it (the secret policy judges
    /// both: a symlinked home resolves elsewhere).
    Path {
        path: &'a str,
        access: Access,
        written: &'a str,
    },
    Fetch {
        url: &'a str,
        reading: Reading,
    },
    Generic {
        args: &'a str,
    },
}

impl<'a> Unit<'a> {
    /// The secret a file read may reveal, judged on the resolved path and on an absolute path
    /// as written; `cwd` is the jail's root.
    pub(super) fn secret(&self, cwd: Option<&str>) -> Option<portcullis_shell::secrets::Secret> {
        let Unit::Path { path, access, written } = self else { return None };
        let as_written = || written.starts_with('/').then(|| access.secret(written, cwd)).flatten();
        access.secret(path, cwd).or_else(as_written)
    }

    pub(super) fn read_only(&self, cwd: Option<&str>) -> bool {
        match self {
            Unit::Command { read_only, .. } => *read_only,
            // One secret policy for every reader: a read is read-only only off the stores.
            Unit::Path { access, .. } => access.reads() && self.secret(cwd).is_none(),
            Unit::Fetch { .. } | Unit::Generic { .. } => false,
        }
    }
}

/// How a reason names a unit: "`git push`", "read /etc/passwd", "fetch https://…", "the call".
impl fmt::Display for Unit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unit::Command { cmd, .. } => write!(f, "`{cmd}`"),
            Unit::Path { path, access, .. } => {
                write!(f, "{} {path}", if access.reads() { "read" } else { "write" })
            }
            Unit::Fetch { url, reading } => match reading.doubt() {
                Some(doubt) => write!(f, "fetch {url} ({doubt})"),
                None => write!(f, "fetch {url}"),
            },
            Unit::Generic { .. } => f.write_str("the call"),
        }
    }
}

fn system_program(cmd: &Command) -> bool {
    !cmd.path_qualified
        || SYSTEM_BIN.iter().any(|d| cmd.invoked_as.strip_prefix(d) == Some(cmd.program.as_str()))
}

/// Does `rule` match `unit` of a call to `qualified`?
pub(super) fn matches(rule: &Rule, qualified: &str, unit: &Unit<'_>) -> bool {
    let subject_ok = match (&rule.spec.subject, unit) {
        (RuleSubject::Tool(g), _) => g.matches(qualified),
        (RuleSubject::Shell, Unit::Command { .. }) => true,
        (RuleSubject::Read, Unit::Path { access: Access::Read | Access::Search, .. }) => true,
        (RuleSubject::Write, Unit::Path { access: Access::Write, .. }) => true,
        (RuleSubject::File, Unit::Path { .. }) => true,
        (RuleSubject::Fetch, Unit::Fetch { .. }) => true,
        _ => false,
    };
    if !subject_ok {
        return false;
    }
    if let Unit::Command { cmd, .. } = unit {
        if rule.effect == Effect::Allow && !system_program(cmd) {
            return false;
        }
    }
    let Some(spec) = &rule.spec.specifier else { return true };
    match unit {
        // Literal only: the canonical form meets deny and ask rules in `effect_decision`; an
        // allow never widens to spellings it did not name (`git -c core.pager=… status`).
        Unit::Command { cmd, .. } => spec.command.matches_command(cmd),
        Unit::Path { path, .. } => spec.path.matches(path),
        Unit::Fetch { url, reading } => match &spec.domain {
            // A URL some fetcher may read as the rule's host is enough to deny or ask; an
            // allow needs every reading to match.
            Some(pattern) => match pattern.matches(reading) {
                HostMatch::Yes => true,
                HostMatch::Possibly => rule.effect != Effect::Allow,
                HostMatch::No => false,
            },
            None => spec.text.matches(url),
        },
        Unit::Generic { args } => spec.text.matches(args),
    }
}
