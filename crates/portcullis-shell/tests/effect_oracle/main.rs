//! The effect oracle: every line the analyzer proves read-only runs under real bash, traced by
//! strace, in a scratch project beside a fake home of marked fake secrets, with no network — and
//! must keep the proof's promise: no write, no change, no connection, no secret opened or
//! printed, no program the analysis did not name, no read outside the places the effect model
//! predicted.
//!
//! Lines: the corpus, the red team's examples, and the mutator's respellings of seeds (secret
//! readers, code runners, writers). Bounded for CI (`PORTCULLIS_ORACLE_LINES` executions, default
//! 1500; `PORTCULLIS_ORACLE_SECONDS` bounds the mutator's phase; `PORTCULLIS_ORACLE_SEED` varies
//! the mutations).
//! `scripts/fuzz oracle` runs it for a time budget with a fresh seed.
//!
//! Needs strace (Debian `strace`, installed by .ci/run), /usr/bin/timeout and /usr/bin/unshare.

#![allow(clippy::disallowed_methods, reason = "a test: reads its own configuration variables")]

mod judge;
mod known;
mod lines;
mod mutator;
mod observed;
mod sandbox;
mod trace;

use std::collections::{BTreeMap, HashSet};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use portcullis_shell::effects::effects;
use portcullis_shell::place::Base;
use portcullis_shell::{analyze, read_only, ReadOnly};

use judge::{judge, Case, Class, Violation};
use lines::{render, seeds};
use mutator::{abbreviations, mutate, LongOptions, Rng};
use sandbox::Sandbox;

/// Figures for the end-of-test summary.
#[derive(Default)]
struct Figures {
    generated: usize,
    proven: usize,
    executed: usize,
    timed_out: usize,
    syscalls: usize,
    /// Time spent preparing, running and tracing lines (the rest is analysis and judging).
    running: Duration,
    /// Line → its violations.
    violations: BTreeMap<String, Vec<Violation>>,
    /// Violations of a documented gap, counted per gap.
    known: BTreeMap<known::Gap, usize>,
}

struct Oracle {
    sandbox: Sandbox,
    figures: Figures,
    seen: HashSet<String>,
}

impl Oracle {
    fn new() -> Oracle {
        for tool in ["/usr/bin/timeout", "/usr/bin/unshare", "/bin/bash"] {
            assert!(std::path::Path::new(tool).exists(), "the effect oracle needs {tool}");
        }
        let strace = Command::new("strace").arg("-V").stdout(Stdio::null()).status();
        assert!(strace.is_ok_and(|s| s.success()), "the effect oracle needs strace (Debian package strace)");
        Oracle { sandbox: Sandbox::new(), figures: Figures::default(), seen: HashSet::new() }
    }

    /// Feeds one line: if new and proven read-only, run it and judge it.
    fn feed(&mut self, line: &str) {
        if !self.seen.insert(line.to_string()) {
            return;
        }
        self.figures.generated += 1;
        let analysis = analyze(line);
        if read_only(&analysis) != ReadOnly::Proven {
            return;
        }
        self.figures.proven += 1;
        // The gaps are matched on the words as bash reads them (after quote removal and escapes).
        let words: String = analysis
            .commands
            .iter()
            .flat_map(|c| std::iter::once(c.to_string()).chain(c.redirects.iter().map(|r| r.target.clone())))
            .map(|w| w + " ")
            .collect();
        let (known, found): (Vec<_>, Vec<_>) =
            self.check(line, &analysis).into_iter().partition(|v| known::gap(&words, v).is_some());
        for v in &known {
            if let Some(g) = known::gap(&words, v) {
                *self.figures.known.entry(g).or_default() += 1;
            }
        }
        if !found.is_empty() {
            self.figures.violations.insert(line.to_string(), found);
        }
    }

    fn check(&mut self, line: &str, analysis: &portcullis_shell::Analysis) -> Vec<Violation> {
        let sb = &self.sandbox;
        let predicted = effects(
            analysis,
            &Base::Dir(sb.project.display().to_string()),
            Some(&sb.home.display().to_string()),
        );
        let t = Instant::now();
        let run = sb.run(line);
        self.figures.running += t.elapsed();
        let calls = trace::parse(&run.trace);
        self.figures.executed += 1;
        self.figures.syscalls += calls.len();
        self.figures.timed_out += usize::from(run.timed_out);
        let events = observed::events(&calls, "bash");
        // A trace without bash's own execve means strace saw nothing (ptrace refused, a broken
        // install): every line would pass. Never silently.
        let traced = events
            .iter()
            .any(|e| matches!(&e.seen, observed::Seen::Exec { path, ok: true, .. } if path == "/bin/bash"));
        assert!(
            traced || run.timed_out,
            "strace recorded no execve of /bin/bash for {line:?}; its stderr: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let case = Case {
            analysis,
            effects: Some(&predicted),
            events: &events,
            stdout: &run.stdout,
            stderr: &run.stderr,
        };
        judge(&case, sb)
    }
}

