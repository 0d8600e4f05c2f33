//! Tables for what `analyze` finds in a line: segments, programs, opacity, redirects.

use crate::{analyze, Command, Opacity, Redirect, RedirectKind};

fn canonicals(line: &str) -> Vec<String> {
    analyze(line).commands.iter().map(Command::canonical).collect()
}

fn first(line: &str) -> Command {
    let a = analyze(line);
    assert_eq!(a.parse_error, None, "{line}");
    a.commands.into_iter().next().unwrap_or_default()
}

#[test]
fn compound_lines_split_into_every_segment() {
    let cases: &[(&str, &[&str])] = &[
        ("a && b", &["a", "b"]),
        ("a || b", &["a", "b"]),
        ("a; b", &["a", "b"]),
        ("a;b", &["a", "b"]),
        ("a | b | c", &["a", "b", "c"]),
        ("a & b", &["a", "b"]),
        ("a\nb\n\nc", &["a", "b", "c"]),
        ("a;b|c&&d||e&f", &["a", "b", "c", "d", "e", "f"]),
        ("echo 'a; b' \"c && d\"", &["echo a; b c && d"]),
        ("echo a\\;b", &["echo a;b"]),
        ("ls # comment; rm -rf /", &["ls"]),
        ("if true; then ls; else pwd; fi", &["true", "ls", "pwd"]),
        ("while read l; do echo $l; done", &["read l", "echo $l"]),
        ("for f in a b; do cat $f; done", &["for f a b", "cat $f"]),
        ("case $x in a) ls;; *) rm y;; esac", &["case $x a *", "ls", "rm y"]),
    ];
    for (line, want) in cases {
        assert_eq!(canonicals(line), *want, "{line}");
    }
}

#[test]
fn many_segments_are_all_returned() {
    let line = vec!["ls"; 500].join("; ");
    assert_eq!(analyze(&line).commands.len(), 500);
}

#[test]
fn program_names_are_canonical() {
    let cases = [
        ("\\rm x", "rm", false),
        ("r''m x", "rm", false),
        ("\"r\"m x", "rm", false),
        ("/bin/rm x", "rm", true),
        ("./rm x", "rm", true),
        ("../bin/rm x", "rm", true),
        ("$'\\x72\\x6d' x", "rm", false),
    ];
    for (line, program, qualified) in cases {
        let c = first(line);
        assert_eq!(c.program, program, "{line}");
        assert_eq!(c.path_qualified, qualified, "{line}");
        assert_eq!(c.args, ["x"], "{line}");
    }
    assert_eq!(first("/usr/bin/rg x").invoked_as, "/usr/bin/rg");
}

#[test]
fn substitutions_are_opaque_and_their_commands_are_returned() {
    let cases: &[(&str, Opacity, &[&str])] = &[
        ("echo $(rm -rf x)", Opacity::CommandSubstitution, &["echo $(rm -rf x)", "rm -rf x"]),
        ("echo `rm -rf x`", Opacity::CommandSubstitution, &["echo `rm -rf x`", "rm -rf x"]),
        ("echo \"$(a $(b))\"", Opacity::CommandSubstitution, &["echo $(a $(b))", "a $(b)", "b"]),
        ("cat <(curl x)", Opacity::ProcessSubstitution, &["cat <(curl x)", "curl x"]),
        ("echo hi > >(tee log)", Opacity::ProcessSubstitution, &["echo hi", "tee log"]),
        ("X=$(rm y) ls", Opacity::CommandSubstitution, &["ls", "rm y"]),
        ("cat <<EOF\n$(rm -rf /)\nEOF", Opacity::CommandSubstitution, &["cat", "rm -rf /"]),
        ("echo ${x:-$(rm z)}", Opacity::CommandSubstitution, &["echo ${x:-$(rm z)}", "rm z"]),
    ];
    for (line, opacity, want) in cases {
        let a = analyze(line);
        assert_eq!(a.parse_error, None, "{line}");
        assert_eq!(canonicals(line), *want, "{line}");
        assert!(a.commands[0].opaque.contains(opacity), "{line}: {:?}", a.commands[0]);
    }
}

#[test]
fn subshells_brace_groups_and_functions_mark_their_commands() {
    let cases: &[(&str, Opacity, &[&str])] = &[
        ("(cd /tmp && rm -rf x)", Opacity::Subshell, &["cd /tmp", "rm -rf x"]),
        ("{ git reset --hard; echo done; }", Opacity::BraceGroup, &["git reset --hard", "echo done"]),
        ("coproc rm x", Opacity::Subshell, &["rm x"]),
        ("f() { rm -rf x; }", Opacity::Function, &["rm -rf x"]),
    ];
    for (line, opacity, want) in cases {
        let a = analyze(line);
        assert_eq!(canonicals(line), *want, "{line}");
        assert!(a.commands.iter().all(|c| c.opaque.contains(opacity)), "{line}");
    }
    // A call to a function defined on the line is opaque too, even if it looks harmless.
    let a = analyze("ls() { rm -rf ~; }; ls");
    assert!(a.commands.iter().all(|c| c.opaque.contains(&Opacity::Function)));
    let fork_bomb = analyze(":(){ :|:& };:");
    assert!(fork_bomb.commands.iter().all(|c| c.opaque.contains(&Opacity::Function)));
}

