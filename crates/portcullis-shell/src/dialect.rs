//! Which shell runs a line: the same bytes mean different things to bash, zsh and dash.
//!
//! `hash cat=/bin/sh; cat -c 'touch x'` is a failed lookup and a `cat` to bash, and a rebinding
//! of `cat` to `sh` to zsh (macOS's default shell, so what an agent's shell tool runs there).
//! zsh's `printf %d` and `shift` evaluate arithmetic (and with it array subscripts that run
//! commands), its glob qualifiers run code (`ls *(e:'touch x':)`), `=(cmd)` runs `cmd`. Every
//! command of an [`crate::Analysis`] records the shell that runs it, and proofs are given only
//! for what was modelled for that shell: see docs/SECURITY.md, "Shells proven".

use std::fmt;
use std::str::FromStr;

/// A shell whose meaning of a line the analysis models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Dialect {
    /// GNU bash (what `analyze` assumes): every read-only proof is modelled and tested here.
    #[default]
    Bash,
    /// zsh: proofs only for external programs and `echo`, `pwd`, `true`, `false`, `:`, without
    /// globs; commands that rebind names make every later command opaque.
    Zsh,
    /// dash (Debian's `/bin/sh`): bash's proofs, checked against real dash.
    Dash,
    /// `sh` of unknown make (dash on Debian, bash in POSIX mode or, by choice, zsh on macOS):
    /// only what holds in all of them.
    Posix,
    /// ksh93 / mksh: analysed like bash for deny rules, never proven read-only (not modelled).
    Ksh,
}

impl Dialect {
    /// The name used in configuration (`shell: zsh`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Bash => "bash",
            Self::Zsh => "zsh",
            Self::Dash => "dash",
            Self::Posix => "sh",
            Self::Ksh => "ksh",
        }
    }

    /// The dialect of a shell program, by name or path (`/bin/zsh`, `bash`, `-zsh` as a login
    /// shell's argv0). `None` for anything else (`fish`, `tcsh`, empty).
    ///
    /// ```
    /// use portcullis_shell::Dialect;
    ///
    /// assert_eq!(Dialect::of_program("/bin/zsh"), Some(Dialect::Zsh));
    /// assert_eq!(Dialect::of_program("sh"), Some(Dialect::Posix));
    /// assert_eq!(Dialect::of_program("fish"), None);
    /// ```
    pub fn of_program(program: &str) -> Option<Self> {
        let base = program.rsplit('/').next().unwrap_or(program);
        match base.trim_start_matches('-') {
            "bash" | "rbash" => Some(Self::Bash),
            "zsh" => Some(Self::Zsh),
            "dash" | "ash" => Some(Self::Dash),
            "sh" => Some(Self::Posix),
            "ksh" | "ksh93" | "mksh" | "pdksh" | "lksh" => Some(Self::Ksh),
            _ => None,
        }
    }

    /// Every dialect, for tables and messages.
    pub const ALL: [Dialect; 5] = [Self::Bash, Self::Zsh, Self::Dash, Self::Posix, Self::Ksh];
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A shell name configuration does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown shell {0:?} (expected one of: bash, zsh, dash, sh, ksh)")]
pub struct UnknownDialect(pub String);

impl FromStr for Dialect {
    type Err = UnknownDialect;

    /// Exactly the configuration names: `bash`, `zsh`, `dash`, `sh`, `ksh`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|d| d.as_str() == s).ok_or_else(|| UnknownDialect(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configuration_names_round_trip_and_others_are_refused() {
        for dialect in Dialect::ALL {
            assert_eq!(dialect.as_str().parse::<Dialect>(), Ok(dialect));
        }
        for bad in ["", "Bash", "fish", "/bin/zsh", "bash "] {
            assert!(bad.parse::<Dialect>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn shell_programs_name_their_dialect() {
        let cases = [
            ("/bin/bash", Some(Dialect::Bash)),
            ("/usr/local/bin/zsh", Some(Dialect::Zsh)),
            ("-zsh", Some(Dialect::Zsh)),
            ("dash", Some(Dialect::Dash)),
            ("/bin/sh", Some(Dialect::Posix)),
            ("mksh", Some(Dialect::Ksh)),
            ("/usr/bin/fish", None),
            ("", None),
        ];
        for (program, want) in cases {
            assert_eq!(Dialect::of_program(program), want, "{program}");
        }
    }
}
