//! The shell analyzer against real bash: what it says a line runs (argv per simple command)
//! must be what bash runs.
//!
//! Each line runs under `env -i` in a scratch directory, as `bash --norc --noprofile -c`, with a
//! PATH holding only stub programs (one `#!/bin/sh` script per name, recording its argv
//! NUL-separated) and the ordinary builtins switched off with `enable -n`, so `echo`, `printf`,
//! `test`, `[`, `pwd`, `true`, `false` reach the stubs too. Every argv bash runs must be one the
//! analyzer predicted; a predicted one bash did not run is only control flow (`a || b`). For a
//! line proven read-only the scratch directory must also stay empty.
//!
//! Lines fed: the `readonly` rows of the corpus that the analyzer proves read-only, the
//! dangerous corpus (only lines without `/` or `..`, so nothing outside the scratch directory is
//! named), and seeded generated lines mixing quotes, ANSI-C escapes, braces, globs, assignments,
//! `--` and options. A line is compared when the analyzer claims to know every argv: it parses,
//! and no command is opaque, wrapped, path-qualified or a builtin we cannot switch off.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};

use portcullis::shell::{analyze, read_only, Analysis, ReadOnly};

/// Builtins that `enable -n` turns into PATH lookups for the comparison.
const DISABLED: &[&str] =
    &["echo", "printf", "test", "[", "pwd", "true", "false", "kill", "type", "ulimit", "umask"];

/// Builtins and keywords that stay builtins: their commands are not compared.
const BUILTINS: &[&str] = &[
    "cd",
    ":",
    ".",
    "source",
    "eval",
    "exec",
    "exit",
    "export",
    "readonly",
    "return",
    "set",
    "shift",
    "trap",
    "unset",
    "alias",
    "unalias",
    "bg",
    "fg",
    "jobs",
    "wait",
    "read",
    "local",
    "declare",
    "typeset",
    "let",
    "shopt",
    "enable",
    "hash",
    "help",
    "history",
    "builtin",
    "command",
    "caller",
    "complete",
    "compgen",
    "compopt",
    "dirs",
    "pushd",
    "popd",
    "disown",
    "fc",
    "getopts",
    "logout",
    "mapfile",
    "readarray",
    "suspend",
    "times",
    "bind",
    "[[",
    "((",
    "for",
    "case",
    "coproc",
    "time",
];

struct Harness {
    root: tempfile::TempDir,
    stubs: PathBuf,
    scratch: PathBuf,
    /// Lines run so far: each gets its own log directory, so a stray background job of one
    /// line cannot write into the next line's record.
    runs: std::cell::Cell<usize>,
}

#[derive(Default, Debug)]
struct Counts {
    lines_run: usize,
    proven_run: usize,
    commands_compared: usize,
    not_run: usize,
    disagreements: Vec<String>,
}

impl Harness {
    fn new() -> Harness {
        let root = tempfile::tempdir().expect("tempdir");
        let stubs = root.path().join("stubs");
        let scratch = root.path().join("scratch");
        std::fs::create_dir_all(&stubs).unwrap();
        std::fs::create_dir_all(&scratch).unwrap();
        Harness { root, stubs, scratch, runs: std::cell::Cell::new(0) }
    }

    fn stub(&self, name: &str) {
        let path = self.stubs.join(name);
        if path.exists() || name.is_empty() || name.contains('/') || name.contains('\0') {
            return;
        }
        // One file per invocation (pipelines run stubs at once), argv NUL-separated.
        let script = "#!/bin/sh\nprintf '%s\\0' \"${0##*/}\" \"$@\" > \"$ARGV_LOG/$$\"\n";
        std::fs::write(&path, script).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }

    /// Run `line` in real bash; the argvs the stubs recorded, and whether scratch stayed empty.
    fn run(&self, line: &str) -> (Vec<Vec<String>>, bool) {
        self.runs.set(self.runs.get() + 1);
        let log = self.root.path().join(format!("log{}", self.runs.get()));
        std::fs::create_dir_all(&log).unwrap();
        for entry in std::fs::read_dir(&self.scratch).unwrap().flatten() {
            let p = entry.path();
            let _ = if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
        }
        let script = format!("enable -n {}\n{line}", DISABLED.join(" "));
        let status = Process::new("/usr/bin/env")
            .arg("-i")
            .arg(format!("PATH={}", self.stubs.display()))
            .arg(format!("HOME={}", self.scratch.display()))
            .arg(format!("ARGV_LOG={}", log.display()))
            .args(["/usr/bin/timeout", "5", "/bin/bash", "--norc", "--noprofile", "-c", &script])
            .current_dir(&self.scratch)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("bash runs");
        let _ = status;
        let mut argvs = Vec::new();
        for entry in std::fs::read_dir(&log).unwrap().flatten() {
            let bytes = std::fs::read(entry.path()).unwrap_or_default();
            let mut argv: Vec<String> =
                bytes.split(|&b| b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
            argv.pop(); // the empty piece after the last NUL
            argvs.push(argv);
        }
        let empty = std::fs::read_dir(&self.scratch).unwrap().next().is_none();
        (argvs, empty)
    }

    /// Compare one line if the analyzer claims to know its argvs; returns whether it ran.
    fn compare(&self, line: &str, counts: &mut Counts) -> bool {
        let analysis = analyze(line);
        let Some(predicted) = predicted(&analysis, &self.scratch) else { return false };
        for argv in &predicted {
            self.stub(&argv[0]);
        }
        let proven = read_only(&analysis) == ReadOnly::Proven;
        let (ran, empty) = self.run(line);
        counts.lines_run += 1;
        counts.proven_run += usize::from(proven);
        counts.commands_compared += predicted.len();
        let expected: BTreeSet<&Vec<String>> = predicted.iter().collect();
        let seen: BTreeSet<&Vec<String>> = ran.iter().collect();
        counts.not_run += expected.difference(&seen).count();
        let surprises: Vec<&&Vec<String>> = seen.difference(&expected).collect();
        if !surprises.is_empty() {
            counts.disagreements.push(format!(
                "{line:?}{}: bash ran {surprises:?}, the analyzer predicted {predicted:?}",
                if proven { " (proven read-only)" } else { "" }
            ));
        }
        if proven && !empty {
            counts
                .disagreements
                .push(format!("{line:?} (proven read-only) wrote into the scratch directory"));
        }
        true
    }
}

/// The argv of every command, if the analysis claims to know them all.
fn predicted(analysis: &Analysis, home: &Path) -> Option<Vec<Vec<String>>> {
    if analysis.parse_error.is_some() || analysis.commands.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for c in &analysis.commands {
        if !c.opaque.is_empty() || !c.wrappers.is_empty() || c.path_qualified || c.option_globs {
            return None;
        }
        if c.redirects.iter().any(|r| r.target.contains('/') || r.target.contains("..")) {
            return None;
        }
        if c.program.is_empty() {
            continue; // a bare assignment or redirection
        }
        if BUILTINS.contains(&c.program.as_str()) {
            return None;
        }
        let mut argv = vec![c.program.clone()];
        // The analyzer keeps `~` as written; bash gives HOME.
        argv.extend(c.args.iter().map(|a| match a.strip_prefix('~') {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("{}{rest}", home.display()),
            _ => a.clone(),
        }));
        out.push(argv);
    }
    Some(out)
}

fn corpus(name: &str) -> Vec<(String, String)> {
    portcullis_corpus::tsv_rows(&portcullis_corpus::read(name))
}

/// A small seeded generator (no dependency on proptest's runner, so every run is the same).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.next(items.len())]
    }
}

const PROGRAMS: &[&str] = &[
    "ls",
    "cat",
    "grep",
    "wc",
    "head",
    "tree",
    "rg",
    "sort",
    "echo",
    "printf",
    "test",
    "$'ls'",
    "'cat'",
    "\\wc",
    "{ls,-l}",
    "$'l\\x73'",
    "$'ls\\0x'",
    "g{,}rep",
    "$'\\x74ree'",
    "\"h\"ead",
];