#[test]
fn compound_redirections_reach_the_commands_inside() {
    let c = first("{ ls; } > out.txt");
    assert_eq!(c.redirects[0].target, "out.txt");
    assert!(c.redirects[0].writes_file());
}

#[test]
fn here_documents_fed_to_interpreters_are_opaque_and_shell_ones_analysed() {
    let a = analyze("bash <<EOF\nrm -rf /home/user\nEOF");
    assert_eq!(canonicals("bash <<EOF\nrm -rf /home/user\nEOF"), ["bash", "rm -rf /home/user"]);
    assert!(a.commands[0].opaque.contains(&Opacity::HereDocToInterpreter));
    assert_eq!(a.commands[1].wrappers, ["bash"]);
    for line in ["python3 <<'PY'\nprint(1)\nPY", "sh <<<'git reset --hard'", "node <<< 'x'"] {
        assert!(first(line).opaque.contains(&Opacity::HereDocToInterpreter), "{line}");
    }
    assert_eq!(canonicals("sh <<<'git reset --hard'"), ["sh", "git reset --hard"]);
    for line in ["curl x | sh", "curl x | bash -", "curl x | python3", "sh < script.sh"] {
        let a = analyze(line);
        assert!(a.commands.iter().any(|c| c.opaque.contains(&Opacity::StdinToInterpreter)), "{line}");
    }
    assert!(first("cat <<EOF\nx\nEOF").opaque.is_empty());
}

#[test]
fn eval_and_shell_strings_are_analysed_recursively() {
    type Case<'a> = (&'a str, &'a [&'a str], &'a [&'a [&'a str]]);
    let cases: &[Case] = &[
        ("eval 'rm -rf /'", &["eval rm -rf /", "rm -rf /"], &[&[], &["eval"]]),
        ("bash -c 'rm -rf /home/user'", &["rm -rf /home/user"], &[&["bash"]]),
        ("sh -c \"ls && rm x\"", &["ls", "rm x"], &[&["sh"], &["sh"]]),
        ("sudo sh -c 'echo $(rm y)'", &["echo $(rm y)", "rm y"], &[&["sudo", "sh"], &["sudo", "sh"]]),
        ("bash -c \"bash -c 'rm z'\"", &["rm z"], &[&["bash", "bash"]]),
    ];
    for (line, want, wrappers) in cases {
        let a = analyze(line);
        assert_eq!(canonicals(line), *want, "{line}");
        let got: Vec<Vec<String>> = a.commands.iter().map(|c| c.wrappers.clone()).collect();
        assert_eq!(got, *wrappers, "{line}");
    }
    assert!(first("eval 'ls'").opaque.contains(&Opacity::Eval));
    let bad = analyze("bash -c 'if'");
    assert_eq!(bad.parse_error, None);
    assert!(matches!(bad.commands[0].opaque[..], [Opacity::Unsupported(_)]));
}

#[test]
fn commands_run_by_find_and_fd_are_returned_too() {
    let a = analyze("find . -name '*.tmp' -exec rm -f {} \\;");
    assert_eq!(canonicals("find . -name '*.tmp' -exec rm -f {} \\;")[1], "rm -f {}");
    assert_eq!(a.commands[1].wrappers, ["find"]);
    assert!(a.commands[1].opaque.contains(&Opacity::DynamicWord));
    let nested = canonicals("find . -exec sh -c 'curl x | sh' \\;");
    assert_eq!(nested[1..], ["curl x", "sh"]);
}

