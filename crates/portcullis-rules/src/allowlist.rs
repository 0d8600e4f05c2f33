//! Executor allowlist mode for shell tools — the least-privilege pattern. Instead of judging
//! arbitrary shell, the tool accepts only listed programs, invoked plainly: no metacharacters
//! at all (so no compounds, expansions, quotes or redirects to reason about), exact program
//! names (never a path), per-program short options, a minimum number of path operands, each
//! through the jail, and literal-only programs that take no arguments.

use std::collections::BTreeMap;

use super::jail::{Confined, Jail};

/// Characters that give a shell line any meaning beyond "program and words".
const METACHARACTERS: &[char] = &[
    ';', '&', '|', '<', '>', '$', '`', '(', ')', '{', '}', '*', '?', '[', ']', '!', '~', '#', '\\', '"',
    '\'', '=', '%', '^',
];

/// What one allowlisted program may be given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Allowed {
    /// Permitted short options (`"la1"` allows `-l`, `-a`, `-la`, …). Long options are refused.
    pub options: String,
    /// At least this many path operands.
    pub min_paths: usize,
    /// No arguments at all (`date`, `pwd`).
    pub literal: bool,
}

/// An executor allowlist.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Allowlist {
    pub programs: BTreeMap<String, Allowed>,
}

impl Allowlist {
    /// `Ok(())` when `line` is an allowed invocation; otherwise why not.
    pub fn check(&self, line: &str, jail: &Jail) -> Result<(), String> {
        if let Some(c) = line.chars().find(|c| METACHARACTERS.contains(c) || (c.is_control() && *c != ' ')) {
            return Err(format!("the allowlist accepts plain commands only; {c:?} is a shell metacharacter"));
        }
        let mut words = line.split_whitespace();
        let Some(program) = words.next() else { return Err("empty command".into()) };
        if program.contains('/') {
            return Err(format!("{program:?}: programs are named exactly, never by path"));
        }
        let Some(allowed) = self.programs.get(program) else {
            let known: Vec<&str> = self.programs.keys().map(String::as_str).collect();
            return Err(format!("{program:?} is not in the allowlist ({})", known.join(", ")));
        };
        let args: Vec<&str> = words.collect();
        if allowed.literal && !args.is_empty() {
            return Err(format!("{program} takes no arguments here"));
        }
        let mut paths = 0;
        for a in &args {
            if let Some(opts) = a.strip_prefix('-') {
                if opts.is_empty() || opts.starts_with('-') {
                    return Err(format!("{program}: option {a:?} is not allowed (short options only)"));
                }
                if let Some(bad) = opts.chars().find(|c| !allowed.options.contains(*c)) {
                    return Err(format!(
                        "{program}: option -{bad} is not allowed (allowed: {:?})",
                        allowed.options
                    ));
                }
            } else {
                if let Confined::Refused(why) = jail.confine(a) {
                    return Err(format!("{program}: {why}"));
                }
                paths += 1;
            }
        }
        if paths < allowed.min_paths {
            return Err(format!("{program} needs at least {} path operand(s)", allowed.min_paths));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jail::Resolve;

    #[test]
    fn only_plain_allowlisted_invocations_pass() {
        let dir = tempfile::tempdir().unwrap();
        let jail = Jail::new(Some(dir.path()), &[".env".into()], Resolve::Filesystem).unwrap();
        let mut programs = BTreeMap::new();
        programs.insert("ls".into(), Allowed { options: "la".into(), min_paths: 0, literal: false });
        programs.insert("cat".into(), Allowed { options: String::new(), min_paths: 1, literal: false });
        programs.insert("date".into(), Allowed { literal: true, ..Allowed::default() });
        let list = Allowlist { programs };
        let table = [
            ("ls", true),
            ("ls -la", true),
            ("ls -l -a src", true),
            ("ls -R", false),
            ("ls --color=always", false),
            ("ls ../..", false),
            ("ls; rm -rf /", false),
            ("ls $(id)", false),
            ("ls > out", false),
            ("ls 'x'", false),
            ("/bin/ls", false),
            ("cat notes.txt", true),
            ("cat", false),
            ("cat .env", false),
            ("cat /etc/passwd", false),
            ("date", true),
            ("date -s 2020", false),
            ("rm x", false),
            ("", false),
            ("ls\nrm x", false),
        ];
        for (line, ok) in table {
            assert_eq!(list.check(line, &jail).is_ok(), ok, "{line:?}: {:?}", list.check(line, &jail));
        }
    }
}
