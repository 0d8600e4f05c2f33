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

#[test]
fn check_reads_permission_layers_from_the_command_line_and_the_managed_file() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main.yaml");
    std::fs::write(&main, "tools: [{ match: mcp__sh__run, kind: shell, command: /command }]\npermissions: { allow: [\"Shell(make:*)\", \"Shell(npm:*)\"] }\n").unwrap();
    let cli = dir.path().join("cli.yaml");
    std::fs::write(&cli, "permissions: { ask: [\"Shell(npm publish:*)\"] }\n").unwrap();
    let managed = dir.path().join("managed.yaml");
    std::fs::write(&managed, "permissions: { deny: [\"Shell(make deploy:*)\"] }\n").unwrap();
    let mut child = portcullis()
        .args(["check", "--config"])
        .arg(&main)
        .arg("--permission-config")
        .arg(&cli)
        .env("PORTCULLIS_MANAGED_CONFIG", &managed)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let lines = ["make build", "make deploy prod", "npm test", "npm publish"]
        .map(|c| format!("{{\"tool\":\"mcp__sh__run\",\"args\":{{\"command\":\"{c}\"}}}}\n"))
        .concat();
    child.stdin.take().unwrap().write_all(lines.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let got: Vec<(String, String)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|v| (v["effect"].as_str().unwrap().to_owned(), v["scope"].as_str().unwrap().to_owned()))
        .collect();
    let want = [("allow", "config"), ("deny", "managed"), ("allow", "config"), ("ask", "cli")];
    assert_eq!(got, want.map(|(e, s)| (e.to_owned(), s.to_owned())));
}
