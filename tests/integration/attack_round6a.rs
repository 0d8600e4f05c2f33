//! Red-team round 6a (issue 26): attacks on the Cedar authority evaluator, the jail it shares
//! with the rule engine, and the argument record it builds. Open findings fail today and are
//! `#[ignore]`d with their id; attacks that held are plain regression tests.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::support::{config, proxy, proxy_url, py_client_with, text_of, Peer};

async fn hook(args: &[&str], stdin: &[u8]) -> Value {
    // A tempdir workspace is a sandbox for `posture: yolo` (src/sandbox.rs).
    crate::hook::hook(args, stdin, &[("PORTCULLIS_SANDBOX", "1")]).await.0
}

fn decision(answer: &Value) -> &str {
    answer["hookSpecificOutput"]["permissionDecision"].as_str().unwrap_or("")
}

fn read_envelope(cwd: &Path, file: &str) -> Vec<u8> {
    json!({
        "session_id": "rt6a", "transcript_path": "/tmp/t.jsonl", "cwd": cwd.display().to_string(),
        "hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": file},
        "tool_use_id": "toolu_1",
    })
    .to_string()
    .into_bytes()
}

/// `<tmp>/repo` (the jail) holding `deep -> <tmp>/outside/a/b` and `fd -> /proc/self/fd`;
/// `<tmp>/outside/a/notes.txt` is the file behind the jail.
struct Workspace {
    _dir: tempfile::TempDir,
    base: PathBuf,
    repo: PathBuf,
}

fn workspace() -> Workspace {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let repo = base.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(base.join("outside/a/b")).unwrap();
    std::fs::write(base.join("outside/a/notes.txt"), "outside secret\n").unwrap();
    std::os::unix::fs::symlink(base.join("outside/a/b"), repo.join("deep")).unwrap();
    std::os::unix::fs::symlink("/proc/self/fd", repo.join("fd")).unwrap();
    Workspace { _dir: dir, base, repo }
}

fn write_config(w: &Workspace, body: &str) -> PathBuf {
    let file = w.base.join("portcullis.yaml");
    std::fs::write(&file, format!("jail: {{ root: {:?} }}\n{body}", w.repo.display().to_string())).unwrap();
    file
}

/// `<symlink>/../<name>`: the jail drops `<symlink>/..` lexically, the kernel follows the link
/// first and then climbs from its target.
fn climb_after_link(repo: &Path, link: &str, name: &str) -> String {
    format!("{}/{link}/../{name}", repo.display())
}

#[tokio::test]
async fn a_dot_dot_after_a_symlink_is_judged_where_the_kernel_lands_not_where_the_text_points() {
    let w = workspace();
    let escape = climb_after_link(&w.repo, "deep", "notes.txt");
    let environ = climb_after_link(&w.repo, "fd", "environ");
    // What the kernel does with these exact bytes: the file outside the jail, and the reader's
    // own environment (hard-denied everywhere).
    assert_eq!(std::fs::read_to_string(&escape).unwrap(), "outside secret\n");
    let env = std::fs::read(&environ).unwrap();
    assert!(env.windows(5).any(|w| w == b"PATH="), "the kernel read /proc/self/environ");
    let out = Command::new("cat").arg(&escape).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "outside secret\n", "real cat agrees");

    // Strict posture: an escape out of the jail is asked (tests/integration/escape.rs).
    let strict = write_config(&w, "posture: strict\n");
    let pre = ["pre", "--config", strict.to_str().unwrap()];
    let plain =
        hook(&pre, &read_envelope(&w.repo, &w.base.join("outside/a/notes.txt").display().to_string())).await;
    assert_ne!(decision(&plain), "allow", "the plain spelling of the escape is not allowed: {plain}");
    let climbed = hook(&pre, &read_envelope(&w.repo, &escape)).await;
    assert_ne!(decision(&climbed), "allow", "{escape} reads outside the jail: {climbed}");

    // Yolo: /proc/self/environ is refused everywhere; the climbed spelling reaches it.
    let yolo = write_config(&w, "posture: yolo\n");
    let pre = ["pre", "--config", yolo.to_str().unwrap()];
    let direct = hook(&pre, &read_envelope(&w.repo, "/proc/self/environ")).await;
    assert_eq!(decision(&direct), "deny", "{direct}");
    let climbed = hook(&pre, &read_envelope(&w.repo, &environ)).await;
    assert_eq!(decision(&climbed), "deny", "{environ} is /proc/self/environ to the kernel: {climbed}");
}