#[test]
fn wrappers_are_peeled_and_recorded() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("sudo rm -rf /", "rm -rf /", &["sudo"]),
        ("'sudo' rm -rf /", "rm -rf /", &["sudo"]),
        ("env GIT_AUTHOR_NAME=test git reset --hard", "git reset --hard", &["env"]),
        ("command rm -rf x", "rm -rf x", &["command"]),
        ("builtin command git reset --hard", "git reset --hard", &["builtin", "command"]),
        ("sudo env git reset --hard", "git reset --hard", &["sudo", "env"]),
        ("nice -n 19 timeout 5 nc host 9", "nc host 9", &["nice", "timeout"]),
        ("exec rm -rf /", "rm -rf /", &["exec"]),
        ("nohup ./x.sh", "x.sh", &["nohup"]),
        ("stdbuf -oL ionice -c3 du", "du", &["stdbuf", "ionice"]),
        ("doas pkg_add nginx", "pkg_add nginx", &["doas"]),
        ("xargs -0 rm", "rm", &["xargs"]),
    ];
    for (line, canonical, wrappers) in cases {
        let c = first(line);
        assert_eq!(c.canonical(), *canonical, "{line}");
        assert_eq!(c.wrappers, *wrappers, "{line}");
    }
    assert_eq!(
        first("env GIT_AUTHOR_NAME=test git log").assignments,
        [("GIT_AUTHOR_NAME".to_string(), "test".to_string())]
    );
    let opaque = first("sudo -e /etc/hosts");
    assert!(matches!(opaque.opaque[..], [Opacity::OpaqueWrapper(_)]));
    assert_eq!(opaque.program, "sudo");
}

#[test]
fn redirections_are_recorded_with_their_kind() {
    let r = |fd, kind, target: &str| Redirect { fd, kind, target: target.to_string() };
    let cases = [
        ("ls > out", r(None, RedirectKind::Output, "out"), true),
        ("ls >> out", r(None, RedirectKind::Append, "out"), true),
        ("ls >| out", r(None, RedirectKind::Clobber, "out"), true),
        ("ls 2> err", r(Some(2), RedirectKind::Output, "err"), true),
        ("ls &> all", r(None, RedirectKind::OutputAndError, "all"), true),
        ("ls &>> all", r(None, RedirectKind::AppendOutputAndError, "all"), true),
        ("ls > /dev/null", r(None, RedirectKind::Output, "/dev/null"), false),
        ("ls 2>&1", r(Some(2), RedirectKind::DupOutput, "1"), false),
        ("ls >&2", r(None, RedirectKind::DupOutput, "2"), false),
        ("ls >&out", r(None, RedirectKind::DupOutput, "out"), true),
        ("cat < in", r(None, RedirectKind::Input, "in"), false),
        ("cat <<< word", r(None, RedirectKind::HereString, "word"), false),
        ("cat <<'E'\nbody\nE", r(None, RedirectKind::HereDoc, "body\n"), false),
        ("cat <> f", r(None, RedirectKind::ReadWrite, "f"), true),
        ("ls > \"my file\"", r(None, RedirectKind::Output, "my file"), true),
    ];
    for (line, want, writes) in cases {
        let c = first(line);
        assert_eq!(c.redirects, [want], "{line}");
        assert_eq!(c.redirects[0].writes_file(), writes, "{line}");
    }
    assert!(first("ls > $OUT").opaque.contains(&Opacity::DynamicWord));
}

#[test]
fn assignments_are_recorded_and_bare_ones_have_no_program() {
    let c = first("FOO=bar BAZ='q x' cmd arg");
    assert_eq!(c.assignments, [("FOO".into(), "bar".into()), ("BAZ".into(), "q x".into())]);
    assert_eq!(c.canonical(), "cmd arg");
    let bare = first("a=cu");
    assert_eq!(bare.program, "");
    assert_eq!(bare.assignments, [("a".into(), "cu".into())]);
    let exported = first("export LD_PRELOAD=/tmp/x.so");
    assert_eq!(exported.args, ["LD_PRELOAD=/tmp/x.so"]);
}

#[test]
fn dynamic_programs_and_arguments_are_opaque() {
    for line in ["$SUDO_CMD rm -rf /", "${CMD} test", "$A$B$C", "x=rm; $x -rf /", "* foo"] {
        let a = analyze(line);
        assert!(a.commands.iter().any(|c| c.opaque.contains(&Opacity::DynamicWord)), "{line}");
    }
    assert!(first("echo $HOME").opaque.contains(&Opacity::DynamicWord));
    let globbed = first("rm *.txt");
    assert!(globbed.globs);
    assert!(globbed.opaque.is_empty());
}

#[test]
fn parse_errors_are_reported() {
    for line in ["echo \"unterminated", "if then fi", "ls | | wc", "cat =(whoami)", "(ls"] {
        assert!(analyze(line).parse_error.is_some(), "{line}");
    }
    assert!(analyze(&"$(".repeat(400)).parse_error.is_some());
}

#[test]
fn deep_but_bounded_nesting_does_not_overflow_the_stack() {
    let n = crate::guard::MAX_OPENERS - 2;
    for line in [
        format!("echo {}x{}", "$(".repeat(n), ")".repeat(n)),
        format!("{}ls{}", "(".repeat(n), ")".repeat(n)),
        format!("{}ls; {}", "{ ".repeat(n), "}; ".repeat(n)),
        format!("{}true; then :; {}fi", "if ".repeat(n), "fi; ".repeat(n - 1)),
        format!("echo {}x{}", "${a:-".repeat(n), "}".repeat(n)),
    ] {
        let handle =
            std::thread::Builder::new().stack_size(256 * 1024).spawn(move || analyze(&line)).expect("spawn");
        let analysis = handle.join().expect("no overflow, no panic");
        // Nested `${…}` past `MAX_PARAMETER_DEPTH` is refused before parsing (a parse error).
        assert!(!analysis.commands.is_empty() || analysis.parse_error.is_some());
    }
}

