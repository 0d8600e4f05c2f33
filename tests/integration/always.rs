//! "Allow always" against the real Python SDK server: the operator previews the exact rule and
//! the rule file's diff, confirms with `portcullis approvals allow ID --rule`, the file gets
//! exactly the previewed change (comments kept), the reload reads it, and the next identical
//! call passes without an ask while a different one still asks. A compound shell command, and a
//! proxy without a rule file, get no "always".

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

use crate::support::{eventually, get, open_legacy_session, post, proxy, proxy_url, text_of, Peer, LEGACY};

const RULES: &str = "# Rules the team agreed on.\npermissions:\n  allow:\n    - mcp__py__add   # arithmetic is harmless\n  deny: [mcp__py__delete_everything]\n";

fn call(url: &str, session: &str, tool: &str, args: Value) -> tokio::task::JoinHandle<Value> {
    let (url, session) = (url.to_owned(), session.to_owned());
    let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":tool,"arguments":args}});
    tokio::spawn(async move {
        let h = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", LEGACY)];
        let (_, _, text) = post(&url, &h, body.to_string()).await;
        crate::support::rpc_body(&text)
    })
}

struct Admin {
    base: String,
    auth: String,
}

impl Admin {
    async fn get(&self, path: &str) -> (u16, Value) {
        let (status, _, body) = get(&format!("{}{path}", self.base), &[("authorization", &self.auth)]).await;
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let (status, _, text) =
            post(&format!("{}{path}", self.base), &[("authorization", &self.auth)], body.to_string()).await;
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// The one parked call's id, once there is exactly one.
    async fn parked_one(&self) -> u64 {
        eventually("one parked call", || async {
            let (_, v) = self.get("/approvals").await;
            let pending = v["pending"].as_array().cloned().unwrap_or_default();
            (pending.len() == 1).then(|| pending[0]["id"].as_u64().unwrap())
        })
        .await
    }
}

/// A proxy on `config` with the rule file `rules` (as `serve --permission-config rules`),
/// reloading both as `serve` does.
async fn serve(config: &Path, rules: Option<&Path>) -> portcullis::app::Running {
    let extra: Vec<PathBuf> = rules.iter().map(|r| r.to_path_buf()).collect();
    let c = portcullis::config::layered::load(Some(&config.to_path_buf()), &extra, None).unwrap();
    let p = proxy(&c).await;
    if let Some(r) = rules {
        p.shared.approvals.set_rule_file(r.to_path_buf());
    }
    let (cfg, files) = (config.to_path_buf(), extra.clone());
    p.reload_on_change(portcullis::reload::Reload {
        files: std::iter::once(config.to_path_buf()).chain(extra).collect(),
        load: Box::new(move || portcullis::config::layered::load(Some(&cfg), &files, None)),
        interval: std::time::Duration::from_millis(50),
    });
    p
}

fn write_config(dir: &Path, token_env: &str, peer: &Peer) -> PathBuf {
    let path = dir.join("portcullis.yaml");
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\nupstreams:\n  py: {{ url: \"{}\" }}\n\
         tools: [ {{ match: mcp__py__echo, kind: shell, command: /message }} ]\n\
         approvals: {{ channel: api, timeout: 60s }}\n",
        peer.url()
    );
    std::fs::write(&path, yaml).unwrap();
    path
}

#[tokio::test]
async fn allow_always_writes_the_previewed_rule_and_the_next_identical_call_is_not_asked() {
    let (token_env, token) = ("PORTCULLIS_TEST_ALWAYS_TOKEN_A", "always-operator-token-a");
    std::env::set_var(token_env, token);
    let peer = Peer::python("legacy");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), token_env, &peer);
    let rules = dir.path().join("rules.yaml");
    std::fs::write(&rules, RULES).unwrap();
    let p = serve(&config, Some(&rules)).await;
    let (url, admin) = (
        proxy_url(&p, "py"),
        Admin { base: format!("http://{}", p.admin_addr), auth: format!("Bearer {token}") },
    );
    let session = open_legacy_session(&url).await;

