//! The command line: `demo` (the main job) and `validate`.

use std::process::Command;

fn portcullis() -> Command {
    Command::new(env!("CARGO_BIN_EXE_portcullis"))
}

#[test]
fn demo_runs_the_scripted_session_on_the_embedded_default() {
    let out = portcullis()
        .args(["demo", "--listen", "127.0.0.1:0", "--once"])
        .env("PORTCULLIS_LOG", "warn")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "demo failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("DENIED before the server"), "{stdout}");
    assert!(stdout.contains("server ran delete_file: no; notes.txt still exists: yes"), "{stdout}");
    assert!(stdout.contains("result REWRITTEN"), "{stdout}");
    assert!(stdout.contains("every call behaved as the policy says"), "{stdout}");
}

#[test]
fn validate_reports_every_problem_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "listen: nowhere\nupstreams:\n  x: { url: \"ftp://x\" }\ncolour: blue\n").unwrap();
    let out = portcullis().args(["validate", "--config"]).arg(&bad).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    for want in ["listen", "upstreams.x.url", "colour", "3 problem(s)"] {
        assert!(err.contains(want), "missing {want}:\n{err}");
    }
    let ok = portcullis().args(["validate"]).output().unwrap();
    assert!(ok.status.success(), "the embedded default validates");
}