const WORDS: &[&str] = &[
    "-l",
    "-n",
    "--",
    "-o",
    "x",
    "'a b'",
    "\"c d\"",
    "$'\\x2do'",
    "$'a\\0b'",
    "$'\\c@x'",
    "$'\\u0041'",
    "$'\\x{41}z'",
    "$'\\101'",
    "$'\\400z'",
    "{a,b}",
    "{-o,out.txt}",
    "{1..3}",
    "{a..c}",
    "{05..1..2}",
    "x{,}",
    "{x}",
    "{}",
    "\\{a,b}",
    "{'a,b'}",
    "{\"a\",b}",
    "{a,{b,c}}",
    "pre{1,2}post",
    "\"$'x'\"",
    "x\\ y",
    "'it'\\''s'",
    "--color=auto",
    "-{,}",
    "a{b,c}{d,e}",
    "{,}",
    "{$'\\x2c'}",
    "{a..e..2}",
    "''",
    "\"\"",
    "a=b",
    "--x={1,2}",
    "$'\\t'",
    "{-1..1}",
    "{c..a}",
    "-e",
    "\\-n",
    "'{,}'",
];

const JOINS: &[&str] = &["; ", " && ", " | ", " || ", "\n"];

fn generated(count: usize) -> Vec<String> {
    let mut rng = Lcg(0x5eed_0001);
    (0..count)
        .map(|_| {
            let segments = 1 + rng.next(3);
            let mut line = String::new();
            for s in 0..segments {
                if s > 0 {
                    line.push_str(rng.pick(JOINS));
                }
                if rng.next(6) == 0 {
                    line.push_str("LANG=C ");
                }
                line.push_str(rng.pick(PROGRAMS));
                for _ in 0..rng.next(5) {
                    line.push(' ');
                    line.push_str(rng.pick(WORDS));
                }
            }
            line
        })
        .collect()
}

#[test]
fn bash_runs_exactly_the_argv_the_analyzer_predicts() {
    if !Path::new("/bin/bash").exists() || !Path::new("/usr/bin/timeout").exists() {
        panic!("the differential harness needs /bin/bash and /usr/bin/timeout");
    }
    let harness = Harness::new();
    // The harness sees what bash does, not what we think it does.
    for name in ["ls", "echo"] {
        harness.stub(name);
    }
    let (ran, _) = harness.run("ls {-o,x} $'a\\0b'c | echo \"$'q'\"");
    let ran: BTreeSet<Vec<String>> = ran.into_iter().collect();
    let want: BTreeSet<Vec<String>> = [vec!["ls", "-o", "x", "ac"], vec!["echo", "$'q'"]]
        .into_iter()
        .map(|a| a.into_iter().map(String::from).collect())
        .collect();
    assert_eq!(ran, want);
    let mut counts = Counts::default();
    let mut proven_lines = 0;
    for (line, label) in corpus("shell-readonly.dev.tsv") {
        if label == "readonly" && read_only(&analyze(&line)) == ReadOnly::Proven {
            proven_lines += 1;
            harness.compare(&line, &mut counts);
        }
    }
    for (line, _) in corpus("shell-dangerous.dev.tsv") {
        if !line.contains('/') && !line.contains("..") {
            harness.compare(&line, &mut counts);
        }
    }
    let lines = generated(600);
    let mut generated_run = 0;
    for line in &lines {
        generated_run += usize::from(harness.compare(line, &mut counts));
    }
    println!(
        "shell differential: {proven_lines} corpus lines proven read-only; {} lines run ({} proven, \
         {generated_run} of {} generated), {} commands compared, {} predicted but not run (control \
         flow), {} disagreements",
        counts.lines_run,
        counts.proven_run,
        lines.len(),
        counts.commands_compared,
        counts.not_run,
        counts.disagreements.len()
    );
    assert!(counts.lines_run > 300, "too few lines compared: {counts:?}");
    assert!(counts.disagreements.is_empty(), "bash disagrees:\n{}", counts.disagreements.join("\n"));
}
