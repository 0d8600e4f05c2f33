//! Shell command analysis for the Layer 1 rule engine and the read-only pre-filter.
//!
//! An agent's shell tool receives one string, but the shell runs many things from it: every
//! segment of a compound line, the commands inside `$(…)`, the program behind `sudo` or
//! `bash -c '…'`. Rules written against program names (`Shell(rm:*)`) are only sound if they see
//! all of those, so [`analyze`] parses the line with a bash-compatible parser (`brush-parser`),
//! and returns every simple command it can find, after quote removal and wrapper unwrapping.
//! Whatever cannot be judged from the words alone — an expansion, a subshell, `eval`, a here-doc
//! fed to an interpreter — is recorded as an [`Opacity`] on the command, which the rule engine
//! floors at "ask". A line that does not parse is reported as such: the engine never allows it.
//!
//! [`read_only`] is the second consumer: it lets the pre-filter skip the checker only for lines it
//! can *prove* change nothing and reveal no secret. A false "read-only" is a security hole; a
//! missed one costs one checker call, so every doubt answers [`ReadOnly::NotProven`].
//!
//! ```text
//! line ─▶ guard (size, nesting) ─▶ brush parse ─▶ walk ─┬─▶ words (quote removal, expansions)
//!           │ parse error: best-effort split            ├─▶ wrappers (env, sudo, sh -c …, recursive)
//!           ▼                                           └─▶ substitutions, here-doc scripts (recursive)
//!      Analysis { commands, parse_error } ─▶ read_only (per-program argv rules, secrets, redirects)
//! ```

#![forbid(unsafe_code)]
// clippy.toml's disallowed methods are for the product; tests may set variables and sleep.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

mod braces;
mod builtins;
mod dialect;
pub mod effects;
mod evaluation;
mod fallback;
pub mod grammar;
mod guard;
mod interpreters;
mod parts;
pub mod place;
mod readonly;
pub mod secrets;
mod subscript;
mod walk;
mod word;
mod wrappers;
mod zsh;

#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod properties;

use std::fmt;

pub use dialect::{Dialect, UnknownDialect};
pub use readonly::{command_proof, read_only, read_only_at, ReadOnly};
pub use wrappers::runs_nothing;

/// What the shell would run for one line: every simple command, in source order (a command
/// before the commands inside its substitutions).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Analysis {
    /// Every simple command found, including those inside substitutions, subshells, function
    /// bodies and literal `sh -c` / `eval` strings. Not capped.
    pub commands: Vec<Command>,
    /// Set when the line (or part of it) does not parse: the engine must not allow it. The
    /// commands are then a best-effort split of the line, each marked opaque.
    pub parse_error: Option<String>,
}

/// One simple command (a segment of a compound line), after unwrapping wrappers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Command {
    /// Canonical program name: quotes and escapes removed (`\rm`, `r''m`, `"rm"` → `rm`), a path
    /// reduced to its basename (`/bin/rm` → `rm`). Empty for a bare assignment or redirection
    /// (`FOO=1`, `> file`). For an expansion in program position, the text as written (`$CMD`).
    pub program: String,
    /// The program was named by a path (`/bin/rm`, `./rm`), see [`Command::invoked_as`].
    pub path_qualified: bool,
    /// The program word as written, after quote removal (`/usr/bin/rg`).
    pub invoked_as: String,
    /// Literal words after quote removal; expansions are kept as written (`$HOME`).
    pub args: Vec<String>,
    /// `FOO=bar cmd` prefixes, including those given to `env` or `sudo`.
    pub assignments: Vec<(String, String)>,
    /// Redirections of this command, including those of an enclosing compound command
    /// (`{ ls; } > out` gives `ls` the `> out`).
    pub redirects: Vec<Redirect>,
    /// Why this segment cannot be judged from its words alone; non-empty ⇒ the rule engine floors
    /// it at "ask".
    pub opaque: Vec<Opacity>,
    /// Wrappers peeled off, outermost first (`sudo`, `env`, `bash` for `bash -c '…'`, …).
    pub wrappers: Vec<String>,
    /// Some argument has an unquoted glob or brace pattern (`*.txt`, `{a,b}`): the argv at run
    /// time may differ (file names can look like options).
    pub globs: bool,
    /// Some argument's glob could expand to a name that starts with `-` (`*`, `*.rs`, `?x`,
    /// `[ab]*`, `-*`): a file in the directory can become an option (`tree *` beside a file
    /// named `-o` writes). `src/*.rs`, `./*`, `a*` cannot. Implies [`Command::globs`].
    pub option_globs: bool,
    /// This command runs only if the command before it succeeded: it opens a pipeline that
    /// follows `&&` (`cd /x && cat y`: `cat` runs in `/x` or not at all).
    pub after_success: bool,
    /// The shell that runs this command: the line's ([`analyze_in`]), or the one a wrapper
    /// starts (`zsh -c '…'` under bash). Read-only proofs are judged for this shell.
    pub shell: Dialect,
}

