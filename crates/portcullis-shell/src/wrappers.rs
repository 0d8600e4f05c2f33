//! Peeling wrappers off a command: `sudo -u x env FOO=1 nice -n 5 rm -rf /` runs `rm`.
//!
//! A wrapper is a program whose argv ends in another command. Each one is parsed with its real
//! option grammar (which options take a value, which turn it into something else), because
//! guessing wrong in either direction is exploitable: `sudo -u rm ls` runs `ls` as user `rm`, and
//! `command -v rm` runs nothing. Whatever we cannot parse stops unwrapping and marks the command
//! [`Opacity::OpaqueWrapper`]. `sh -c '…'` (and `eval`, `trap`, `alias`) hand back their literal
//! script for the walker to analyse recursively.

mod evaluated;
mod grammar;
mod shells;

use super::interpreters;
use super::word::Word;
use super::{Dialect, Opacity};
use grammar::{
    BUILTIN, BUSYBOX, COMMAND, DOAS, ENV, EXEC, IONICE, NICE, NOHUP, NONE, STDBUF, SUDO, TIME, TIMEOUT, XARGS,
};

/// Most wrappers peeled from one command (`env env env … ls` is bounded by its length anyway).
const MAX_PEELS: usize = 32;

/// A command after unwrapping.
#[derive(Debug, Default)]
pub(crate) struct Unwrapped {
    /// The inner program and its arguments; empty when a shell's `-c` script replaced it.
    pub words: Vec<Word>,
    /// Wrappers peeled off, outermost first.
    pub wrappers: Vec<String>,
    /// Assignments given to `env` / `sudo` on the way.
    pub assignments: Vec<(String, String)>,
    pub opaque: Vec<Opacity>,
    /// Literal code this command runs from strings (`bash -c`, `eval`, `alias`, `trap`).
    pub scripts: Vec<String>,
    /// Wrapper chain for the commands of `scripts`.
    pub script_wrappers: Vec<String>,
    /// The shell that runs `scripts`, when a shell wrapper (`zsh -c`) hands them back; the
    /// enclosing shell otherwise.
    pub script_shell: Option<Dialect>,
    /// Names this command defines as aliases.
    pub defines: Vec<String>,
    /// Commands the program runs from its own argv (`find -exec rm {} ;`, `fd -x rm`).
    pub embedded: Vec<Vec<Word>>,
}

/// How one wrapper's argv continues.
enum Peel {
    /// Skip this many arguments; the next word is the inner program.
    Inner {
        skip: usize,
        assignments: Vec<(String, String)>,
        /// The inner command receives extra arguments at run time (`xargs`).
        dynamic_args: bool,
    },
    /// A shell's `-c` string: the command is replaced by the script's commands, marked when
    /// the shell's options change how it reads them.
    Script { scripts: Vec<String>, opaque: Option<String> },
    /// Not acting as a wrapper here (`command -v rm`, `nice` alone, `env` printing).
    Terminal,
    /// A wrapper whose inner command cannot be recovered.
    Opaque(String),
}

/// Unwrap `words` (program first), as run by `shell`.
pub(crate) fn unwrap(mut words: Vec<Word>, shell: Dialect) -> Unwrapped {
    let mut out = Unwrapped::default();
    for _ in 0..MAX_PEELS {
        let Some(first) = words.first() else { break };
        if first.dynamic {
            break;
        }
        let name = program_name(&first.text).to_string();
        match peel(&name, &words[1..]) {
            None | Some(Peel::Terminal) => break,
            Some(Peel::Opaque(why)) => {
                out.opaque.push(Opacity::OpaqueWrapper(why));
                break;
            }
            Some(Peel::Inner { skip, assignments, dynamic_args }) => {
                out.wrappers.push(name);
                out.assignments.extend(assignments);
                if dynamic_args {
                    out.opaque.push(Opacity::DynamicWord);
                }
                words.drain(..=skip);
            }
            Some(Peel::Script { scripts, opaque }) => {
                if let Some(why) = opaque {
                    out.opaque.push(Opacity::ShellOption(why));
                }
                out.script_shell = Dialect::of_program(&name);
                out.wrappers.push(name);
                out.script_wrappers = out.wrappers.clone();
                out.scripts.extend(scripts);
                words.clear();
            }
        }
    }
    if let Some(first) = words.first().filter(|w| !w.dynamic) {
        let name = program_name(&first.text).to_string();
        evaluated::strings(&name, &words[1..], shell, &mut out);
        out.embedded = evaluated::argv_lists(&name, &words[1..]);
    }
    out.words = words;
    out
}