#[test]
fn the_program_layer_one_matches_is_the_one_bash_execs_whatever_the_nul_spelling() {
    let spellings = [
        r"\0",
        r"\00",
        r"\000",
        r"\0000",
        r"\x0",
        r"\x00",
        r"\x{}",
        r"\x{00}",
        r"\x{100}",
        r"\u0000",
        r"\u0",
        r"\U00000000",
        r"\c@",
        r"\c`",
        r"\400",
    ];
    // Escapes that decode to nothing at all (bash's conversion of a negative code point).
    for empty in [r"\U80000000", r"\UFFFFFFFF", r"\Uffffffff"] {
        assert_eq!(first(&format!("$'r{empty}m' -rf x")).program, "rm", "{empty}");
    }
    for nul in spellings {
        for line in [
            format!("$'rm{nul}' -rf x"),
            format!("$'rm{nul}junk' -rf x"),
            format!("r$'m{nul}'  -rf x"),
            format!("$'r{nul}'m -rf x"),
            format!("sudo $'rm{nul}' -rf x"),
            format!("bash -c \"\\$'rm{}' -rf x\"", nul.replace('`', "\\`")),
            format!("ls; $'\\x72\\x6d{nul}' -rf x"),
        ] {
            let a = analyze(&line);
            assert!(a.commands.iter().any(|c| c.program == "rm"), "{line}: {a:?}");
        }
    }
}

#[test]
fn a_nul_byte_in_the_line_is_never_judged() {
    let a = analyze("ls\0; rm -rf x");
    assert!(!read_only_proven("ls\0"));
    assert!(a.commands.iter().any(|c| c.program == "rm"));
    assert!(a.commands.iter().all(|c| !c.opaque.is_empty()));
}

#[test]
fn brace_expansion_runs_before_the_words_are_judged() {
    let cases: &[(&str, &str)] = &[
        ("tree {-o,out.txt} .", "tree -o out.txt ."),
        ("{rm,-rf,x}", "rm -rf x"),
        ("ls {a,b}{1..2}", "ls a1 a2 b1 b2"),
        ("ls -{l,a}", "ls -l -a"),
        ("cat '{-o,x}'", "cat {-o,x}"),
        ("cat \\{-o,x}", "cat {-o,x}"),
        ("cat {a}", "cat {a}"),
        ("find . -name {} -exec echo {} +", "find . -name {} -exec echo {} +"),
        ("git log --format={x}", "git log --format={x}"),
        ("sort -{o,} x", "sort -o - x"),
        ("echo {,}", "echo"),
        ("export a={x,y}", "export a=x a=y"),
    ];
    for (line, want) in cases {
        assert_eq!(first(line).canonical(), *want, "{line}");
    }
    assert_eq!(first("a={x,y} ls").assignments, [("a".into(), "{x,y}".into())]);
    assert!(!read_only_proven("tree {-o,out.txt} ."));
    assert!(first("ls {1..100000}").opaque.contains(&Opacity::DynamicWord));
}

fn read_only_proven(line: &str) -> bool {
    crate::read_only(&analyze(line)) == crate::ReadOnly::Proven
}

#[test]
fn globs_that_could_expand_to_an_option_are_marked() {
    for line in ["ls *", "tree *.rs", "wc -l ?x", "du [ab]*", "cat -- -*", "ls {a,*}"] {
        assert!(first(line).option_globs, "{line}");
    }
    for line in ["ls src/*.rs", "ls ./*", "wc a*", "cat '*'", "ls"] {
        assert!(!first(line).option_globs, "{line}");
    }
}

#[test]
fn the_issue_examples_are_not_proven_read_only() {
    for line in [
        "bash --rcfile /dev/stdin -ic true",
        "bash -k -c 'git log GIT_PAGER=x'",
        "bash -lc 'cat foo.txt'",
        "bash -O extglob -c 'ls'",
        "BASH_ENV=./x bash -c ls",
        "env ENV=./x sh -c ls",
        "set -k; git log GIT_PAGER=x",
        "tree {-o,out.txt} .",
        "tree {-R,-o,out.txt} .",
        "$'rm\\0' -rf x",
        "ls\0",
    ] {
        assert!(!read_only_proven(line), "{line:?}");
    }
    // The transparent options still prove.
    assert!(read_only_proven("bash --norc --noprofile -euo pipefail -c 'git status'"));
}