fn cedar_forbidding_outside_reads(w: &Workspace) -> PathBuf {
    let policy = w.base.join("p.cedar");
    std::fs::write(
        &policy,
        format!(
            "@id(\"no-outside\")\nforbid (principal, action == Portcullis::Action::\"read\", resource)\n  \
             when {{ context.path like \"{}/outside/*\" }};\n",
            w.base.display()
        ),
    )
    .unwrap();
    let body = format!(
        "posture: yolo\nauthority: {{ evaluator: cedar, policy: {:?}, allow_anonymous: true }}\n",
        policy.display().to_string()
    );
    write_config(w, &body)
}

#[tokio::test]
async fn a_cedar_forbid_on_context_path_holds_for_the_plain_and_the_symlinked_spelling() {
    let w = workspace();
    std::os::unix::fs::symlink(w.base.join("outside/a"), w.repo.join("a-link")).unwrap();
    let cfg = cedar_forbidding_outside_reads(&w);
    let pre = ["pre", "--config", cfg.to_str().unwrap()];
    for p in [
        w.base.join("outside/a/notes.txt").display().to_string(),
        w.repo.join("a-link/notes.txt").display().to_string(),
        format!("{}/repo/../outside/a/notes.txt", w.base.display()),
    ] {
        let out = hook(&pre, &read_envelope(&w.repo, &p)).await;
        assert_eq!(decision(&out), "deny", "{p}: {out}");
        assert!(out.to_string().contains("no-outside"), "{p}: {out}");
    }
    let inside = hook(&pre, &read_envelope(&w.repo, &w.repo.join("x.txt").display().to_string())).await;
    assert_ne!(decision(&inside), "deny", "the policy is not a blanket deny: {inside}");
}

#[tokio::test]
async fn a_cedar_forbid_on_context_path_holds_for_a_dot_dot_after_a_symlink() {
    let w = workspace();
    let cfg = cedar_forbidding_outside_reads(&w);
    let pre = ["pre", "--config", cfg.to_str().unwrap()];
    let escape = climb_after_link(&w.repo, "deep", "notes.txt");
    assert_eq!(std::fs::read_to_string(&escape).unwrap(), "outside secret\n", "the kernel lands outside");
    let out = hook(&pre, &read_envelope(&w.repo, &escape)).await;
    assert_eq!(decision(&out), "deny", "{escape}: {out}");
}

const DEV: (&str, &str) = ("PORTCULLIS_TEST_RT6A_DEV", "dev-token-rt6a-0b7c2d19e44f5a83");

fn cedar_yaml(policy: &str) -> (tempfile::NamedTempFile, String) {
    let mut f = tempfile::Builder::new().suffix(".cedar").tempfile().unwrap();
    f.write_all(policy.as_bytes()).unwrap();
    std::env::set_var(DEV.0, DEV.1);
    let yaml = format!(
        "permissions: {{ allow: [\"mcp__*\"] }}\nagents:\n  dev: {{ token_env: {} }}\n\
         authority: {{ evaluator: cedar, policy: {:?} }}\n",
        DEV.0,
        f.path().display().to_string()
    );
    (f, yaml)
}

