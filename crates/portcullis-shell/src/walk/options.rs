//! Commands that change how the shell reads the rest of the line, and variables that make a
//! shell run code before its script: `set -k; git log GIT_PAGER=…` sets `GIT_PAGER`,
//! `shopt -s extglob` changes globbing, `BASH_ENV=x bash -c …` runs `x` first,
//! `BASH_CMDS[ls]=./evil; ls` runs `./evil`.

use crate::word::Word;
use crate::Dialect;

/// Variables a shell reads at start-up, or that change what a name or a word means to it.
pub(super) fn is_startup_variable(name: &str) -> bool {
    let base = name.split('[').next().unwrap_or(name);
    matches!(
        base,
        "BASH_ENV"
            | "ENV"
            | "ZDOTDIR"
            | "SHELLOPTS"
            | "BASHOPTS"
            | "PS0"
            | "PS1"
            | "PS2"
            | "PS3"
            | "PS4"
            | "PROMPT_COMMAND"
            | "BASH_XTRACEFD"
            | "GLOBIGNORE"
            | "POSIXLY_CORRECT"
            | "EXECIGNORE"
            | "BASH_LOADABLES_PATH"
            | "BASH_CMDS"
            | "BASH_ALIASES"
            | "BASH_COMPAT"
            | "HISTFILE"
            | "INPUTRC"
    )
}

/// Variables whose assignment changes which program a later name runs, in `shell`: `PATH`
/// everywhere; in zsh also `path`, and the special hashes `commands`, `aliases`, `functions`,
/// `builtins`, `options` (`commands[cat]=/bin/sh`, `options[extendedglob]=on`).
pub(super) fn rebinds_names(name: &str, shell: Dialect) -> bool {
    let base = name.split(['[', '+']).next().unwrap_or(name);
    base == "PATH"
        || (shell == Dialect::Zsh
            && matches!(
                base,
                "path"
                    | "commands"
                    | "aliases"
                    | "galiases"
                    | "saliases"
                    | "dis_aliases"
                    | "dis_galiases"
                    | "dis_saliases"
                    | "functions"
                    | "dis_functions"
                    | "functions_source"
                    | "builtins"
                    | "dis_builtins"
                    | "reswords"
                    | "dis_reswords"
                    | "options"
                    | "fpath"
                    | "FPATH"
                    | "module_path"
                    | "MODULE_PATH"
                    | "nameddirs"
                    | "userdirs"
                    | "NULLCMD"
                    | "READNULLCMD"
                    | "zsh_eval_context"
            ))
}

/// zsh builtins that change what a later word means: a name's command (`hash cat=/bin/sh`,
/// `disable`, `alias`), the options that govern parsing and globbing (`setopt`, `emulate`),
/// loaded modules (which bring builtins of their own) and function definitions.
fn zsh_rebinds(program: &str, texts: &[&str]) -> Option<String> {
    let declares =
        |t: &&str| t.starts_with("-f") || rebinds_names(t.split('=').next().unwrap_or(t), Dialect::Zsh);
    let rebinds = match program {
        "hash" => texts.iter().any(|t| t.starts_with('-') || t.contains('=')),
        "unhash" | "alias" | "unalias" | "disable" | "enable" | "zmodload" | "autoload" | "functions"
        | "unfunction" | "setopt" | "unsetopt" | "emulate" => !texts.is_empty(),
        "typeset" | "declare" | "local" | "export" | "readonly" | "integer" | "float" | "private" => {
            texts.iter().any(declares)
        }
        _ => false,
    };
    rebinds.then(|| format!("zsh {program} {} changes what later names run", texts.join(" ")))
}

/// `set` options that change nothing about which commands run or with which words.
const HARMLESS_SET: &str = "euxvfC";
const HARMLESS_SET_O: &[&str] =
    &["errexit", "nounset", "pipefail", "noglob", "xtrace", "verbose", "noclobber"];