/// Whether `program` is a wrapper whose own grammar reads `args` as running nothing (`command
/// -v rm`, `nice` alone, `env` printing): its words are data. An opaque or unknown one is not.
pub fn runs_nothing(program: &str, args: &[String]) -> bool {
    let words: Vec<Word> = args.iter().map(|a| Word::literal(a)).collect();
    matches!(peel(program_name(program), &words), Some(Peel::Terminal))
}

/// The program's basename: `/usr/bin/env` → `env`.
pub(crate) fn program_name(text: &str) -> &str {
    text.rsplit('/').next().unwrap_or(text)
}

fn peel(name: &str, args: &[Word]) -> Option<Peel> {
    let spec = match name {
        "env" => &ENV,
        "command" => &COMMAND,
        "builtin" => &BUILTIN,
        "exec" => &EXEC,
        "nice" => &NICE,
        "nohup" => &NOHUP,
        "time" => &TIME,
        "timeout" => &TIMEOUT,
        "stdbuf" => &STDBUF,
        "ionice" => &IONICE,
        "xargs" => &XARGS,
        "sudo" => &SUDO,
        "doas" => &DOAS,
        "busybox" => &BUSYBOX,
        // zsh precommand modifiers (`-` too: `- rm x` and `exec - rm x` run `rm` under zsh;
        // to bash `-` is a command not found, so peeling it only shows deny rules more).
        "noglob" | "nocorrect" | "-" => &NONE,
        _ if interpreters::is_parsable_shell(name) => return Some(shells::shell(name, args)),
        _ if interpreters::is_opaque_runner(name) => {
            return Some(Peel::Opaque(format!("{name} runs commands we do not unwrap")))
        }
        _ => return None,
    };
    Some(spec.peel(name, args))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::word::decode;

    fn run(line: &str) -> Unwrapped {
        let words = line.split_whitespace().map(decode).collect();
        unwrap(words, Dialect::Bash)
    }

    fn texts(u: &Unwrapped) -> Vec<&str> {
        u.words.iter().map(|w| w.text.as_str()).collect()
    }

    #[test]
    fn each_wrapper_is_peeled_with_its_own_options() {
        let cases: &[(&str, &[&str], &str)] = &[
            ("env FOO=1 ls", &["env"], "ls"),
            ("env -- FOO=1 ls", &["env"], "ls"),
            ("env -i -u HOME --chdir=/tmp A=b git status", &["env"], "git status"),
            ("command -p git status", &["command"], "git status"),
            ("builtin cd /tmp", &["builtin"], "cd /tmp"),
            ("exec -a name ls -l", &["exec"], "ls -l"),
            ("nice -n 19 ls", &["nice"], "ls"),
            ("nice -5 ls", &["nice"], "ls"),
            ("nice --adjustment=3 ls", &["nice"], "ls"),
            ("nohup ./run.sh", &["nohup"], "./run.sh"),
            ("time -p ls", &["time"], "ls"),
            ("timeout -s KILL 5 ls", &["timeout"], "ls"),
            ("timeout --kill-after=1 5s ls", &["timeout"], "ls"),
            ("stdbuf -oL grep x", &["stdbuf"], "grep x"),
            ("ionice -c 3 du", &["ionice"], "du"),
            ("xargs -0 -n 1 rm -f", &["xargs"], "rm -f"),
            ("xargs -I {} cp {} /tmp", &["xargs"], "cp {} /tmp"),
            ("sudo -u rm ls", &["sudo"], "ls"),
            ("sudo -E FOO=1 rm -rf /", &["sudo"], "rm -rf /"),
            ("sudo --user=root -- rm x", &["sudo"], "rm x"),
            ("doas -u root rm x", &["doas"], "rm x"),
            ("busybox nc -e sh", &["busybox"], "nc -e sh"),
            ("noglob rm -rf *", &["noglob"], "rm -rf *"),
            ("/usr/bin/env sudo nice git push", &["env", "sudo", "nice"], "git push"),
            ("builtin command git reset", &["builtin", "command"], "git reset"),
        ];
        for (line, wrappers, inner) in cases {
            let u = run(line);
            assert_eq!(u.wrappers, *wrappers, "{line}");
            assert_eq!(texts(&u).join(" "), *inner, "{line}");
        }
    }

    #[test]
    fn wrappers_used_on_their_own_are_plain_commands() {
        for line in [
            "command -v rm",
            "command -V git",
            "nice",
            "env",
            "env FOO=1",
            "sudo -l",
            "sudo -v",
            "ionice -p 123",
            "timeout 5",
            "xargs",
            "bash script.sh",
            "bash",
        ] {
            let u = run(line);
            assert!(u.wrappers.is_empty(), "{line}: {:?}", u.wrappers);
            assert!(u.opaque.is_empty(), "{line}: {:?}", u.opaque);
            assert_eq!(texts(&u).join(" "), line, "{line}");
            let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
            assert!(runs_nothing(&words[0], &words[1..]), "{line}");
        }
        for line in
            ["nice rm x", "command rm x", "watch ls", "sudo -e /etc/hosts", "fakeroot ls", "bash -c ls"]
        {
            let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
            assert!(!runs_nothing(&words[0], &words[1..]), "{line}");
        }
    }

    #[test]
    fn unparsable_wrappers_are_opaque() {
        for line in [
            "sudo -e /etc/hosts",
            "env -S 'rm -rf /'",
            "env --split-string=x",
            "time -o out ls",
            "sudo --frobnicate ls",
            "watch -x rm x",
            "fish -c 'rm x'",
            "bash --frobnicate -c ls",
        ] {
            let u = run(line);
            // A shell's unknown option still hands back its script, marked.
            let marked = matches!(u.opaque.last(), Some(Opacity::OpaqueWrapper(_) | Opacity::ShellOption(_)));
            assert!(marked, "{line}: {:?}", u.opaque);
        }
    }

    #[test]
    fn environment_assignments_are_kept() {
        let u = run("env GIT_PAGER=x LESSOPEN=y git log");
        assert_eq!(u.assignments, [("GIT_PAGER".into(), "x".into()), ("LESSOPEN".into(), "y".into())]);
        assert_eq!(texts(&u), ["git", "log"]);
    }

    #[test]
    fn xargs_inner_commands_get_run_time_arguments() {
        let u = run("xargs rm");
        assert!(u.opaque.contains(&Opacity::DynamicWord));
    }

    #[test]
    fn shells_with_a_command_string_hand_back_the_script() {
        let cases = [
            (vec!["bash", "-c", "ls -l"], "ls -l"),
            (vec!["bash", "-ec", "cd x && ls"], "cd x && ls"),
            (vec!["sh", "-e", "-c", "ls"], "ls"),
            (vec!["bash", "-o", "pipefail", "-c", "ls"], "ls"),
            (vec!["bash", "-ec", "git", "status"], "git"),
            (vec!["sudo", "sh", "-c", "rm x"], "rm x"),
        ];
        for (argv, script) in cases {
            let u = unwrap(argv.iter().map(|s| Word::literal(s)).collect(), Dialect::Bash);
            assert_eq!(u.scripts, [script], "{argv:?}");
            assert!(u.words.is_empty());
            assert_eq!(u.script_wrappers, u.wrappers);
        }
        let dynamic = run("bash -c $CMD");
        assert!(matches!(dynamic.opaque[..], [Opacity::OpaqueWrapper(_)]));
    }
}
