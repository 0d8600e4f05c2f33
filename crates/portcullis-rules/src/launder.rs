//! A denied program laundered through a program that runs its arguments (`fakeroot rm x`,
//! `gdb -batch -ex run --args rm x`, `script -c 'rm x'`).
//!
//! The shell analyzer peels the wrappers it knows (`env`, `sudo`, `nice`, `xargs`, …) and reads
//! the programs it has a grammar for; a program with neither is not proven to treat its words
//! as data. When one of its words names the program a deny or ask rule is about, it may run
//! it: the rule possibly matches, which asks (never allows).

use portcullis_shell::effects::{Canonical, CommandEffects};
use portcullis_shell::grammar::Unread;

use super::glob::{Flavour, Glob};
use super::spec::CommandPattern;

/// The program a command pattern is about: its first word, when it is literal.
pub(crate) fn rule_program(pattern: &CommandPattern) -> Option<&str> {
    let first = match pattern {
        CommandPattern::Prefix(words) => words.first().map(String::as_str)?,
        CommandPattern::Glob(g) => g.as_str().split(' ').next()?,
    };
    let literal = !first.is_empty() && !first.contains(['*', '?', '[', '\\']);
    literal.then(|| basename(first))
}

/// Subcommands that run a program named by their words, of the programs whose subcommand the
/// analyzer places (`npm exec rm x`, `npx` being a program of its own; `docker exec c rm x` and
/// `kubectl exec p -- rm x` in a container that may mount the host). Any other placed
/// subcommand's words are its own (`npm run rm` names a package script, `git rm` a git command,
/// `cargo run -- rm` passes `rm` to the crate's program).
const RUNNER_SUBCOMMANDS: &[(&str, &[&str])] = &[
    ("npm", &["exec", "x"]),
    ("pnpm", &["exec", "dlx"]),
    ("yarn", &["exec", "dlx"]),
    ("docker", &["exec", "run", "create"]),
    ("kubectl", &["exec", "run", "debug"]),
];

/// The word of a command that names `program` as something it may run, when the command's
/// program is not proven to treat its words as data: it has no grammar here and no subcommand
/// structure, or its subcommand could not be placed (any subcommand, a git alias or
/// `rebase -x` included, is possible), or it is placed and is one that runs its words.
pub(crate) fn may_run<'a>(program: &str, fx: &'a CommandEffects) -> Option<&'a str> {
    let runs_words = match fx.canonical_from {
        Canonical::Literal => {
            matches!(fx.unread, Some(Unread::UnknownProgram))
                && !matches!(fx.canonical.as_slice(), [p, args @ ..] if portcullis_shell::runs_nothing(p, args))
        }
        Canonical::Unplaced => true,
        Canonical::Placed => match fx.canonical.as_slice() {
            [prog, sub, ..] => {
                RUNNER_SUBCOMMANDS.iter().any(|(p, subs)| p == prog && subs.contains(&sub.as_str()))
            }
            _ => false,
        },
    };
    if !runs_words {
        return None;
    }
    fx.canonical.iter().skip(1).map(String::as_str).find(|word| names(word, program))
}

/// Whether `word` may hold `program` as a command word: the word itself, or any piece of it split
/// where a shell, `-ex` string or `--opt=` value splits (`'shell rm x'`, `--exec=/bin/rm`), or a
/// piece bash expands as a glob (`/bin/r?`; a bracket class may match any name). A word with
/// an expansion (`$P`) is not looked at here: its place is unknown, which the path floor asks.
fn names(word: &str, program: &str) -> bool {
    word.split(|c: char| c.is_whitespace() || ";&|()<>='\",{}$`".contains(c)).any(|piece| {
        let name = basename(piece);
        if name.contains('[') {
            true
        } else if name.contains(['*', '?']) {
            Glob::new(name, Flavour::Text).matches(program)
        } else {
            !name.is_empty() && name == program
        }
    })
}

/// Why a command rule possibly meets a command through [`may_run`], when that is how it meets.
pub(crate) fn why(pattern: &CommandPattern, fx: &CommandEffects) -> Option<String> {
    let ruled = rule_program(pattern)?;
    let program = fx.canonical.first()?;
    if basename(program) == ruled {
        return None;
    }
    let word = may_run(ruled, fx)?;
    Some(format!(
        "may run `{ruled}` (its word `{word}`): `{program}` has no grammar here that proves its words are data"
    ))
}

fn basename(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

#[cfg(test)]
mod tests {
    use portcullis_shell::effects::effects;
    use portcullis_shell::place::Base;

    use super::*;

    fn laundered(line: &str, program: &str) -> bool {
        let a = portcullis_shell::analyze(line);
        effects(&a, &Base::start(), None).iter().any(|fx| may_run(program, fx).is_some())
    }

    #[test]
    fn an_unknown_program_naming_a_ruled_program_may_run_it() {
        for line in [
            "fakeroot rm x",
            "gdb -q -batch -ex run --args rm x",
            "gdb -batch -ex 'shell rm x'",
            "catchsegv /bin/rm x",
            "mystery --exec=rm x",
            "script -qc 'rm x' /dev/null",
            "flock /tmp/l rm x",
            "unshare -r rm x",
            "chroot / rm x",
            "strace -f -o /dev/null rm x",
            "valgrind -q rm x",
            "setsid rm x",
            "firejail --quiet rm x",
            "systemd-run --user rm x",
            "taskset 1 rm x",
            "chrt -o 0 rm x",
            "su -c 'rm x'",
            "runuser -u u -- rm x",
            "watch -n1 rm x",
            "parallel rm ::: x",
            "ltrace rm x",
            "fakeroot /bin/r? x",
            "fakeroot /bin/r* x",
            "fakeroot /bin/r[m] x",
            "fakeroot \"$(echo rm)\" x",
            "npm exec -- rm x",
            "npm x rm x",
            "docker exec c rm x",
            "docker run --rm img rm -rf /data",
            "kubectl exec p -- rm x",
            "git rebase -x 'rm x' main",
            "git --weird-option rm x",
        ] {
            assert!(laundered(line, "rm"), "{line}");
        }
    }

    #[test]
    fn programs_whose_words_are_data_do_not_run_them() {
        for line in [
            "echo rm",
            "grep -r rm .",
            "ls rm",
            "cat rm",
            "fakeroot ls",
            "gdb -batch -ex run --args ls rmdir",
        ] {
            assert!(!laundered(line, "rm"), "{line}");
        }
    }

    #[test]
    fn a_rule_is_about_its_literal_first_word() {
        use crate::glob::{Flavour, Glob};
        let prefix = CommandPattern::Prefix(vec!["git".into(), "push".into()]);
        assert_eq!(rule_program(&prefix), Some("git"));
        assert_eq!(rule_program(&CommandPattern::Glob(Glob::new("rm *", Flavour::Text))), Some("rm"));
        assert_eq!(rule_program(&CommandPattern::Glob(Glob::new("/bin/rm", Flavour::Text))), Some("rm"));
        assert_eq!(rule_program(&CommandPattern::Glob(Glob::new("r* x", Flavour::Text))), None);
    }
}
