//! The read-only pre-filter: prove that a line changes nothing and reveals no secret, or say
//! why not.
//!
//! A proof needs every command of the line to pass every check below; the first failure is the
//! reason given. The per-program rules live in [`programs`] (with [`git`], [`sed`] and
//! [`scripts`] for the programs that are languages of their own); everything that applies to
//! all programs alike is here:
//!
//! - no opacity, except a brace group (`{ a; b; }` runs `a; b` in the current shell, nothing
//!   more), and no parse error;
//! - only shell-level wrappers (`command`, `builtin`, `exec`, literal `sh -c`): `sudo` elevates,
//!   `timeout`/`nice`/`nohup`/`stdbuf`/`env` are programs with side channels of their own
//!   (`nohup.out`, `LD_PRELOAD`), `xargs` takes its arguments from stdin;
//! - no variable assignment except locale, time zone and colour settings: `PAGER`, `GIT_*`,
//!   `LD_PRELOAD`, `BASH_ENV`, `PATH`, `IFS` … all make programs run something else;
//! - no redirection that writes a file (`/dev/null`, `/dev/stdout`, `/dev/stderr` and descriptor
//!   duplication like `2>&1` are not writes), no `<>`, no `/dev/tcp` input;
//! - a path-qualified program only from a system directory (`/usr/bin/rg`, not `./rg`);
//! - no word naming a secret (`~/.ssh`, `.env`, `*.pem`, `/etc/shadow` …), every path judged in
//!   its normal form (`//proc/1/environ`, `/etc/./shadow`), and no glob that could expand to one
//!   (`~/.ss?`, `id_*`) or that lists home or root (`~/*`);
//! - no option that takes file names from a file (`--files0-from`): those files are not seen;
//! - no control or invisible characters (`\r`, U+2029, zero-width, bidi overrides): what a
//!   reviewer reads must be what runs.

mod effects_proof;
mod flags;
mod git;
mod paths;
mod programs;
mod scripts;
mod secrets;
mod sed;
mod shells;

use super::effects::CommandEffects;
use super::place::Base;
use super::{Analysis, Command, Opacity, RedirectKind};

/// The pre-filter's answer for one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOnly {
    /// Every command provably only reads, and none reads a secret: the checker may be skipped.
    Proven,
    /// Not proven; the reason names the first command and check that failed.
    NotProven(String),
}

/// Proven only if the line parsed and every command is proven read-only, each judged for the
/// shell that runs it ([`Command::shell`]: bash for [`crate::analyze`], the given one for
/// [`crate::analyze_in`], the started one for `zsh -c '…'`), starting in the tool's unplaced
/// start directory with an unknown `HOME` ([`read_only_at`]).
///
/// ```
/// use portcullis_shell::{analyze, read_only, ReadOnly};
///
/// assert_eq!(read_only(&analyze("git log --oneline | head -5")), ReadOnly::Proven);
/// assert!(matches!(read_only(&analyze("cat ~/.ssh/id_rsa")), ReadOnly::NotProven(_)));
/// assert!(matches!(read_only(&analyze("ls > listing.txt")), ReadOnly::NotProven(_)));
/// ```
pub fn read_only(analysis: &Analysis) -> ReadOnly {
    read_only_at(analysis, &Base::start(), None)
}

/// [`read_only`] for a line that starts in `start` with `HOME` = `home` when known: every
/// command's effects are placed from there.
pub fn read_only_at(analysis: &Analysis, start: &Base, home: Option<&str>) -> ReadOnly {
    if let Some(error) = &analysis.parse_error {
        return ReadOnly::NotProven(format!("does not parse: {error}"));
    }
    if analysis.commands.is_empty() {
        return ReadOnly::NotProven("no command".into());
    }
    let effects = crate::effects::effects(analysis, start, home);
    for (command, fx) in analysis.commands.iter().zip(&effects) {
        if let Err(why) = proof(command, fx, home) {
            return ReadOnly::NotProven(format!("`{}`: {why}", command.canonical()));
        }
    }
    ReadOnly::Proven
}

/// Whether one command, given its effects ([`crate::effects::effects`] of its line), is proven
/// read-only: what [`read_only_at`] asks of each command of a line that parses. For judging a
/// line's commands one by one without copying them.
///
/// ```
/// use portcullis_shell::{analyze, command_proof, effects::effects, place::Base};
///
/// let a = analyze("git status && rm -rf build");
/// let fx = effects(&a, &Base::start(), None);
/// let proven: Vec<bool> =
///     a.commands.iter().zip(&fx).map(|(c, e)| command_proof(c, e, None).is_ok()).collect();
/// assert_eq!(proven, [true, false]);
/// ```
pub fn command_proof(command: &Command, fx: &CommandEffects, home: Option<&str>) -> Result<(), String> {
    proof(command, fx, home)
}

fn proof(command: &Command, fx: &CommandEffects, home: Option<&str>) -> Result<(), String> {
    judge(command)?;
    effects_proof::check(command, fx, home)
}

/// Wrappers that add nothing but a shell-level indirection.
const TRANSPARENT_WRAPPERS: &[&str] =
    &["command", "builtin", "exec", "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"];

