//! `portcullis demo`, the real binary: it prints where its console is and the token for it,
//! keeps its decisions for that console, says nothing on stderr unless `-v` (and then without
//! colour into a pipe, or with `NO_COLOR`), and leaves no scratch file behind however it ends —
//! Ctrl-C, SIGTERM, SIGHUP, `--once`, or a start that fails.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{admin_get, PATIENCE};
use crate::support::get;

fn demo(tmp: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_portcullis"));
    // std::env::temp_dir() reads TMPDIR: each run's scratch directory lands where the test looks.
    c.arg("demo").env("TMPDIR", tmp).env_remove("PORTCULLIS_LOG").env_remove("NO_COLOR");
    c
}

/// What is left in `dir`.
fn left_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

/// Waits (bounded) for `child` to exit.
fn exited(child: &mut Child) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(start.elapsed() < PATIENCE, "the demo did not stop");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The stdout lines of a serving demo, up to the one saying it serves on.
fn until_serving(child: &mut Child) -> Vec<String> {
    until(child, "still serving")
}

/// The stdout lines of a demo up to the first that starts with `prefix` (after trimming).
fn until(child: &mut Child, prefix: &str) -> Vec<String> {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // Read to the end, whoever still listens: the demo's stdout stays open.
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut lines = Vec::new();
    loop {
        let line = rx.recv_timeout(PATIENCE).unwrap_or_else(|_| panic!("no {prefix:?} line: {lines:#?}"));
        let done = line.trim_start().starts_with(prefix);
        lines.push(line);
        if done {
            return lines;
        }
    }
}

/// The value printed after `label` (`  console   http://…/console  (…)`).
fn printed<'a>(lines: &'a [String], label: &str) -> &'a str {
    let line = lines
        .iter()
        .find_map(|l| l.trim_start().strip_prefix(label))
        .unwrap_or_else(|| panic!("no {label:?}"));
    line.split_whitespace().next().unwrap()
}

fn signal(child: &Child, name: &str) {
    let ok = Command::new("kill").arg(format!("-{name}")).arg(child.id().to_string()).status().unwrap();
    assert!(ok.success());
}

#[tokio::test]
async fn the_demo_shows_its_console_keeps_its_decisions_and_leaves_nothing_behind_on_ctrl_c() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = demo(tmp.path())
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = until_serving(&mut child);
    let (console, token) = (printed(&lines, "console"), printed(&lines, "admin token"));
    assert!(token.len() >= 16, "{lines:#?}");
    let (status, _, page) = get(console, &[]).await;
    assert!(status == 200 && page.contains("portcullis console"), "{status}");
    // The console it points at has the story's decisions (kept in memory for it) ...
    let admin = console.strip_suffix("/console").unwrap();
    let (status, decisions) = admin_get(admin, "/decisions", token).await;
    let decisions = decisions["decisions"].as_array().cloned().unwrap_or_default();
    assert!(status == 200 && decisions.len() >= 14, "{status}: {decisions:?}");
    assert!(decisions.iter().any(|d| d["outcome"] == "denied"), "{decisions:?}");
    // ... and the audit log in the scratch directory has them too.
    let scratch = Path::new(printed(&lines, "scratch directory"));
    assert_eq!(scratch.parent(), Some(tmp.path()), "{lines:#?}");
    let audit = std::fs::read_to_string(printed(&lines, "audit log")).unwrap();
    let audit: Vec<Value> = audit.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(audit.iter().any(|l| l["phase"] == "approval" && l["channel"] == "api"), "{audit:?}");
    assert!(audit.iter().any(|l| l["phase"] == "pre" && l["outcome"] == "denied"), "{audit:?}");
    assert_eq!(left_in(tmp.path()).len(), 1, "one scratch directory");

    signal(&child, "INT");
    assert!(exited(&mut child).success());
    assert!(left_in(tmp.path()).is_empty(), "left behind: {:?}", left_in(tmp.path()));
    // Quiet: the story is on stdout, and no log line reached stderr.
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn sigterm_and_sighup_end_the_demo_without_leaving_its_scratch_directory() {
    for name in ["TERM", "HUP"] {
        let tmp = tempfile::tempdir().unwrap();
        let mut child = demo(tmp.path())
            .args(["--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        until_serving(&mut child);
        assert_eq!(left_in(tmp.path()).len(), 1);
        signal(&child, name);
        assert!(exited(&mut child).success(), "SIG{name}");
        assert!(left_in(tmp.path()).is_empty(), "SIG{name} left {:?}", left_in(tmp.path()));
    }
}

#[test]
fn with_v_the_demo_logs_without_colour_into_a_pipe_and_once_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let out = demo(tmp.path()).args(["--listen", "127.0.0.1:0", "--once", "-v"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains(" INFO ") && stderr.contains("call parked for approval"), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "colour into a pipe:\n{stderr}");
    assert!(left_in(tmp.path()).is_empty(), "left behind: {:?}", left_in(tmp.path()));
}

/// `script` (util-linux) runs the demo on a pseudo-terminal: colour there, unless `NO_COLOR`.
#[test]
fn at_a_terminal_the_demo_logs_in_colour_unless_no_color_is_set() {
    let bin = env!("CARGO_BIN_EXE_portcullis");
    for (no_color, coloured) in [(None, true), (Some("1"), false)] {
        let tmp = tempfile::tempdir().unwrap();
        let mut c = Command::new("script");
        c.args(["-q", "-e", "-c"])
            .arg(format!("{bin} demo --listen 127.0.0.1:0 --once -v"))
            .arg("/dev/null")
            .env("TMPDIR", tmp.path())
            .env_remove("PORTCULLIS_LOG")
            .env_remove("NO_COLOR");
        if let Some(v) = no_color {
            c.env("NO_COLOR", v);
        }
        let out = c.stdin(Stdio::null()).output().unwrap();
        let all = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{all}");
        assert!(all.contains("call parked for approval"), "{all}");
        assert_eq!(all.contains("\u{1b}["), coloured, "NO_COLOR={no_color:?}:\n{all}");
        assert!(left_in(tmp.path()).is_empty());
    }
}

#[test]
fn a_demo_that_cannot_start_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    // Its port is taken: the proxy cannot listen, and the demo fails after making its directory.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let out = demo(tmp.path()).args(["--listen", &format!("127.0.0.1:{port}"), "--once"]).output().unwrap();
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(left_in(tmp.path()).is_empty(), "left behind: {:?}", left_in(tmp.path()));
}

#[test]
fn ctrl_c_while_the_story_is_told_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = demo(tmp.path())
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Printed just before the scripted session starts: the signal lands in it (or, on a fast
    // machine, just after it — the directory must be gone either way).
    until(&mut child, "scratch directory");
    signal(&child, "INT");
    assert!(exited(&mut child).success());
    assert!(left_in(tmp.path()).is_empty(), "left behind: {:?}", left_in(tmp.path()));
}

#[test]
fn a_reader_that_goes_away_ends_the_output_not_the_demo() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = demo(tmp.path())
        .args(["--listen", "127.0.0.1:0", "--once"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `portcullis demo | head -1`: one line read, then the pipe is closed.
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.starts_with("portcullis demo"), "{first}");
    let status = exited(&mut child);
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(status.success(), "{status}: {stderr}");
    assert!(left_in(tmp.path()).is_empty(), "left behind: {:?}", left_in(tmp.path()));
}
