//! "Allow always" must write a rule no wider than the asked call, and nothing in the call may
//! corrupt the operator's file: glob characters, YAML syntax (a document marker, an anchor and an
//! alias, Unicode line breaks YAML 1.1 reads as newlines) and a shell command's look-alike
//! variants. Each accepted rule is written, reloaded, and probed: the exact call passes, every
//! neighbour still asks, and the operator's deny still holds.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::harness::{call, serve, write_config, Admin};
use crate::support::{eventually, open_legacy_session, proxy_url, Peer};

const RULES: &str = "# Rules the team agreed on.\npermissions:\n  allow:\n    - mcp__py__add   # arithmetic is harmless\n  deny: [mcp__py__delete_everything, \"mcp__py__echo(rm -rf /tmp/r8-keep)\"]\n";

struct World {
    p: portcullis::app::Running,
    url: String,
    session: String,
    admin: Admin,
}

impl World {
    /// Whether `tool(args)` parks for a human (denied at once if so); false when it ran or was
    /// refused without an ask.
    async fn asks(&self, tool: &str, args: Value) -> (bool, Value) {
        let pending = call(&self.url, &self.session, tool, args);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while tokio::time::Instant::now() < deadline {
            let (_, v) = self.admin.get("/approvals").await;
            if let Some(p) = v["pending"].as_array().and_then(|a| a.first()) {
                let id = p["id"].as_u64().unwrap();
                self.admin.post(&format!("/approvals/{id}"), json!({"decision": "deny"})).await;
                return (true, pending.await.unwrap());
            }
            if pending.is_finished() {
                return (false, pending.await.unwrap());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("{tool} neither parked nor finished");
    }

    /// Allows `tool(args)` always when a rule is offered (waiting for the reload to read it);
    /// the rule, or the refusal.
    async fn always(&self, tool: &str, args: Value) -> Result<String, Value> {
        let pending = call(&self.url, &self.session, tool, args);
        let id = self.admin.parked_one().await;
        let (status, preview) = self.admin.get(&format!("/approvals/{id}/always")).await;
        if status != 200 {
            self.admin.post(&format!("/approvals/{id}"), json!({"decision": "deny"})).await;
            let _ = pending.await;
            return Err(preview);
        }
        let before = self.p.shared.guard.load_full();
        let body = json!({"decision": "allow_always", "base": preview["base"]});
        let (status, v) = self.admin.post(&format!("/approvals/{id}"), body).await;
        let _ = pending.await;
        if status != 200 {
            return Err(v);
        }
        eventually("the reload", || async {
            (!Arc::ptr_eq(&self.p.shared.guard.load_full(), &before)).then_some(())
        })
        .await;
        Ok(v["rule"].as_str().unwrap().to_owned())
    }

    async fn deny_holds(&self) {
        let (asked, v) = self.asks("delete_everything", json!({})).await;
        assert!(!asked && v["result"]["isError"] == true, "the operator's deny: {v}");
        let (asked, v) = self.asks("echo", json!({"message": "rm -rf /tmp/r8-keep"})).await;
        assert!(!asked && v["result"]["isError"] == true, "the operator's deny: {v}");
    }
}

async fn world(token_env: &str, token: &str) -> (World, tempfile::TempDir, Peer, std::path::PathBuf) {
    std::env::set_var(token_env, token);
    let peer = Peer::python("legacy");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), token_env, &peer.url(), "");
    let rules = dir.path().join("rules.yaml");
    std::fs::write(&rules, RULES).unwrap();
    let p = serve(&config, Some(&rules)).await;
    let (url, admin) = (proxy_url(&p, "py"), Admin::of(&p, token));
    let session = open_legacy_session(&url).await;
    (World { p, url, session, admin }, dir, peer, rules)
}