/// The Python SDK server's `add(a: int, b: int)` through the proxy, one call per `a`.
async fn sums(policy: &str, a_values: &[&str]) -> (Vec<Value>, Vec<String>) {
    let peer = Peer::python("legacy");
    let (_f, yaml) = cedar_yaml(policy);
    let p = proxy(&config(&[("py", &peer.url())], &yaml)).await;
    let auth = format!("Authorization: Bearer {}", DEV.1);
    let args: Vec<String> = a_values.iter().map(|a| format!(r#"{{"a":{a},"b":2}}"#)).collect();
    let mut steps = Vec::new();
    for a in &args {
        steps.extend(["call", "add", a.as_str()]);
    }
    let got = py_client_with(&proxy_url(&p, "py"), "legacy", &["--header", &auth], &steps).await;
    let run = peer.tools_run();
    p.shutdown().await;
    (got, run)
}

#[tokio::test]
async fn a_forbid_on_an_exact_number_holds_for_every_spelling_the_upstream_reads_as_that_number() {
    let policy =
        "@id(\"not-eleven\")\nforbid (principal, action, resource == Portcullis::Tool::\"mcp__py__add\")\n  \
                  when { context.args has a && context.args.a == 11 };\n";
    let (got, run) = sums(policy, &["11", "11.0", "\"11\"", "1.1e1"]).await;
    assert_eq!(got[0]["result"]["isError"], true, "the integer spelling is forbidden: {got:?}");
    for (i, spelling) in ["11.0", "\"11\"", "1.1e1"].iter().enumerate() {
        let r = &got[i + 1];
        // Before the fix the server ran it and answered 13: it read `a` as 11.
        assert_eq!(r["result"]["isError"], true, "a = {spelling} reached the server as 11: {}", text_of(r));
    }
    assert!(run.is_empty(), "no sum with a = 11 reached the server: {run:?}");
}

#[tokio::test]
async fn an_ordering_forbid_refuses_every_non_integer_spelling_of_a_number() {
    let policy =
        "@id(\"small\")\nforbid (principal, action, resource == Portcullis::Tool::\"mcp__py__add\")\n  \
                  when { context.args has a && context.args.a > 10 };\n";
    let (got, run) = sums(policy, &["1", "11.0", "\"11\"", "1.1e1", "null", "[11]", "{\"x\":11}"]).await;
    assert_eq!(text_of(&got[0]), "3", "{got:?}");
    for r in &got[1..] {
        assert_eq!(r["result"]["isError"], true, "{got:?}");
    }
    assert_eq!(run, vec!["add".to_owned()], "only a = 1 reached the server");
}

#[test]
fn a_repeated_argument_key_is_judged_by_the_value_the_upstream_keeps() {
    // serde_json keeps the last of a repeated key; so do Python's json and JavaScript's JSON.parse.
    let py = Command::new("python3")
        .args(["-c", "import json,sys; print(json.loads(sys.argv[1])['a'])", r#"{"a":1,"a":12}"#])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&py.stdout).trim(), "12");
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("p.cedar");
    std::fs::write(
        &policy,
        "@id(\"small\")\nforbid (principal, action, resource == Portcullis::Tool::\"mcp__py__add\")\n  \
         when { context.args has a && context.args.a > 10 };\n",
    )
    .unwrap();
    let (_f, _) = cedar_yaml("");
    let cfg = dir.path().join("c.yaml");
    std::fs::write(
        &cfg,
        format!(
            "permissions: {{ allow: [\"mcp__*\"] }}\nagents:\n  dev: {{ token_env: {} }}\n\
             authority: {{ evaluator: cedar, policy: {:?} }}\n",
            DEV.0,
            policy.display().to_string()
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["check", "--agent", "dev", "--config"])
        .arg(&cfg)
        .env(DEV.0, DEV.1)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"tool\":\"mcp__py__add\",\"args\":{\"a\":1,\"a\":12,\"b\":2}}\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let got: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("{}"))
            .unwrap_or(Value::Null);
    assert_eq!(got["effect"], "deny", "{got}");
}

fn bash_envelope(cwd: &Path, command: &str) -> Vec<u8> {
    json!({
        "session_id": "rt6a", "transcript_path": "/tmp/t.jsonl", "cwd": cwd.display().to_string(),
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command},
        "tool_use_id": "toolu_1",
    })
    .to_string()
    .into_bytes()
}

#[tokio::test]
async fn a_shell_read_through_a_symlink_and_dot_dot_is_judged_at_proc_self_environ_where_bash_lands() {
    let w = workspace();
    let strict = write_config(&w, "posture: strict\n");
    let pre = ["pre", "--config", strict.to_str().unwrap()];
    // (A shell read outside the jail is not itself asked — `cat <outside>/notes.txt` is allowed at
    // strict — so only the hard-denied target shows the lexical-first reading here.)
    for (command, lands) in [
        ("cat fd/../environ", "PATH="),
        ("cat ./fd/../environ", "PATH="),
        // A brace group keeps bash alive while cat reads what bash opened.
        ("{ cat; } < fd/../environ", "PATH="),
        ("cd fd && cat ../environ", "PATH="),
        ("cd -P fd/.. && cat environ", "PATH="),
    ] {
        let out = Command::new("bash").args(["-c", command]).current_dir(&w.repo).output().unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains(lands), "real bash: {command}");
        let answer = hook(&pre, &bash_envelope(&w.repo, command)).await;
        assert_ne!(decision(&answer), "allow", "{command} reads outside the jail: {answer}");
    }
    let plain = hook(&pre, &bash_envelope(&w.repo, "cat /proc/self/environ")).await;
    assert_ne!(decision(&plain), "allow", "{plain}");
}

fn write_envelope(cwd: &Path, file: &str) -> Vec<u8> {
    json!({
        "session_id": "rt6a", "transcript_path": "/tmp/t.jsonl", "cwd": cwd.display().to_string(),
        "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": file, "content": "x"}, "tool_use_id": "toolu_1",
    })
    .to_string()
    .into_bytes()
}

#[tokio::test]
async fn a_write_through_a_dangling_symlink_is_judged_where_the_kernel_creates_the_file() {
    let w = workspace();
    let target = w.base.join("outside/new.txt");
    let policy = w.base.join("w.cedar");
    std::fs::write(
        &policy,
        format!(
            "@id(\"no-outside\")\nforbid (principal, action == Portcullis::Action::\"write\", resource)\n  \
             when {{ context.path like \"{}/outside/*\" }};\n",
            w.base.display()
        ),
    )
    .unwrap();
    let cfg = write_config(
        &w,
        &format!(
            "posture: yolo\nauthority: {{ evaluator: cedar, policy: {:?}, allow_anonymous: true }}\n",
            policy.display().to_string()
        ),
    );
    let pre = ["pre", "--config", cfg.to_str().unwrap()];
    let plain = hook(&pre, &write_envelope(&w.repo, &target.display().to_string())).await;
    assert_eq!(decision(&plain), "deny", "the plain spelling is forbidden: {plain}");

    // A probe link shows what the kernel does with a write through a dangling symlink.
    let probe = w.base.join("outside/probe.txt");
    std::os::unix::fs::symlink(&probe, w.repo.join("probe")).unwrap();
    let out = Command::new("bash").args(["-c", "echo x > probe"]).current_dir(&w.repo).output().unwrap();
    assert!(out.status.success());
    assert!(probe.exists(), "bash created the file outside the jail");

    std::os::unix::fs::symlink(&target, w.repo.join("dang")).unwrap();
    let via_link = hook(&pre, &write_envelope(&w.repo, &w.repo.join("dang").display().to_string())).await;
    assert_eq!(
        decision(&via_link),
        "deny",
        "{} creates {}: {via_link}",
        w.repo.join("dang").display(),
        target.display()
    );
}
