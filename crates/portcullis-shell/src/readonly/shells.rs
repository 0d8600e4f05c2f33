//! What is proven for each shell: bash's proofs are the model; dash was checked to agree with
//! them; zsh (and `sh`, which may be zsh on macOS) get only what holds there too; ksh nothing.
//!
//! zsh differs where a proof looks: its builtins shadow programs (`printf` and `shift` evaluate
//! arithmetic, `hash cat=/bin/sh` rebinds, the `zsh/files` and `zsh/stat` modules bring their
//! own `rm`, `stat` …), its globs run code through qualifiers (`*(e:'cmd':)`) and recurse
//! (`**/`), `=cmd` expands to a path and `=(cmd)` runs one, `~name` is any named directory.
//! So a zsh command is proven only if its program is one of the few builtins modelled here or
//! not a zsh builtin at all (then the per-program rules, written for the external program,
//! apply), with no glob, no `=word` and no `~name`.

use crate::{Command, Dialect};

/// zsh builtins proven read-only: they print or do nothing, whatever their arguments.
const ZSH_MODELLED: &[&str] = &["echo", "pwd", "true", "false", ":"];

/// Every builtin of zsh 5.9, its bundled modules included (`zmodload` of each, then
/// `${(k)builtins}`): a program of this name may not be the external one.
const ZSH_BUILTINS: &[&str] = &[
    "-",
    ".",
    ":",
    "[",
    "alias",
    "autoload",
    "bg",
    "bindkey",
    "break",
    "builtin",
    "bye",
    "cap",
    "cd",
    "chdir",
    "chgrp",
    "chmod",
    "chown",
    "clone",
    "command",
    "compadd",
    "comparguments",
    "compcall",
    "compctl",
    "compdescribe",
    "compfiles",
    "compgroups",
    "compquote",
    "compset",
    "comptags",
    "comptry",
    "compvalues",
    "continue",
    "declare",
    "dirs",
    "disable",
    "disown",
    "echo",
    "echotc",
    "echoti",
    "emulate",
    "enable",
    "eval",
    "example",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "float",
    "functions",
    "getcap",
    "getln",
    "getopts",
    "hash",
    "history",
    "integer",
    "jobs",
    "kill",
    "let",
    "limit",
    "ln",
    "local",
    "log",
    "logout",
    "mkdir",
    "mv",
    "noglob",
    "pcre_compile",
    "pcre_match",
    "pcre_study",
    "popd",
    "print",
    "printf",
    "private",
    "pushd",
    "pushln",
    "pwd",
    "r",
    "read",
    "readonly",
    "rehash",
    "return",
    "rm",
    "rmdir",
    "sched",
    "set",
    "setcap",
    "setopt",
    "shift",
    "source",
    "stat",
    "strftime",
    "suspend",
    "sync",
    "syserror",
    "sysopen",
    "sysread",
    "sysseek",
    "syswrite",
    "test",
    "times",
    "trap",
    "true",
    "ttyctl",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unfunction",
    "unhash",
    "unlimit",
    "unset",
    "unsetopt",
    "vared",
    "wait",
    "whence",
    "where",
    "which",
    "zcompile",
    "zcurses",
    "zdelattr",
    "zformat",
    "zgdbmpath",
    "zgetattr",
    "zle",
    "zlistattr",
    "zmodload",
    "zparseopts",
    "zprof",
    "zpty",
    "zregexparse",
    "zselect",
    "zsetattr",
    "zsocket",
    "zstat",
    "zstyle",
    "zsystem",
    "ztcp",
    "ztie",
    "zuntie",
];

/// Whether `command`, judged read-only with bash's rules, is proven for the shell that runs it.
pub(super) fn check(command: &Command) -> Result<(), String> {
    match command.shell {
        Dialect::Bash | Dialect::Dash => Ok(()),
        Dialect::Ksh => Err("ksh's builtins and expansions are not modelled".into()),
        Dialect::Zsh | Dialect::Posix => zsh_like(command),
    }
}

fn zsh_like(command: &Command) -> Result<(), String> {
    let shell = command.shell;
    let program = command.program.as_str();
    let builtin = ZSH_BUILTINS.contains(&program) || program.starts_with("zf_");
    if builtin && !ZSH_MODELLED.contains(&program) {
        return Err(format!("{program} is a {shell} builtin that is not modelled"));
    }
    if command.globs {
        return Err(format!("{shell} globbing (qualifiers run code, `**` recurses) is not modelled"));
    }
    let words = command.args.iter().chain(command.redirects.iter().map(|r| &r.target));
    for word in words {
        if word.starts_with('=') {
            return Err(format!("{word}: {shell} expands `=name` to a program's path (`=(cmd)` runs it)"));
        }
        if word.starts_with('~') && !(word == "~" || word.starts_with("~/")) {
            return Err(format!("{word}: {shell} reads `~name` as a named directory"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::{analyze_in, read_only, Dialect, ReadOnly};

    fn proven(line: &str, shell: Dialect) -> bool {
        read_only(&analyze_in(line, shell)) == ReadOnly::Proven
    }

    #[test]
    fn zsh_proves_external_readers_and_the_modelled_builtins_only() {
        let proven_lines = [
            "ls -la",
            "git status",
            "cat README.md | head -5",
            "echo hi",
            "pwd",
            "true",
            "grep -n x src/a.rs",
        ];
        for line in proven_lines {
            assert!(proven(line, Dialect::Bash), "{line} (bash)");
            assert!(proven(line, Dialect::Zsh), "{line} (zsh)");
            assert!(proven(line, Dialect::Posix), "{line} (sh)");
        }
        let refused = [
            "printf %d 1",
            "test -f x",
            "[ -f x ]",
            "hash git",
            "cd src",
            "type ls",
            "command -v ls",
            "stat x",
            "rm --help",
            "ls *.rs",
            "ls src/*.rs",
            "cat =ls",
            "cat ~evil/x",
            "hash cat=/bin/sh; cat -c 'touch x'",
        ];
        for line in refused {
            assert!(!proven(line, Dialect::Zsh), "{line} (zsh)");
            assert!(!proven(line, Dialect::Posix), "{line} (sh)");
        }
    }

    #[test]
    fn ksh_is_never_proven_and_dash_keeps_bash_proofs() {
        for line in ["ls", "echo hi", "git status"] {
            assert!(!proven(line, Dialect::Ksh), "{line}");
            assert!(proven(line, Dialect::Dash), "{line}");
        }
    }

    #[test]
    fn a_shell_started_on_the_line_is_judged_as_itself() {
        assert!(!proven("zsh -c 'printf %d 1'", Dialect::Bash));
        assert!(proven("bash -c 'printf %d 1'", Dialect::Zsh));
        assert!(!proven("zsh -c 'hash cat=/bin/sh; cat x'", Dialect::Bash));
        assert!(proven("bash -c 'hash cat=/bin/sh; cat x'", Dialect::Zsh));
        assert!(!proven("sh -c 'ls *.rs'", Dialect::Bash));
    }
}