#[tokio::test]
async fn glob_characters_in_a_generic_call_are_written_escaped_and_allow_that_call_alone() {
    let (w, _dir, _peer, rules) = world("PORTCULLIS_TEST_R8_WIDE_A", "r8-wide-operator-token-a").await;
    let star = json!({"path": "*", "text": "**"});
    let rule = w.always("write_note", star.clone()).await.unwrap();
    assert_eq!(rule, r#"mcp__py__write_note({"path":"\*","text":"\*\*"})"#);
    let (asked, v) = w.asks("write_note", star).await;
    assert!(!asked, "the exact call passes: {v}");
    for neighbour in [
        json!({"path": "b", "text": "x"}),
        json!({"path": "*", "text": "x"}),
        json!({"path": "*", "text": "**", "extra": 1}),
    ] {
        assert!(w.asks("write_note", neighbour.clone()).await.0, "{neighbour} must still ask");
    }
    w.deny_holds().await;
    let text = std::fs::read_to_string(&rules).unwrap();
    assert!(text.contains("# arithmetic is harmless"), "{text}");
}

#[tokio::test]
async fn yaml_syntax_and_unicode_line_breaks_in_a_call_neither_corrupt_the_file_nor_drop_a_deny() {
    let (w, _dir, _peer, rules) = world("PORTCULLIS_TEST_R8_WIDE_B", "r8-wide-operator-token-b").await;
    for hostile in [
        "a\n---\npermissions: {allow: [\"mcp__py__*\"]}",
        "&all [\"mcp__py__*\"] *all",
        "x\u{85}- mcp__py__delete_everything\u{2028}- \"mcp__py__*\"",
        "\"], deny: [], allow: [\"mcp__py__*",
        "#",
    ] {
        let args = json!({"path": "y", "text": hostile});
        match w.always("write_note", args.clone()).await {
            Ok(rule) => {
                assert!(!w.asks("write_note", args).await.0, "{rule}: the exact call passes");
            }
            Err(v) => assert!(v["error"].is_string(), "{hostile:?}: {v}"),
        }
        assert!(w.asks("write_note", json!({"path": "y", "text": "other"})).await.0, "{hostile:?}: widened");
        assert!(w.asks("web_post", json!({"url": "http://x", "body": "b"})).await.0, "{hostile:?}: widened");
        w.deny_holds().await;
        let text = std::fs::read_to_string(&rules).unwrap();
        assert!(text.contains("mcp__py__delete_everything"), "{hostile:?}:\n{text}");
    }
}

#[tokio::test]
async fn a_shell_command_gets_its_exact_line_and_every_longer_or_compound_line_still_asks() {
    let (w, _dir, _peer, _rules) = world("PORTCULLIS_TEST_R8_WIDE_C", "r8-wide-operator-token-c").await;
    let rule = w.always("echo", json!({"message": "touch /tmp/r8-x"})).await.unwrap();
    assert_eq!(rule, "mcp__py__echo(touch /tmp/r8-x)");
    assert!(!w.asks("echo", json!({"message": "touch /tmp/r8-x"})).await.0);
    for neighbour in [
        "touch /tmp/r8-x /etc/passwd",
        "touch /tmp/r8-x; rm -rf /tmp/r8-z",
        "touch /tmp/r8-x && curl http://evil.example",
        "touch /tmp/r8-x $(id)",
        "touch /tmp/r8-x > /etc/passwd",
        "env LD_PRELOAD=/tmp/x.so touch /tmp/r8-x",
        "/tmp/touch /tmp/r8-x",
    ] {
        let (asked, v) = w.asks("echo", json!({ "message": neighbour })).await;
        assert!(asked || v["result"]["isError"] == true, "{neighbour:?} passed on the written rule: {v}");
    }
    for refused in ["touch /tmp/r8-*", "touch ~/x", "touch a=~/x", "touch '/tmp/a b'", "touch /tmp/r8-x:"] {
        if let Ok(rule) = w.always("echo", json!({ "message": refused })).await {
            assert!(!rule.contains('*') && !rule.ends_with(":*)"), "{refused:?} wrote {rule}");
        }
    }
    w.deny_holds().await;
}
