//! Plan mode (issue 26.5): read-only-looking shell lines that write, run against real bash; and
//! the ways a client says it is planning that the gate does not hear.

use std::path::Path;

use serde_json::{json, Value};

use super::parse;
use crate::support::{open_legacy_session, post, proxy, proxy_url, rpc_body, Peer, LEGACY};

/// Claude Code's PreToolUse for `Bash` in plan mode, from `cwd`.
fn bash_in_plan(cwd: &Path, command: &str) -> String {
    json!({"hook_event_name": "PreToolUse", "session_id": "plan-1", "cwd": cwd, "permission_mode": "plan",
        "tool_name": "Bash", "tool_input": {"command": command}})
    .to_string()
}

fn decision(answer: &Value) -> String {
    answer["hookSpecificOutput"]["permissionDecision"].as_str().unwrap_or("?").to_owned()
}

/// A scratch git checkout with a commit, a README and two files to diff.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let sh = |cmd: &str| {
        let st =
            std::process::Command::new("bash").arg("-c").arg(cmd).current_dir(dir.path()).status().unwrap();
        assert!(st.success(), "{cmd}");
    };
    sh("git init -q . && printf 'b\\na\\na\\n' > README && printf 'x\\n' > a && printf 'y\\n' > b \
        && git add . && git -c user.name=t -c user.email=t@t commit -qm init");
    dir
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn in_plan_mode_every_read_only_looking_line_that_writes_is_denied_and_really_writes() {
    let policy = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(policy.path(), "posture: auto\n").unwrap();
    let config = policy.path().to_str().unwrap().to_owned();
    let hook = |cwd: &Path, cmd: &str| {
        let stdin = bash_in_plan(cwd, cmd);
        let config = config.clone();
        async move {
            let args = ["pre", "--config", config.as_str()];
            crate::hook::hook(&args, stdin.as_bytes(), &[("PORTCULLIS_SANDBOX", "1"), ("SHELL", "/bin/bash")])
                .await
                .0
        }
    };
    // Each writes the file M (or a name starting with M) in the checkout: a redirection, `tee`,
    // an option of a reader that writes, a program's own script language.
    let writers = [
        "echo hi | tee M",
        "cat README 1<>M",
        "ls > /dev/null 2>M",
        "sort -o M README",
        "uniq README M",
        "find . -maxdepth 0 -fprint M",
        "git log --output=M -1",
        "git diff --output=M HEAD",
        "sed -n 'w M' README",
        "awk 'BEGIN { print 1 > \"M\" }'",
        "split README M",
        "env -S 'touch M'",
        "git -c alias.l='!touch M' l",
        "cut -d, -f1 README > M",
    ];
    for cmd in writers {
        let dir = scratch();
        let answer = hook(dir.path(), cmd).await;
        assert_eq!(decision(&answer), "deny", "{cmd}: {answer}");
        let st =
            std::process::Command::new("bash").arg("-c").arg(cmd).current_dir(dir.path()).output().unwrap();
        assert!(
            listing(dir.path()).iter().any(|n| n.starts_with('M')),
            "the premise: bash writes with `{cmd}` ({st:?})"
        );
    }
    // Lines proven read-only fall through to the rules (auto allows) and bash changes nothing.
    for cmd in [
        "ls -la",
        "cat README",
        "od -w8 README",
        "cut -d, -f1 README --output-delimiter=x",
        "cat < README > /dev/null",
        "printf x > /dev/stdout",
        "git log -1 --stat",
    ] {
        let dir = scratch();
        let before = listing(dir.path());
        let answer = hook(dir.path(), cmd).await;
        assert_eq!(decision(&answer), "allow", "{cmd}: {answer}");
        let st =
            std::process::Command::new("bash").arg("-c").arg(cmd).current_dir(dir.path()).output().unwrap();
        assert!(st.status.success(), "{cmd}: {st:?}");
        assert_eq!(listing(dir.path()), before, "{cmd} changed the checkout");
    }
}

/// The Python peer (legacy) as `py`, write_note a file write, at the auto posture.
fn planned(peer: &Peer) -> portcullis::config::Config {
    parse(&format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0 }}\nposture: auto\n\
         upstreams:\n  py: {{ url: \"{}\" }}\n\
         tools: [{{ match: mcp__py__write_note, kind: file, path: /path, access: write }}]\n",
        peer.url()
    ))
}

/// A raw `tools/call` of write_note in session `sid` with `meta` and extra headers.
async fn write_note(url: &str, sid: &str, id: u64, meta: Value, extra: &[(&str, &str)]) -> Value {
    let mut params = json!({"name": "write_note", "arguments": {"path": "/tmp/round5-plan.md", "text": "x"}});
    if !meta.is_null() {
        params["_meta"] = meta;
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let mut h = vec![("mcp-session-id", sid), ("mcp-protocol-version", LEGACY)];
    h.extend_from_slice(extra);
    let (_, _, text) = post(url, &h, body.to_string()).await;
    rpc_body(&text)
}

fn refused_in_plan(v: &Value) -> bool {
    v.to_string().contains("plan mode")
}

#[tokio::test]
async fn plan_mode_in_meta_denies_a_write_whatever_the_header_says() {
    let peer = Peer::python("legacy");
    let p = proxy(&planned(&peer)).await;
    let url = proxy_url(&p, "py");
    let sid = open_legacy_session(&url).await;
    let plan = json!({"portcullis/mode": "plan"});
    let v = write_note(&url, &sid, 2, plan.clone(), &[]).await;
    assert!(refused_in_plan(&v), "{v}");
    let v = write_note(&url, &sid, 3, plan, &[("portcullis-mode", "default")]).await;
    assert!(refused_in_plan(&v), "a header saying otherwise does not clear it: {v}");
    let v = write_note(&url, &sid, 4, json!({"portcullis/mode": "PLAN"}), &[]).await;
    assert!(refused_in_plan(&v), "{v}");
    assert!(peer.tools_run().is_empty(), "{:?}", peer.tools_run());
}

#[tokio::test]
async fn plan_mode_in_meta_holds_beside_a_task_that_is_not_a_string() {
    let peer = Peer::python("legacy");
    let p = proxy(&planned(&peer)).await;
    let url = proxy_url(&p, "py");
    let sid = open_legacy_session(&url).await;
    let meta = json!({"portcullis/mode": "plan", "portcullis/task": {"text": "draft the plan"}});
    let v = write_note(&url, &sid, 2, meta, &[]).await;
    assert!(refused_in_plan(&v), "{v}");
    assert!(peer.tools_run().is_empty(), "the write ran in plan mode: {:?}", peer.tools_run());
}

#[tokio::test]
async fn the_portcullis_mode_header_puts_an_mcp_call_in_plan_mode() {
    let peer = Peer::python("legacy");
    let p = proxy(&planned(&peer)).await;
    let url = proxy_url(&p, "py");
    let sid = open_legacy_session(&url).await;
    let v = write_note(&url, &sid, 2, Value::Null, &[("portcullis-mode", "plan")]).await;
    assert!(refused_in_plan(&v), "{v}");
    assert!(peer.tools_run().is_empty(), "the write ran in plan mode: {:?}", peer.tools_run());
}