impl Command {
    /// Program and arguments joined by single spaces, for rule matching like `git push:*`.
    ///
    /// ```
    /// let a = portcullis_shell::analyze("sudo /usr/bin/git   push -f");
    /// assert_eq!(a.commands[0].canonical(), "git push -f");
    /// ```
    pub fn canonical(&self) -> String {
        use fmt::Write;
        let mut out =
            String::with_capacity(self.program.len() + self.args.iter().map(|a| a.len() + 1).sum::<usize>());
        let _ = write!(out, "{self}");
        out
    }
}

/// The canonical line ([`Command::canonical`]), written without building a `String` (for
/// messages that name the command).
impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.program)?;
        let mut empty = self.program.is_empty();
        for arg in &self.args {
            if !empty {
                f.write_str(" ")?;
            }
            f.write_str(arg)?;
            empty &= arg.is_empty();
        }
        Ok(())
    }
}

/// One redirection: `2>&1`, `> out.txt`, `<<EOF`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The file descriptor written before the operator (`2` in `2>f`), if any.
    pub fd: Option<i32>,
    pub kind: RedirectKind,
    /// The target word after quote removal: a file name, a descriptor for `Dup*`, the body of a
    /// here-document, the word of a here-string.
    pub target: String,
}

/// The redirection operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// `<`
    Input,
    /// `>`
    Output,
    /// `>>`
    Append,
    /// `>|`
    Clobber,
    /// `<>`
    ReadWrite,
    /// `&>`
    OutputAndError,
    /// `&>>`
    AppendOutputAndError,
    /// `<&`
    DupInput,
    /// `>&` (a non-numeric target means a file: bash reads `>&out` as `&>out`)
    DupOutput,
    /// `<<` / `<<-`
    HereDoc,
    /// `<<<`
    HereString,
}

impl Redirect {
    /// Whether this redirection can create or change a file. Writes to `/dev/null`,
    /// `/dev/stdout` and `/dev/stderr` cannot; duplicating a descriptor (`2>&1`) cannot.
    pub fn writes_file(&self) -> bool {
        match self.kind {
            RedirectKind::Output
            | RedirectKind::Append
            | RedirectKind::Clobber
            | RedirectKind::ReadWrite
            | RedirectKind::OutputAndError
            | RedirectKind::AppendOutputAndError => !is_output_sink(&self.target),
            RedirectKind::DupOutput => !is_descriptor(&self.target),
            RedirectKind::Input
            | RedirectKind::DupInput
            | RedirectKind::HereDoc
            | RedirectKind::HereString => false,
        }
    }
}

/// Targets that discard or pass through output without touching a file.
fn is_output_sink(target: &str) -> bool {
    matches!(target, "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/fd/1" | "/dev/fd/2")
}

/// `1`, `2`, `-` (close): a descriptor, not a file name.
fn is_descriptor(target: &str) -> bool {
    target == "-" || (!target.is_empty() && target.bytes().all(|b| b.is_ascii_digit()))
}