/// Directories a path-qualified program may come from.
const SYSTEM_DIRS: &[&str] =
    &["/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin", "/opt/homebrew/bin"];

fn judge(command: &Command) -> Result<(), String> {
    if let Some(o) = command.opaque.iter().find(|o| **o != Opacity::BraceGroup) {
        return Err(o.to_string());
    }
    if let Some(w) = command.wrappers.iter().find(|w| !TRANSPARENT_WRAPPERS.contains(&w.as_str())) {
        return Err(format!("runs under {w}"));
    }
    if let Some((name, _)) = command.assignments.iter().find(|(name, _)| !is_harmless_variable(name)) {
        return Err(format!("sets {name}, which can change what runs"));
    }
    // Locale and zone names are file names below the system's data directories: glibc joins
    // `LANGUAGE=../../tmp/x` and `TZ=/root/.ssh/id_rsa` without checking.
    if let Some((name, value)) = command.assignments.iter().find(|(_, value)| !is_plain_name(value)) {
        return Err(format!("sets {name}={value}, which names a file"));
    }
    redirects(command)?;
    if command.program.is_empty() {
        return Err("no program".into());
    }
    if command.path_qualified {
        let dir = command.invoked_as.rsplit_once('/').map_or("", |(dir, _)| dir);
        if !SYSTEM_DIRS.contains(&dir) {
            return Err(format!("runs {} from outside the system directories", command.invoked_as));
        }
    }
    let texts = std::iter::once(&command.program)
        .chain(&command.args)
        .chain(command.redirects.iter().map(|r| &r.target))
        .chain(command.assignments.iter().map(|(_, value)| value));
    if let Some(c) = texts.flat_map(|t| t.chars()).find(|&c| is_deceptive(c)) {
        return Err(format!("contains the invisible or control character {c:?}"));
    }
    // Arguments and input files are what a reader opens; here-document bodies are data.
    let paths = command
        .args
        .iter()
        .chain(command.redirects.iter().filter(|r| r.kind == RedirectKind::Input).map(|r| &r.target));
    for path in paths {
        if let Some(secret) = secrets::named_in(path) {
            return Err(format!("names a secret ({secret})"));
        }
        if command.globs && paths::is_glob(path) {
            if let Some(secret) = secrets::reachable_by_glob(path) {
                return Err(format!("a glob could reach a secret ({secret})"));
            }
        }
    }
    // `wc`, `du`, `sort` … `--files0-from=F` read the names of the files to open from F.
    if let Some(a) = command.args.iter().find(|a| a.starts_with("--files0")) {
        return Err(format!("{a} reads file names this check cannot see"));
    }
    let Some(policy) = programs::lookup(&command.program) else {
        return Err(format!("{} is not a known read-only program", command.program));
    };
    // A glob whose first character could match `-` hands the program options nobody checked
    // (`tree *` beside a file named `-o` writes it).
    let allowed = match policy.globs {
        programs::Globs::No => !command.globs,
        programs::Globs::Names => !command.option_globs,
        programs::Globs::Options => true,
    };
    if !allowed {
        return Err("a glob could expand to an option".into());
    }
    (policy.check)(&command.args)?;
    // The rules above are bash's; the shell that runs the command must agree with them.
    shells::check(command)
}

fn redirects(command: &Command) -> Result<(), String> {
    for r in &command.redirects {
        if r.writes_file() {
            return Err(format!("writes {}", r.target));
        }
        match r.kind {
            RedirectKind::ReadWrite => return Err(format!("opens {} for writing", r.target)),
            RedirectKind::DupInput if !r.target.bytes().all(|b| b.is_ascii_digit() || b == b'-') => {
                return Err(format!("reads {}", r.target))
            }
            RedirectKind::Input if r.target.starts_with("/dev/tcp/") || r.target.starts_with("/dev/udp/") => {
                return Err(format!("connects to {}", r.target))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Locale, time zone and colour settings change formatting only.
fn is_harmless_variable(name: &str) -> bool {
    matches!(
        name,
        "LANG" | "LANGUAGE" | "TZ" | "NO_COLOR" | "CLICOLOR" | "CLICOLOR_FORCE" | "COLUMNS" | "LINES"
    ) || (name.starts_with("LC_") && name[3..].bytes().all(|b| b.is_ascii_uppercase()))
}

/// A locale or zone name: letters, digits and `_.@+-`, `:` lists and `/` regions
/// (`America/New_York`), never absolute, never climbing (`..`), never `:`-prefixed (a TZ path).
fn is_plain_name(value: &str) -> bool {
    value.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.@+-:/".contains(&b))
        && !value.starts_with(['/', ':'])
        && !value.split([':', '/']).any(|c| c == ".." || c == ".")
}

/// Characters that display differently from how the shell reads them.
fn is_deceptive(c: char) -> bool {
    (c.is_control() && c != '\t' && c != '\n')
        || (c.is_whitespace() && c != ' ' && c != '\t' && c != '\n')
        || matches!(c,
            '\u{00ad}' | '\u{061c}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

#[cfg(test)]
mod tests;
