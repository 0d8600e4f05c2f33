//! The working directory through a line: the set of directories a command may run in.

use crate::place::{cd_dirs, change_dir, Base};
use crate::{Analysis, Command};

/// More possible working directories than this collapse to [`Base::Unknown`].
pub const MAX_BASES: usize = 4;

/// The possible working directories before the next command.
pub(super) struct Tracker {
    /// Every directory a command may run in from here on.
    bases: Vec<Base>,
    /// Where the next command runs if it follows the last one with `&&` (the last one was a
    /// directory change that succeeded), when that is narrower than `bases`.
    chained: Option<Vec<Base>>,
    /// `CDPATH` is set somewhere on the line: a relative `cd` may go anywhere.
    cdpath: bool,
}

impl Tracker {
    pub(super) fn new(start: Base, analysis: &Analysis) -> Tracker {
        let cdpath = analysis.commands.iter().any(|c| {
            c.assignments.iter().any(|(n, _)| n == "CDPATH") || c.args.iter().any(|a| a.contains("CDPATH"))
        });
        Tracker { bases: vec![start], chained: None, cdpath }
    }

    /// Where `cmd`, the next command, may run.
    pub(super) fn bases_for(&self, cmd: &Command) -> &[Base] {
        match (&self.chained, cmd.after_success) {
            (Some(chained), true) => chained,
            _ => &self.bases,
        }
    }

    /// After `cmd` ran (or failed, or was skipped): directory changes add where they lead; the
    /// directories before stay possible.
    pub(super) fn after(&mut self, cmd: &Command, home: Option<&str>) {
        let Some(target) = self.target(cmd) else {
            self.chained = None;
            return;
        };
        let from = self.bases_for(cmd).to_vec();
        let mut next: Vec<Base> = match target {
            Target::Word(w) if self.cdpath && !(w.starts_with('/') || w.starts_with('.')) => {
                vec![Base::Unknown]
            }
            Target::Word(w) => from.iter().flat_map(|b| cd_dirs(&w, b, home)).collect(),
            Target::Home => vec![home.map_or(Base::Unknown, |h| change_dir(h, &Base::Unknown, None))],
            Target::Unknown => vec![Base::Unknown],
        };
        next.dedup();
        for b in &next {
            if !self.bases.contains(b) {
                self.bases.push(b.clone());
            }
        }
        if self.bases.len() > MAX_BASES || self.bases.contains(&Base::Unknown) {
            self.bases = vec![Base::Unknown];
        }
        if next.len() > MAX_BASES || next.contains(&Base::Unknown) {
            next = vec![Base::Unknown];
        }
        self.chained = Some(next);
    }

    fn target(&self, cmd: &Command) -> Option<Target> {
        match cmd.program.as_str() {
            "cd" | "pushd" | "chdir" => {
                let mut words = cmd.args.iter().skip_while(|a| {
                    a.len() > 1
                        && a.starts_with('-')
                        && a.as_str() != "--"
                        && a.bytes().skip(1).all(|b| b"LPe@".contains(&b))
                });
                let first = words.next();
                let operand = match first.map(String::as_str) {
                    Some("--") => words.next(),
                    _ => first,
                };
                Some(match operand.map(String::as_str) {
                    None if cmd.program == "pushd" => Target::Unknown,
                    None => Target::Home,
                    Some("-") => Target::Unknown,
                    Some(w) if w.starts_with('+') || (w.starts_with('-') && cmd.program == "pushd") => {
                        Target::Unknown
                    }
                    Some(w) => Target::Word(w.to_string()),
                })
            }
            "popd" => Some(Target::Unknown),
            // A function, `eval`, `source` or an opaque command may change directory in ways the
            // words do not show.
            "source" | "." | "eval" => Some(Target::Unknown),
            _ if !cmd.opaque.is_empty() && cmd.program.starts_with('$') => Some(Target::Unknown),
            _ => None,
        }
    }
}

enum Target {
    Word(String),
    Home,
    Unknown,
}
