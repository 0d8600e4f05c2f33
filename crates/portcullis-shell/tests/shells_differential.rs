//! The analysis against the real shells: bash, zsh and dash run each line in a scratch
//! directory where a marker file appears only if hidden code ran.
//!
//! 1. Every builtin form that evaluates a name or an expression (`printf -v 'a[$(touch M)]'`)
//!    is run: whenever the shell created the marker, the analysis must have returned the
//!    `touch M` inside it, and marked the line as evaluating code.
//! 2. Every line proven read-only for a shell is run in that shell: the scratch directory must
//!    be left exactly as it was.
//!
//! A shell that is not installed is skipped with a note (CI installs zsh: `.ci/run`).

use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use portcullis_shell::{analyze_in, read_only, Dialect, ReadOnly};

/// The marker command a form's hidden code runs.
const MARK: &str = "touch M";

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("portcullis-shells-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).expect("scratch");
        std::fs::write(dir.join("a.txt"), "alpha\nbeta\n").expect("scratch file");
        std::fs::write(dir.join("src/b.rs"), "fn main() {}\n").expect("scratch file");
        Scratch(dir)
    }

    /// Every path below the directory with its contents, to compare before and after.
    fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![self.0.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path.clone());
                    out.push((path, Vec::new()));
                } else {
                    out.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
                }
            }
        }
        out.sort();
        out
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The binary and arguments that run a `-c` line without start-up files.
fn shell_argv(shell: Dialect) -> Option<(&'static str, &'static [&'static str])> {
    let argv: (&str, &[&str]) = match shell {
        Dialect::Bash => ("/bin/bash", &["--norc", "--noprofile", "-c"]),
        Dialect::Zsh => ("/usr/bin/zsh", &["-f", "-c"]),
        Dialect::Dash => ("/usr/bin/dash", &["-c"]),
        Dialect::Posix | Dialect::Ksh => return None,
    };
    Path::new(argv.0).exists().then_some(argv)
}

/// Run `line` under `shell` in `scratch`.
fn run(shell: Dialect, line: &str, scratch: &Scratch) {
    let Some((binary, flags)) = shell_argv(shell) else { return };
    let _ = Process::new("/usr/bin/env")
        .arg("-i")
        .arg("PATH=/usr/bin:/bin")
        .arg(format!("HOME={}", scratch.0.display()))
        .args(["/usr/bin/timeout", "5", binary])
        .args(flags)
        .arg(line)
        .current_dir(&scratch.0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// How the analysis must show hidden code the shell ran.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shown {
    /// The marker command is returned (deny rules see it) and the line is not proven.
    Returned,
    /// The code is not in the line's text (`hash cat=/usr/bin/touch; cat M` runs `touch` by
    /// another name, a glob qualifier runs per file): the command that runs it is opaque.
    Opaque,
}

/// Whether the analysis shows the code that `shell` ran for `line`.
fn analysis_shows(line: &str, shell: Dialect, shown: Shown) -> bool {
    let analysis = analyze_in(line, shell);
    let proven = read_only(&analysis) == ReadOnly::Proven;
    let returned = analysis.commands.iter().any(|c| c.canonical() == MARK);
    let last_opaque = analysis.commands.last().is_some_and(|c| !c.opaque.is_empty());
    !proven
        && match shown {
            Shown::Returned => returned,
            Shown::Opaque => returned || last_opaque,
        }
}

/// Builtin forms; `CODE` is replaced by the marker command. Each runs under the listed shells.
const FORMS: &[(&str, &[Dialect])] = &[
    ("printf -v 'a[$(CODE)]' x", &[Dialect::Bash, Dialect::Zsh, Dialect::Dash]),
    ("printf '-va[$(CODE)]' x", &[Dialect::Bash, Dialect::Zsh, Dialect::Dash]),
    ("printf %d 'a[$(CODE)]'", &[Dialect::Bash, Dialect::Dash]),
    ("a=(1); printf %d 'a[$(CODE)]'", &[Dialect::Zsh]),
    ("a=(1); printf %d 'x=a[$(CODE)]'", &[Dialect::Zsh]),
    ("print -v 'a[$(CODE)]' x", &[Dialect::Zsh]),
    ("read 'a[$(CODE)]' <<< x", &[Dialect::Bash, Dialect::Zsh]),
    ("read 'a[$(CODE)]' < /dev/null", &[Dialect::Dash]),
    ("read -r x 'a[$(CODE)]' <<< 'x y'", &[Dialect::Bash, Dialect::Zsh]),
    ("read -a 'a[$(CODE)]' <<< x", &[Dialect::Bash]),
    ("a=(1); read -A 'a[$(CODE)]' <<< x", &[Dialect::Zsh]),
    ("mapfile 'a[$(CODE)]' < /dev/null", &[Dialect::Bash]),
    ("mapfile -C 'CODE' -c 1 a <<< x", &[Dialect::Bash]),
    ("declare 'a[$(CODE)]=1'", &[Dialect::Bash, Dialect::Zsh]),
    ("declare -a 'a[$(CODE)]=1'", &[Dialect::Bash]),
    ("declare -n r='a[$(CODE)]'; r=1", &[Dialect::Bash]),
    ("declare -n r='a[$(CODE)]'; echo $r", &[Dialect::Bash]),
    ("declare -n r='a[$(CODE)]'; read r <<< x", &[Dialect::Bash]),
    ("declare -n r='a[$(CODE)]'; printf -v r x", &[Dialect::Bash]),
    ("declare -n r='a[$(CODE)]'; getopts a r", &[Dialect::Bash]),
    ("typeset 'a[$(CODE)]=1'", &[Dialect::Bash, Dialect::Zsh]),
    ("f() { local 'a[$(CODE)]=1'; }; f", &[Dialect::Bash, Dialect::Zsh]),
    ("export 'a[$(CODE)]=1'", &[Dialect::Bash, Dialect::Zsh, Dialect::Dash]),
    ("readonly 'a[$(CODE)]=1'", &[Dialect::Bash, Dialect::Zsh, Dialect::Dash]),
    ("declare -i n; n='a[$(CODE)]'", &[Dialect::Bash]),
    ("declare -i n='a[$(CODE)]'", &[Dialect::Bash]),
    ("a=(1); typeset -i n='a[$(CODE)]'", &[Dialect::Zsh]),
    ("declare -a a='([$(CODE)]=1)'", &[Dialect::Bash]),
    ("declare -A A='([$(CODE)]=1)'", &[Dialect::Bash]),
    ("a=([1]=2 ['$(CODE)']=3)", &[Dialect::Bash]),
    ("n='a[$(CODE)]'; echo $((n))", &[Dialect::Bash, Dialect::Dash]),
    ("a=(1); n='a[$(CODE)]'; echo $((n))", &[Dialect::Zsh]),
    ("n='a[$(CODE)]'; (( n ))", &[Dialect::Bash, Dialect::Zsh]),
    ("n='a[$(CODE)]'; let n", &[Dialect::Bash]),
    ("n='a[$(CODE)]'; [[ n -eq 1 ]]", &[Dialect::Bash]),
    ("n='a[$(CODE)]'; echo ${!n}", &[Dialect::Bash]),
    ("n='a[$(CODE)]'; echo ${a[n]}", &[Dialect::Bash]),
    ("test -v 'a[$(CODE)]'", &[Dialect::Bash, Dialect::Zsh, Dialect::Dash]),
    ("[ -v 'a[$(CODE)]' ]", &[Dialect::Bash, Dialect::Zsh, Dialect::Dash]),
    ("test 'a[$(CODE)]' -eq 1", &[Dialect::Bash, Dialect::Zsh, Dialect::Dash]),
    ("a=(1); [ 'a[$(CODE)]' -eq 1 ]", &[Dialect::Zsh]),
    ("[[ -v 'a[$(CODE)]' ]]", &[Dialect::Bash, Dialect::Zsh]),
    ("[[ 'a[$(CODE)]' -eq 1 ]]", &[Dialect::Bash]),
    ("a=(1); [[ 'a[$(CODE)]' -eq 1 ]]", &[Dialect::Zsh]),
    ("[[ 1 -lt 'a[$(CODE)]' ]]", &[Dialect::Bash]),
    ("sleep 0 & wait -p 'a[$(CODE)]' -n", &[Dialect::Bash]),
    ("a=(1); unset 'a[$(CODE)]'", &[Dialect::Bash, Dialect::Zsh, Dialect::Dash]),
    ("getopts a 'a[$(CODE)]'", &[Dialect::Bash, Dialect::Zsh, Dialect::Dash]),
    ("let 'a[$(CODE)]'", &[Dialect::Bash]),
    ("a=(1); let 'a[$(CODE)]'", &[Dialect::Zsh]),
    ("(( 'a[$(CODE)]' ))", &[Dialect::Bash, Dialect::Zsh]),
    ("echo $(( 'a[$(CODE)]' ))", &[Dialect::Bash]),
    ("a=(1); echo $(( 'a[$(CODE)]' ))", &[Dialect::Zsh]),
    ("for ((i='a[$(CODE)]';0;)); do :; done", &[Dialect::Bash]),
    ("a=(1); shift 'a[$(CODE)]'", &[Dialect::Zsh]),
    ("echo ${a['$(CODE)']}", &[Dialect::Bash, Dialect::Zsh]),
    ("echo \"${a['$(CODE)']}\"", &[Dialect::Bash]),
    ("a=1; echo ${a:'$(CODE)'}", &[Dialect::Bash]),
    ("echo ${!a['$(CODE)']}", &[Dialect::Bash]),
    ("[[ ${a['$(CODE)']} ]]", &[Dialect::Bash]),
    ("case x in ${a['$(CODE)']}) ;; esac", &[Dialect::Bash]),
    ("cat <<EOF\n${a['$(CODE)']}\nEOF", &[Dialect::Bash]),
    ("ls > ${a['$(CODE)']}", &[Dialect::Bash]),
    ("[ ! -v 'a[$(CODE)]' ]", &[Dialect::Bash]),
    ("printf \"$o\" 'a[$(CODE)]' x", &[Dialect::Bash]),
    ("compgen -W '$(CODE)' x", &[Dialect::Bash]),
    ("compgen -V 'a[$(CODE)]' x", &[Dialect::Bash]),
    ("exec {a[$(CODE)]}>/dev/null", &[Dialect::Bash]),
    ("hash cat=/usr/bin/touch; cat M", &[Dialect::Zsh]),
    ("touch f; ls *(e:'CODE':)", &[Dialect::Zsh]),
    ("touch f; ls f(.e{'CODE'}N)", &[Dialect::Zsh]),
    ("echo =(CODE)", &[Dialect::Zsh]),
    ("exec - CODE", &[Dialect::Zsh]),
    ("command printf -v 'a[$(CODE)]' x", &[Dialect::Bash, Dialect::Zsh]),
    ("builtin read 'a[$(CODE)]' <<< x", &[Dialect::Bash, Dialect::Zsh]),
];

/// Forms whose code the analysis can only mark: not in their text (`hash` rebinds `cat`), or in
/// a line the bash grammar does not parse (`f(…)` is no bash word: the line is asked).
const OPAQUE_FORMS: &[&str] = &["hash cat=/usr/bin/touch; cat M", "touch f; ls f(.e{'CODE'}N)"];

#[test]
fn whenever_a_shell_runs_code_hidden_in_a_builtin_argument_the_analysis_returns_it() {
    let mut ran = Vec::new();
    let mut missed = Vec::new();
    let mut skipped = Vec::new();
    for (form, shells) in FORMS {
        let line = form.replace("CODE", MARK);
        let shown = if OPAQUE_FORMS.contains(form) { Shown::Opaque } else { Shown::Returned };
        for &shell in *shells {
            if shell_argv(shell).is_none() {
                skipped.push(shell);
                continue;
            }
            let scratch = Scratch::new();
            run(shell, &line, &scratch);
            if scratch.0.join("M").exists() {
                ran.push(format!("{shell}: {line}"));
                if !analysis_shows(&line, shell, shown) {
                    missed.push(format!("{shell}: {line}\n    {:?}", analyze_in(&line, shell).commands));
                }
            }
        }
    }
    if !skipped.is_empty() {
        skipped.dedup();
        eprintln!("skipped, not installed: {skipped:?}");
    }
    assert!(missed.is_empty(), "the shell ran code the analysis did not return:\n{}", missed.join("\n"));
    // The harness must see bash run hidden code, or it proves nothing.
    assert!(ran.iter().filter(|r| r.starts_with("bash")).count() >= 30, "bash ran only {ran:#?}");
    let per_shell: Vec<String> = [Dialect::Bash, Dialect::Zsh, Dialect::Dash]
        .iter()
        .map(|d| format!("{d} {}", ran.iter().filter(|r| r.starts_with(&format!("{d}:"))).count()))
        .collect();
    eprintln!(
        "{} forms ran their hidden code ({}); the analysis showed every one",
        ran.len(),
        per_shell.join(", ")
    );
}

/// Lines, some read-only in one shell and not in another.
const LINES: &[&str] = &[
    "ls -la",
    "ls",
    "cat a.txt | head -1",
    "grep -n alpha a.txt",
    "wc -l a.txt src/b.rs",
    "sort a.txt | uniq -c",
    "echo hi",
    "echo -e 'a\\tb'",
    "pwd",
    "true",
    ":",
    "printf '%s\\n' x",
    "printf %d 'a[$(touch M)]'",
    "a=(1); printf %d 'a[$(touch M)]'",
    "printf '-va[$(touch M)]' x",
    "test -f a.txt",
    "[ -d src ]",
    "test 'a[$(touch M)]' -eq 1",
    "[ -v 'a[$(touch M)]' ]",
    "cd src && ls",
    "type ls",
    "command -v ls",
    "hash ls",
    "hash cat=/usr/bin/touch; cat M",
    "hash -d x=/; cat ~x/etc/hostname",
    "ls src/*.rs",
    "ls *(e:'touch M':)",
    "cat =(touch M)",
    "echo =touch",
    "echo {a,b}",
    "dirs",
    "stat a.txt",
    "rm --help",
    "mkdir --help",
    "echo $((1+1))",
    "sed -n 1p a.txt",
    "find . -name '*.rs'",
    "git --version",
    "zsh -fc 'hash cat=/usr/bin/touch; cat M'",
    "bash -c 'printf %d 1'",
    "sh -c 'ls *.txt'",
];

#[test]
fn a_line_proven_read_only_for_a_shell_changes_nothing_when_that_shell_runs_it() {
    let mut proven = Vec::new();
    let mut wrote = Vec::new();
    for shell in [Dialect::Bash, Dialect::Dash, Dialect::Zsh] {
        if shell_argv(shell).is_none() {
            eprintln!("skipped, not installed: {shell}");
            continue;
        }
        for line in LINES {
            if read_only(&analyze_in(line, shell)) != ReadOnly::Proven {
                continue;
            }
            proven.push(format!("{shell}: {line}"));
            let scratch = Scratch::new();
            let before = scratch.snapshot();
            run(shell, line, &scratch);
            if scratch.snapshot() != before {
                wrote.push(format!("{shell}: {line}"));
            }
        }
    }
    assert!(wrote.is_empty(), "proven read-only, yet the shell changed files:\n{}", wrote.join("\n"));
    assert!(proven.iter().filter(|p| p.starts_with("bash")).count() >= 20, "{proven:#?}");
    eprintln!("{} proven lines ran without a change", proven.len());
}

#[test]
fn lines_that_write_under_zsh_are_exactly_the_ones_zsh_is_refused() {
    if shell_argv(Dialect::Zsh).is_none() {
        eprintln!("skipped: zsh is not installed");
        return;
    }
    // Proven for bash, and bash leaves the directory alone: zsh must not be proven for them,
    // because zsh writes.
    let zsh_only = ["hash cat=/usr/bin/touch; cat M", "a=(1); printf %d 'a[$(touch M)]'"];
    for line in zsh_only {
        let scratch = Scratch::new();
        run(Dialect::Zsh, line, &scratch);
        assert!(scratch.0.join("M").exists(), "zsh did not run the hidden code of {line}");
        assert_ne!(read_only(&analyze_in(line, Dialect::Zsh)), ReadOnly::Proven, "{line}");
    }
    assert_eq!(read_only(&analyze_in(zsh_only[0], Dialect::Bash)), ReadOnly::Proven);
}
