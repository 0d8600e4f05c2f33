//! The option grammars of the wrappers: which options take a value, which make the program
//! not a wrapper at all (`command -v`), which make its inner command unrecoverable (`sudo -e`).

use super::Peel;
use crate::word::Word;

/// The option grammar of one wrapper.
pub(super) struct Spec {
    /// Short options without a value.
    flags: &'static str,
    /// Short options with a value (attached or next argument).
    valued: &'static str,
    /// Short options whose value may only be attached (`xargs -i{}`).
    optional: &'static str,
    /// Short options that make the program not a wrapper.
    terminal: &'static str,
    /// Short options that make the inner command unrecoverable.
    opaque: &'static str,
    long_flags: &'static [&'static str],
    long_valued: &'static [&'static str],
    /// Long options whose value may only follow `=`.
    long_optional: &'static [&'static str],
    long_terminal: &'static [&'static str],
    long_opaque: &'static [&'static str],
    /// `-5` is an option (`nice -5`).
    numeric: bool,
    /// Operands to skip before the inner program (`timeout DURATION cmd`).
    positionals: usize,
    /// `NAME=value` words may precede the inner program.
    assignments: bool,
    /// The inner command gets arguments at run time.
    dynamic_args: bool,
}

pub(super) const NONE: Spec = Spec {
    flags: "",
    valued: "",
    optional: "",
    terminal: "",
    opaque: "",
    long_flags: &[],
    long_valued: &[],
    long_optional: &[],
    long_terminal: &["help", "version"],
    long_opaque: &[],
    numeric: false,
    positionals: 0,
    assignments: false,
    dynamic_args: false,
};

pub(super) const ENV: Spec = Spec {
    flags: "i0v",
    valued: "uC",
    opaque: "S",
    long_flags: &["ignore-environment", "null", "debug"],
    long_valued: &["unset", "chdir"],
    long_optional: &["default-signal", "ignore-signal", "block-signal"],
    long_terminal: &["help", "version", "list-signal-handling"],
    long_opaque: &["split-string"],
    assignments: true,
    ..NONE
};
pub(super) const COMMAND: Spec = Spec { flags: "p", terminal: "vV", ..NONE };
pub(super) const BUILTIN: Spec = NONE;
pub(super) const EXEC: Spec = Spec { flags: "cl", valued: "a", ..NONE };
pub(super) const NICE: Spec = Spec { valued: "n", long_valued: &["adjustment"], numeric: true, ..NONE };
pub(super) const NOHUP: Spec = NONE;
pub(super) const TIME: Spec = Spec {
    flags: "pavq",
    valued: "f",
    opaque: "o",
    long_flags: &["portability", "verbose", "quiet", "append"],
    long_valued: &["format"],
    long_opaque: &["output"],
    ..NONE
};
pub(super) const TIMEOUT: Spec = Spec {
    flags: "v",
    valued: "ks",
    long_flags: &["preserve-status", "foreground", "verbose"],
    long_valued: &["kill-after", "signal"],
    positionals: 1,
    ..NONE
};
pub(super) const STDBUF: Spec = Spec { valued: "ioe", long_valued: &["input", "output", "error"], ..NONE };
pub(super) const IONICE: Spec = Spec {
    flags: "t",
    valued: "cn",
    terminal: "pPu",
    long_flags: &["ignore"],
    long_valued: &["class", "classdata"],
    long_terminal: &["pid", "pgid", "uid", "help", "version"],
    ..NONE
};
pub(super) const XARGS: Spec = Spec {
    flags: "0prtxo",
    valued: "adEILnPs",
    optional: "eil",
    long_flags: &["null", "interactive", "no-run-if-empty", "verbose", "exit", "open-tty"],
    long_valued: &["arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"],
    long_optional: &["replace", "max-lines", "eof"],
    long_terminal: &["help", "version", "show-limits"],
    dynamic_args: true,
    ..NONE
};
pub(super) const SUDO: Spec = Spec {
    flags: "AbEHKknPSsiB",
    valued: "ugpCDrtTUR",
    terminal: "lvVh",
    opaque: "e",
    long_flags: &[
        "askpass",
        "background",
        "bell",
        "login",
        "non-interactive",
        "preserve-groups",
        "remove-timestamp",
        "reset-timestamp",
        "set-home",
        "shell",
        "stdin",
    ],
    long_valued: &[
        "user",
        "group",
        "prompt",
        "chdir",
        "close-from",
        "role",
        "type",
        "command-timeout",
        "other-user",
        "host",
        "chroot",
    ],
    long_optional: &["preserve-env"],
    long_terminal: &["list", "validate", "version", "help"],
    long_opaque: &["edit"],
    assignments: true,
    ..NONE
};
pub(super) const DOAS: Spec = Spec { flags: "ns", valued: "u", terminal: "L", opaque: "C", ..NONE };
pub(super) const BUSYBOX: Spec = Spec { long_terminal: &["help", "list", "list-full", "install"], ..NONE };