/// Why a segment cannot be judged from its words alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opacity {
    /// `$(…)` or backticks in a word; the inner commands are returned as segments too.
    CommandSubstitution,
    /// `<(…)` or `>(…)`; the inner commands are returned as segments too.
    ProcessSubstitution,
    /// The command runs inside `( … )` or a coprocess.
    Subshell,
    /// The command runs inside `{ …; }`.
    BraceGroup,
    /// `eval`, `trap`, `alias` and other builtins that run a string as code (the string, when
    /// literal, is analysed and returned as segments).
    Eval,
    /// An interpreter reads its program from a here-document or here-string.
    HereDocToInterpreter,
    /// An interpreter reads its program from a pipe or an input redirection (`curl … | sh`).
    StdinToInterpreter,
    /// `$VAR`, `$((…))`, `~+`, extended globs or other expansions whose value is only known at
    /// run time; for plain globs in program position too.
    DynamicWord,
    /// A wrapper whose inner command cannot be recovered literally (`sudo -e`, `env -S`,
    /// `watch`, `bash -c "$x"`).
    OpaqueWrapper(String),
    /// The command is a function or alias defined on the same line, or runs inside one.
    Function,
    /// A shell option or start-up variable changes what the shell reads or how it splits words:
    /// `bash -i` / `-l` / `--rcfile` read files, `bash -k` and `set -k` turn words into
    /// environment variables, `shopt -s …` changes globbing, `BASH_ENV=` runs a file first.
    ShellOption(String),
    /// Anything else the analysis does not model (a line that does not parse, nesting too deep).
    Unsupported(String),
}

impl fmt::Display for Opacity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CommandSubstitution => f.write_str("command substitution"),
            Self::ProcessSubstitution => f.write_str("process substitution"),
            Self::Subshell => f.write_str("runs in a subshell"),
            Self::BraceGroup => f.write_str("runs in a brace group"),
            Self::Eval => f.write_str("evaluates a string as code"),
            Self::HereDocToInterpreter => f.write_str("here-document fed to an interpreter"),
            Self::StdinToInterpreter => f.write_str("interpreter reads its program from stdin"),
            Self::DynamicWord => f.write_str("expansion known only at run time"),
            Self::OpaqueWrapper(why) => write!(f, "opaque wrapper: {why}"),
            Self::Function => f.write_str("function or alias defined on the same line"),
            Self::ShellOption(why) => write!(f, "shell option: {why}"),
            Self::Unsupported(why) => write!(f, "unsupported: {why}"),
        }
    }
}

/// Analyse one shell command line. Never panics, whatever the input.
///
/// ```
/// use portcullis_shell::{analyze, Opacity};
///
/// let a = analyze("git status && echo $(rm -rf build)");
/// let programs: Vec<_> = a.commands.iter().map(|c| c.program.as_str()).collect();
/// assert_eq!(programs, ["git", "echo", "rm"]);
/// assert!(a.commands[1].opaque.contains(&Opacity::CommandSubstitution));
/// ```
pub fn analyze(line: &str) -> Analysis {
    analyze_in(line, Dialect::Bash)
}

/// Analyse one line as `shell` runs it: zsh's builtins and expansions differ from bash's
/// (`hash cat=/bin/sh` rebinds `cat` in zsh), and [`read_only`] proves only what was modelled
/// for each command's shell. Never panics.
///
/// ```
/// use portcullis_shell::{analyze_in, read_only, Dialect, ReadOnly};
///
/// let line = "hash cat=/bin/sh; cat notes.txt";
/// assert_eq!(read_only(&analyze_in(line, Dialect::Bash)), ReadOnly::Proven);
/// assert!(matches!(read_only(&analyze_in(line, Dialect::Zsh)), ReadOnly::NotProven(_)));
/// ```
pub fn analyze_in(line: &str, shell: Dialect) -> Analysis {
    walk::analyze_line(line, shell)
}
