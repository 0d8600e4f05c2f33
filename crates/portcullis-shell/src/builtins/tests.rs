//! The builtin classification, table-driven, and against real bash.

use crate::{analyze, analyze_in, read_only, Dialect, Opacity, ReadOnly};

/// The inner commands the analysis returns besides the first.
fn inner(line: &str, shell: Dialect) -> Vec<String> {
    analyze_in(line, shell).commands.iter().map(|c| c.canonical()).collect()
}

fn evaluates(line: &str, shell: Dialect) -> bool {
    analyze_in(line, shell).commands.iter().any(|c| c.opaque.contains(&Opacity::Eval))
}

#[test]
fn name_arguments_with_code_in_their_subscript_return_the_code_and_are_never_proven() {
    let lines = [
        "printf -v 'a[$(rm -f victim)]' x",
        "printf '-va[$(rm -f victim)]' x",
        "read 'a[$(rm -f victim)]'",
        "read -r x 'a[$(rm -f victim)]'",
        "read -ra 'a[$(rm -f victim)]'",
        "mapfile 'a[$(rm -f victim)]'",
        "declare 'a[$(rm -f victim)]=1'",
        "declare -n r='a[$(rm -f victim)]'",
        "declare -i n='a[$(rm -f victim)]'",
        "declare -a a='([$(rm -f victim)]=1)'",
        "typeset 'a[$(rm -f victim)]=1'",
        "local 'a[$(rm -f victim)]=1'",
        "export 'a[$(rm -f victim)]'",
        "readonly 'a[$(rm -f victim)]=1'",
        "unset 'a[$(rm -f victim)]'",
        "unset -v 'a[`rm -f victim`]'",
        "test -v 'a[$(rm -f victim)]'",
        "[ -v 'a[$(rm -f victim)]' ]",
        "[[ -v 'a[$(rm -f victim)]' ]]",
        "[[ 'a[$(rm -f victim)]' -eq 1 ]]",
        "[[ 1 -lt 'a[$(rm -f victim)]' ]]",
        "wait -p 'a[$(rm -f victim)]' -n",
        "getopts a 'a[$(rm -f victim)]'",
        "let 'a[$(rm -f victim)]'",
        "(( 'a[$(rm -f victim)]' ))",
        "for ((i='a[$(rm -f victim)]';0;)); do :; done",
        "echo $(( 'a[$(rm -f victim)]' ))",
        "echo ${a['$(rm -f victim)']}",
        "echo ${x:'$(rm -f victim)'}",
        "a=([1]=2 ['$(rm -f victim)']=3)",
        "n='a[$(rm -f victim)]'; (( n ))",
        "compgen -V 'a[$(rm -f victim)]' x",
        "command printf -v 'a[$(rm -f victim)]' x",
        "printf \"$opt\" 'a[$(rm -f victim)]' x",
        "read \"a[\\$(rm -f victim)]$y\"",
    ];
    for line in lines {
        assert!(
            inner(line, Dialect::Bash).iter().any(|c| c == "rm -f victim"),
            "{line}: {:?}",
            inner(line, Dialect::Bash)
        );
        assert!(evaluates(line, Dialect::Bash), "{line}");
        assert!(matches!(read_only(&analyze(line)), ReadOnly::NotProven(_)), "{line}");
    }
}

#[test]
fn plain_names_and_data_arguments_stay_plain() {
    let lines = [
        "printf -v x %s y",
        "printf %s 'a[$(rm x)]'",
        "printf -- -v",
        "read -r line",
        "read -p 'Continue [y/n]? ' answer",
        "declare -a a",
        "export FOO=bar",
        "unset 'a[1]'",
        "test -v x",
        "test 'a[$(rm x)]' = y",
        "echo 'a[$(rm x)]'",
        "type 'a[$(rm x)]'",
        "(( 1 + 2 ))",
        "let 'a[0]=1'",
    ];
    for line in lines {
        assert!(!evaluates(line, Dialect::Bash), "{line}: {:?}", analyze(line).commands);
        assert_eq!(analyze(line).commands.len(), 1, "{line}");
    }
}

#[test]
fn zsh_evaluates_printf_operands_and_shift_as_arithmetic() {
    for line in [
        "printf %d 'a[$(rm -f victim)]'",
        "shift 'a[$(rm -f victim)]'",
        "print -v 'a[$(rm -f victim)]' x",
        "read -A 'a[$(rm -f victim)]'",
    ] {
        assert!(inner(line, Dialect::Zsh).iter().any(|c| c == "rm -f victim"), "{line}");
        assert!(evaluates(line, Dialect::Zsh), "{line}");
    }
    assert!(!evaluates("printf %d 'a[$(rm -f victim)]'", Dialect::Bash));
}

#[test]
fn builtins_that_run_hidden_code_are_marked() {
    let bash = [
        "source ./x.sh",
        ". ./x.sh",
        "fc -s",
        "fc -e vi 3",
        "bind -x '\"\\C-x\":rm x'",
        "enable -f ./x.so x",
        "mapfile -C 'rm x' -c 1 a",
        "compgen -W '$(rm x)' x",
        "complete -C 'rm x' git",
    ];
    for line in bash {
        assert!(evaluates(line, Dialect::Bash), "{line}");
    }
    for line in ["r", "autoload -U x", "zmodload zsh/files", "emulate sh -c 'rm x'", "sched +1 rm x"] {
        assert!(evaluates(line, Dialect::Zsh), "{line}");
    }
    assert!(!evaluates("fc -l", Dialect::Bash));
}

#[test]
fn zsh_rebinding_makes_every_later_command_opaque() {
    for line in [
        "hash cat=/bin/sh; cat -c x",
        "alias cat=sh; cat x",
        "disable echo; echo x",
        "setopt extendedglob; ls",
        "commands[cat]=/bin/sh; cat x",
        "functions[ls]='rm -rf x'; ls",
        "zmodload zsh/files; rm --help",
    ] {
        let a = analyze_in(line, Dialect::Zsh);
        let last = a.commands.last().expect("commands");
        assert!(!last.opaque.is_empty(), "{line}: {:?}", a.commands);
    }
    let bash = analyze("hash cat=/bin/sh; cat -c x");
    assert!(bash.commands[1].opaque.is_empty());
}

proptest::proptest! {
    /// Whatever name-taking builtin and spelling, code in a name's subscript reaches the
    /// analysis, and the line is never proven.
    #[test]
    fn code_in_any_name_argument_is_returned(
        builtin in proptest::sample::select(vec![
            "printf -v", "printf -v x %s; printf -v", "read -r", "read -ra", "read -d , -a", "mapfile -t",
            "readarray", "declare -g", "declare -n r=", "typeset -i n=", "local", "export", "readonly",
            "unset -v", "test -v", "[ -v", "wait -p", "getopts ab", "let", "compgen -V", "builtin read",
            "command unset",
        ]),
        open in proptest::sample::select(vec!["'a[", "'a[1+", "\"a[\\", "'b[c[", "'a['\"'\"'"]),
        inner in "[a-z]{1,8}",
    ) {
        let line = format!("{builtin} {open}$(rm -f {inner})]'");
        let line = if line.matches('"').count() % 2 == 1 { format!("{line}\"") } else { line };
        let a = analyze(&line);
        let want = format!("rm -f {inner}");
        proptest::prop_assert!(a.commands.iter().any(|c| c.canonical() == want), "{}: {:?}", line, a.commands);
        proptest::prop_assert!(matches!(read_only(&a), ReadOnly::NotProven(_)), "{}", line);
    }
}