impl Spec {
    pub(super) fn peel(&self, name: &str, args: &[Word]) -> Peel {
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            if !arg.is_literal() && arg.text.starts_with('-') {
                return Peel::Opaque(format!("{name} with a non-literal option"));
            }
            let t = arg.text.as_str();
            if t == "--" {
                i += 1;
                break;
            }
            if t == "-" && name == "env" {
                i += 1;
                continue;
            }
            if !t.starts_with('-') || t == "-" {
                break;
            }
            if self.numeric && t[1..].bytes().all(|b| b.is_ascii_digit()) {
                i += 1;
                continue;
            }
            let step = if let Some(long) = t.strip_prefix("--") {
                self.long(name, long, args.get(i + 1))
            } else {
                self.short(name, &t[1..], args.get(i + 1))
            };
            match step {
                Ok(consumed) => i += consumed,
                Err(stop) => return stop,
            }
        }
        let mut assignments = Vec::new();
        if self.assignments {
            while let Some(pair) = args.get(i).and_then(as_assignment) {
                assignments.push(pair);
                i += 1;
            }
        }
        i += self.positionals;
        match args.get(i) {
            None => Peel::Terminal,
            Some(_) => Peel::Inner { skip: i, assignments, dynamic_args: self.dynamic_args },
        }
    }

    /// One short-option cluster; returns how many arguments it used.
    fn short(&self, name: &str, cluster: &str, next: Option<&Word>) -> Result<usize, Peel> {
        for (at, c) in cluster.char_indices() {
            let rest = &cluster[at + c.len_utf8()..];
            if self.flags.contains(c) {
                continue;
            }
            if self.optional.contains(c) {
                return Ok(1);
            }
            if self.valued.contains(c) {
                if !rest.is_empty() {
                    return Ok(1);
                }
                return match next {
                    Some(w) if w.is_literal() => Ok(2),
                    _ => Err(Peel::Opaque(format!("{name} -{c} without a literal value"))),
                };
            }
            if self.terminal.contains(c) {
                return Err(Peel::Terminal);
            }
            if self.opaque.contains(c) {
                return Err(Peel::Opaque(format!("{name} -{c}")));
            }
            return Err(Peel::Opaque(format!("{name} option -{c}")));
        }
        Ok(1)
    }

    fn long(&self, name: &str, long: &str, next: Option<&Word>) -> Result<usize, Peel> {
        let (key, value) = match long.split_once('=') {
            Some((k, _)) => (k, true),
            None => (long, false),
        };
        if self.long_flags.contains(&key) && !value {
            return Ok(1);
        }
        if self.long_optional.contains(&key) {
            return Ok(1);
        }
        if self.long_valued.contains(&key) {
            if value {
                return Ok(1);
            }
            return match next {
                Some(w) if w.is_literal() => Ok(2),
                _ => Err(Peel::Opaque(format!("{name} --{key} without a literal value"))),
            };
        }
        if self.long_terminal.contains(&key) {
            return Err(Peel::Terminal);
        }
        if self.long_opaque.contains(&key) {
            return Err(Peel::Opaque(format!("{name} --{key}")));
        }
        Err(Peel::Opaque(format!("{name} option --{key}")))
    }
}

/// `NAME=value` with a valid shell name.
fn as_assignment(word: &Word) -> Option<(String, String)> {
    let (name, value) = word.text.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    let valid =
        (first.is_ascii_alphabetic() || first == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then(|| (name.to_string(), value.to_string()))
}