/// Why `words` (a command, program first) changes how later commands on the line are read
/// by `shell`.
pub(super) fn changes_later_words(words: &[Word], shell: Dialect) -> Option<String> {
    let (program, args) = words.split_first()?;
    if program.dynamic {
        return None;
    }
    let texts: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    if shell == Dialect::Zsh {
        if let Some(why) = zsh_rebinds(&program.text, &texts) {
            return Some(why);
        }
    }
    match program.text.as_str() {
        "set" => set_options(args),
        "shopt" if texts.iter().any(|t| t.starts_with('-') && t.contains(['s', 'u', 'o'])) => {
            Some(format!("shopt {}", texts.join(" ")))
        }
        "enable" if texts.iter().any(|t| !matches!(*t, "-p" | "-a" | "-s")) => {
            Some(format!("enable {}", texts.join(" ")))
        }
        "hash" if texts.iter().any(|t| t.starts_with('-') && t.contains('p')) => {
            Some("hash -p binds a name to another program".into())
        }
        "export" | "declare" | "typeset" | "readonly" | "local" => texts
            .iter()
            .map(|t| t.split('=').next().unwrap_or(t))
            .find(|name| is_startup_variable(name) || rebinds_names(name, shell))
            .map(|name| format!("{} {name}", program.text)),
        _ => None,
    }
}

fn set_options(args: &[Word]) -> Option<String> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let t = arg.text.as_str();
        i += 1;
        if !arg.is_literal() {
            return Some(format!("set {t}"));
        }
        if t == "--" || t == "-" || !t.starts_with(['-', '+']) {
            return None; // positional parameters from here on
        }
        for c in t[1..].chars() {
            if c == 'o' {
                let value = args.get(i).map(|w| w.text.as_str());
                i += 1;
                match value {
                    None => return None, // `set -o` prints the options
                    Some(v) if HARMLESS_SET_O.contains(&v) => {}
                    Some(v) => return Some(format!("set {}o {v}", &t[..1])),
                }
            } else if !HARMLESS_SET.contains(c) {
                return Some(format!("set {}{c}", &t[..1]));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::{analyze, Opacity};

    fn marked(line: &str) -> Vec<bool> {
        analyze(line)
            .commands
            .iter()
            .map(|c| c.opaque.iter().any(|o| matches!(o, Opacity::ShellOption(_))))
            .collect()
    }

    #[test]
    fn options_set_on_the_line_mark_every_later_command() {
        let cases: &[(&str, &[bool])] = &[
            ("set -k; git log GIT_PAGER=x", &[false, true]),
            ("set -o keyword && ls", &[false, true]),
            ("set +B; ls {a,b}", &[false, true]),
            ("set -a; ls", &[false, true]),
            ("set -o posix; ls", &[false, true]),
            ("shopt -s extglob; ls", &[false, true]),
            ("shopt -u dotglob; ls", &[false, true]),
            ("enable -n echo; echo x", &[false, true]),
            ("enable -f ./x.so x; ls", &[false, true]),
            ("hash -p ./evil ls; ls", &[false, true]),
            ("export BASH_ENV=./x; bash -c ls", &[false, true]),
            ("declare -x ENV=x; sh -c ls", &[false, true]),
            // Harmless ones leave the line alone.
            ("set -euo pipefail; ls", &[false, false]),
            ("set -x; ls", &[false, false]),
            ("set -- a b; ls", &[false, false]),
            ("set -o; ls", &[false, false]),
            ("shopt extglob; ls", &[false, false]),
            ("shopt -p; ls", &[false, false]),
            ("export FOO=1; ls", &[false, false]),
            ("enable; ls", &[false, false]),
        ];
        for (line, want) in cases {
            assert_eq!(marked(line), *want, "{line}");
        }
    }

    #[test]
    fn start_up_variables_mark_the_command_and_the_shell_it_starts() {
        let cases: &[(&str, &[bool])] = &[
            ("BASH_ENV=./x bash -c ls", &[true]),
            ("env BASH_ENV=./x bash -c ls", &[true]),
            ("sudo ENV=./x sh -c ls", &[true]),
            ("ZDOTDIR=/tmp zsh -c ls", &[true]),
            ("SHELLOPTS=keyword bash -c ls", &[true]),
            ("BASHOPTS=extglob bash -c ls", &[true]),
            ("PS4='$(id)' bash -xc ls", &[true]),
            ("PROMPT_COMMAND=id bash -ic ls", &[true]),
            ("BASH_ENV=./x; bash -c ls", &[true, true]),
            ("BASH_CMDS[ls]=./evil; ls", &[true, true]),
            ("PATH=.:$PATH; ls", &[false, true]),
            ("export PATH=/tmp; ls", &[false, true]),
            ("LANG=C bash -c ls", &[false]),
        ];
        for (line, want) in cases {
            assert_eq!(marked(line), *want, "{line}");
        }
    }
}