    let note = json!({"path": "a", "text": "hello"});
    let first = call(&url, &session, "write_note", note.clone());
    let id = admin.parked_one().await;
    let (status, preview) = admin.get(&format!("/approvals/{id}/always")).await;
    assert_eq!(status, 200, "{preview}");
    assert_eq!(preview["rule"], r#"mcp__py__write_note({"path":"a","text":"hello"})"#);
    let diff = preview["diff"].as_str().unwrap().to_owned();
    assert!(
        diff.contains("+    - \"mcp__py__write_note({\\\"path\\\":\\\"a\\\",\\\"text\\\":\\\"hello\\\"})\""),
        "{diff}"
    );

    // The operator confirms at the CLI, which shows the same diff.
    // Held, so a new guard cannot take the old one's address.
    let before_reload = p.shared.guard.load_full();
    let mut cli = tokio::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args([
            "approvals",
            "--admin",
            &admin.base,
            "--token-env",
            token_env,
            "allow",
            &id.to_string(),
            "--rule",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    cli.stdin.take().unwrap().write_all(b"y\n").await.unwrap();
    let out = cli.wait_with_output().await.unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}{}", String::from_utf8_lossy(&out.stderr));
    assert!(shown.contains(&diff), "the CLI shows the preview's diff:\n{shown}");
    assert!(shown.contains("allow_always (allowed)"), "{shown}");

    // The file changed exactly as previewed, comments and the other rules kept.
    let after = std::fs::read_to_string(&rules).unwrap();
    let name = rules.display().to_string();
    assert_eq!(portcullis::approval::always_file::unified(&name, RULES, &after), diff);
    assert!(
        after.contains("# arithmetic is harmless") && after.contains("deny: [mcp__py__delete_everything]")
    );
    assert_eq!(text_of(&first.await.unwrap()), "wrote 5 bytes to a");

    // Once the reload has read the file, the same call passes without an ask.
    eventually("the reload", || async {
        (!Arc::ptr_eq(&p.shared.guard.load_full(), &before_reload)).then_some(())
    })
    .await;
    let again = call(&url, &session, "write_note", note).await.unwrap();
    assert_eq!(text_of(&again), "wrote 5 bytes to a", "{again}");
    assert_eq!(peer.tools_run(), ["write_note", "write_note"]);
    let metrics = String::from_utf8(p.metrics.render()).unwrap();
    assert!(metrics.contains(r#"portcullis_approvals_total{decision="allow_once"} 1"#), "asked once only");

    // A different call still asks.
    let other = call(&url, &session, "write_note", json!({"path": "a", "text": "hello!"}));
    let id = admin.parked_one().await;
    let (status, _) = admin.post(&format!("/approvals/{id}"), json!({"decision": "deny"})).await;
    assert_eq!(status, 200);
    assert_eq!(other.await.unwrap()["result"]["isError"], true);

    // A compound shell command gets no "always": the preview and the write both refuse, and
    // the file stays as it was.
    let compound = call(&url, &session, "echo", json!({"message": "ls; rm -rf x"}));
    let id = admin.parked_one().await;
    let (status, v) = admin.get(&format!("/approvals/{id}/always")).await;
    assert_eq!(status, 409, "{v}");
    assert!(v["error"].as_str().unwrap().contains("not one simple command"), "{v}");
    let (status, v) = admin.post(&format!("/approvals/{id}"), json!({"decision": "allow_always"})).await;
    assert_eq!(status, 409, "{v}");
    assert_eq!(std::fs::read_to_string(&rules).unwrap(), after);
    admin.post(&format!("/approvals/{id}"), json!({"decision": "deny"})).await;
    assert_eq!(compound.await.unwrap()["result"]["isError"], true);
    assert_eq!(peer.tools_run(), ["write_note", "write_note"], "nothing else ran");
}

#[tokio::test]
async fn without_a_rule_file_allow_always_is_refused_with_409_and_the_call_stays_parked() {
    let (token_env, token) = ("PORTCULLIS_TEST_ALWAYS_TOKEN_B", "always-operator-token-b");
    std::env::set_var(token_env, token);
    let peer = Peer::python("legacy");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), token_env, &peer);
    let p = serve(&config, None).await;
    let (url, admin) = (
        proxy_url(&p, "py"),
        Admin { base: format!("http://{}", p.admin_addr), auth: format!("Bearer {token}") },
    );
    let session = open_legacy_session(&url).await;
    let pending = call(&url, &session, "write_note", json!({"path": "b", "text": "x"}));
    let id = admin.parked_one().await;
    for (status, v) in [
        admin.get(&format!("/approvals/{id}/always")).await,
        admin.post(&format!("/approvals/{id}"), json!({"decision": "allow_always"})).await,
    ] {
        assert_eq!(status, 409, "{v}");
        assert!(v["error"].as_str().unwrap().contains("--permission-config FILE"), "{v}");
    }
    assert_eq!(admin.parked_one().await, id, "still parked, undecided");
    admin.post(&format!("/approvals/{id}"), json!({"decision": "allow_once"})).await;
    assert_eq!(text_of(&pending.await.unwrap()), "wrote 1 bytes to b");
}