/// Long options of the seeds' programs, from their own `--help` (git's subcommands from `-h`).
fn long_options() -> LongOptions {
    let mut table = LongOptions::new();
    let programs = [
        "grep", "sort", "diff", "ls", "cat", "head", "tail", "wc", "du", "sed", "jq", "cut", "nl", "od",
        "base64", "uniq", "tac", "date", "file", "stat", "less", "tree", "find", "awk",
    ];
    for p in programs {
        let out = Command::new("/usr/bin/timeout")
            .args(["5", p, "--help"])
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::null())
            .output();
        if let Ok(out) = out {
            let text =
                format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            table.insert(p.to_string(), scrape(&text));
        }
    }
    table
}

/// `--name` tokens of a help text (`--[no-]name` gives both).
fn scrape(help: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for piece in help.split("--").skip(1) {
        let (no, rest) = match piece.strip_prefix("[no-]") {
            Some(r) => (true, r),
            None => (false, piece),
        };
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
        if name.len() < 2 || !name.starts_with(|c: char| c.is_ascii_lowercase()) {
            continue;
        }
        if no {
            out.push(format!("no-{name}"));
        }
        out.push(name);
    }
    out.sort();
    out.dedup();
    out
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Every line the analyzer proves read-only keeps its promise under real bash.
#[test]
fn every_line_proven_read_only_changes_nothing_reads_no_secret_and_runs_only_what_was_predicted() {
    let budget = env_number("PORTCULLIS_ORACLE_LINES", 1500) as usize;
    let budget_time = Duration::from_secs(env_number("PORTCULLIS_ORACLE_SECONDS", 3600));
    let seed = env_number("PORTCULLIS_ORACLE_SEED", 0x5eed_0ac1e);
    let started = Instant::now();
    let mut oracle = Oracle::new();
    eprintln!(
        "effect oracle: network kept out by {:?}, PATH={}",
        oracle.sandbox.network,
        oracle.sandbox.path_env()
    );

    // (a) the corpus, every row (labels do not matter: only proven lines run).
    for name in ["shell-readonly.dev.tsv", "shell-dangerous.dev.tsv"] {
        for (line, _) in portcullis_corpus::tsv_rows(&portcullis_corpus::read(name)) {
            oracle.feed(&line);
        }
    }
    // (b) the red team's examples.
    let red = lines::red_team();
    let proven: Vec<&String> = red.iter().filter(|l| read_only(&analyze(l)) == ReadOnly::Proven).collect();
    eprintln!(
        "effect oracle: {} of the {} red-team lines proven read-only: {proven:?}",
        proven.len(),
        red.len()
    );
    for line in &red {
        oracle.feed(line);
    }
    // (c) every unique abbreviation of every seed's long options, then random respellings of
    // the seeds and of the corpus's single commands, until the budget.
    let options = long_options();
    let mut pool = seeds();
    for s in &pool.clone() {
        for line in abbreviations(s, &options) {
            oracle.feed(&render(&line));
        }
    }
    pool.extend(corpus_seeds());
    // The time budget is the mutator's: the fixed lines above always run.
    let deadline = Instant::now() + budget_time;
    let mut rng = Rng::new(seed);
    let mut attempts = 0;
    while oracle.figures.executed < budget && attempts < budget * 40 && Instant::now() < deadline {
        attempts += 1;
        let Some(s) = pool.get(rng.below(pool.len())) else { break };
        oracle.feed(&render(&mutate(s, &options, &mut rng)));
    }

    let f = &oracle.figures;
    eprintln!(
        "effect oracle (seed {seed:#x}): {} lines generated, {} proven read-only, {} executed ({} timed \
         out), {} syscalls compared, {} violating lines, in {:.0?} ({:.0?} running lines)",
        f.generated,
        f.proven,
        f.executed,
        f.timed_out,
        f.syscalls,
        f.violations.len(),
        started.elapsed(),
        f.running
    );
    for (gap, n) in &f.known {
        eprintln!("effect oracle: documented gap \"{}\": {n} effects", gap.as_str());
    }
    assert!(f.executed > 100, "too few lines executed: {}", f.executed);
    let report = report(&f.violations);
    eprintln!("{report}");
    assert!(f.violations.is_empty(), "lines proven read-only that were not (see above)");
}

/// The violations grouped by class, each line once per class with up to three of its effects.
fn report(violations: &BTreeMap<String, Vec<Violation>>) -> String {
    let mut by_class: BTreeMap<Class, Vec<(&String, Vec<&str>)>> = BTreeMap::new();
    for (line, vs) in violations {
        let mut per: BTreeMap<Class, Vec<&str>> = BTreeMap::new();
        for v in vs {
            per.entry(v.class).or_default().push(&v.effect);
        }
        for (class, effects) in per {
            by_class.entry(class).or_default().push((line, effects));
        }
    }
    let mut out = String::new();
    for (class, lines) in by_class {
        out.push_str(&format!("== {} lines {}\n", lines.len(), class.as_str()));
        for (line, effects) in lines {
            let more = effects.len().saturating_sub(3);
            let shown: Vec<&str> = effects.into_iter().take(3).collect();
            out.push_str(&format!("{line:?}\n    {}", shown.join("\n    ")));
            if more > 0 {
                out.push_str(&format!("\n    (and {more} more)"));
            }
            out.push('\n');
        }
    }
    out
}

/// The corpus's single-command lines that parse cleanly, as seeds for the mutator.
fn corpus_seeds() -> Vec<lines::Seed> {
    let rows = portcullis_corpus::tsv_rows(&portcullis_corpus::read("shell-readonly.dev.tsv"));
    let mut out = Vec::new();
    for (line, _) in rows {
        let a = analyze(&line);
        if a.parse_error.is_some() || a.commands.len() != 1 {
            continue;
        }
        let c = &a.commands[0];
        if !c.opaque.is_empty()
            || !c.wrappers.is_empty()
            || !c.redirects.is_empty()
            || c.globs
            || c.program.is_empty()
        {
            continue;
        }
        let words = std::iter::once(&c.program).chain(&c.args).map(|w| lines::Word::Lit(w.clone())).collect();
        out.push(vec![lines::Segment { sep: String::new(), words }]);
    }
    out
}

/// The oracle sees what it must: lines that do each forbidden thing, judged as if proven.
#[test]
fn the_oracle_catches_each_kind_of_effect_it_guards() {
    let oracle = Oracle::new();
    let sb = &oracle.sandbox;
    let cases: &[(&str, &str, Class)] = &[
        ("touch pwned", "touch", Class::Write),
        ("mkdir d", "mkdir", Class::Change),
        ("rm -f README.md", "rm", Class::Change),
        ("echo x > out", "echo", Class::Write),
        ("cat ~/.ssh/id_rsa > /dev/null", "cat", Class::SecretOpened),
        ("cat .env", "cat", Class::SecretPrinted),
        ("wc -c < ~/.aws/credentials", "wc", Class::SecretOpened),
        ("cat .git/config", "cat", Class::SecretPrinted),
        ("export -p", "export", Class::SecretPrinted),
        ("cat docs/setup.txt", "cat", Class::SecretOpened),
        ("exec 3<>/dev/tcp/127.0.0.1/9; true", "true", Class::Network),
        ("touch -c README.md", "touch", Class::Change),
        ("kill -TERM $PPID", "kill", Class::Signal),
        ("ls; id", "ls", Class::UnpredictedProgram),
        ("cat /etc/hostname README.md", "cat", Class::UnpredictedRead),
        ("ls ~ README.md", "ls", Class::UnpredictedRead),
    ];
    for (line, pretend, class) in cases {
        // Judge `line` against the analysis and effects of `pretend README.md`.
        let analysis = analyze(&format!("{pretend} README.md"));
        let predicted = effects(
            &analysis,
            &Base::Dir(sb.project.display().to_string()),
            Some(&sb.home.display().to_string()),
        );
        let run = sb.run(line);
        let events = observed::events(&trace::parse(&run.trace), "bash");
        let case = Case {
            analysis: &analysis,
            effects: Some(&predicted),
            events: &events,
            stdout: &run.stdout,
            stderr: &run.stderr,
        };
        let found = judge(&case, sb);
        assert!(found.iter().any(|v| v.class == *class), "{line}: wanted {class:?}, found {found:?}");
    }
    // And a line that keeps its promise passes.
    let analysis = analyze("cat README.md");
    let predicted = effects(
        &analysis,
        &Base::Dir(sb.project.display().to_string()),
        Some(&sb.home.display().to_string()),
    );
    let run = sb.run("cat README.md");
    let events = observed::events(&trace::parse(&run.trace), "bash");
    let case = Case {
        analysis: &analysis,
        effects: Some(&predicted),
        events: &events,
        stdout: &run.stdout,
        stderr: &run.stderr,
    };
    assert_eq!(judge(&case, sb), [], "cat README.md");
    assert!(String::from_utf8_lossy(&run.stdout).contains("acme-app"), "the line really ran");
}

/// A line that outlives its budget is stopped, background jobs included, and what it did
/// before is still in the trace (strace is stopped with TERM and writes out its buffer).
#[test]
fn a_line_that_outlives_the_timeout_is_stopped_and_its_trace_kept() {
    let oracle = Oracle::new();
    let started = Instant::now();
    let run = oracle.sandbox.run("sleep 60 & sleep 61; touch late");
    assert!(run.timed_out, "the line was not stopped");
    assert!(started.elapsed() < Duration::from_secs(20), "stopping took {:?}", started.elapsed());
    let events = observed::events(&trace::parse(&run.trace), "bash");
    let slept = events
        .iter()
        .filter(|e| matches!(&e.seen, observed::Seen::Exec { path, .. } if path.ends_with("/sleep")))
        .count();
    assert_eq!(slept, 2, "both sleeps are in the trace: {events:?}");
    assert!(!oracle.sandbox.project.join("late").exists());
}
