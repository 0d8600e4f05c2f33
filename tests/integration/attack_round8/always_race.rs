//! "Allow always" between the preview and the write: the operator reads a diff, and what is
//! written must be that diff. The CLI sends the preview's digest (`base`) and a file changed
//! since is refused; the console's confirm button sends `{"decision": "allow_always"}` alone,
//! so whatever the file became meanwhile is rewritten — here, the whole file as JSON, every
//! comment gone, where the operator was shown one added line.

use serde_json::json;

use super::harness::{call, serve, write_config, Admin};
use crate::support::{open_legacy_session, proxy_url, text_of, Peer};

const RULES: &str = "# Rules the team agreed on.\npermissions:\n  allow:\n    - mcp__py__add   # arithmetic is harmless\n  deny: [mcp__py__delete_everything]\n";

/// The same rules, edited by a teammate between the preview and the confirm: flow style, and a
/// comment that matters.
const EDITED: &str = "# Rules the team agreed on.\n# Security review 2026-11: never allow delete_everything.\npermissions: { allow: [mcp__py__add], deny: [mcp__py__delete_everything] }\n";

struct Setup {
    _dir: tempfile::TempDir,
    _peer: Peer,
    rules: std::path::PathBuf,
    url: String,
    session: String,
    admin: Admin,
    _p: portcullis::app::Running,
}

async fn setup(token_env: &str, token: &str) -> Setup {
    std::env::set_var(token_env, token);
    let peer = Peer::python("legacy");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), token_env, &peer.url(), "");
    let rules = dir.path().join("rules.yaml");
    std::fs::write(&rules, RULES).unwrap();
    let p = serve(&config, Some(&rules)).await;
    let (url, admin) = (proxy_url(&p, "py"), Admin::of(&p, token));
    let session = open_legacy_session(&url).await;
    Setup { _dir: dir, _peer: peer, rules, url, session, admin, _p: p }
}

#[tokio::test]
async fn the_consoles_allow_always_writes_only_the_diff_the_operator_was_shown() {
    let s = setup("PORTCULLIS_TEST_R8_RACE_A", "r8-race-operator-token-a").await;
    let pending = call(&s.url, &s.session, "write_note", json!({"path": "a", "text": "hello"}));
    let id = s.admin.parked_one().await;
    let (status, preview) = s.admin.get(&format!("/approvals/{id}/always")).await;
    assert_eq!(status, 200, "{preview}");
    let shown = preview["diff"].as_str().unwrap().to_owned();
    assert_eq!(shown.lines().filter(|l| l.starts_with('+') && !l.starts_with("+++")).count(), 1, "{shown}");

    // A teammate's edit lands while the dialog is open.
    std::fs::write(&s.rules, EDITED).unwrap();
    // A body without the preview's base (what the console used to post) writes nothing.
    let (status, v) = s.admin.post(&format!("/approvals/{id}"), json!({"decision": "allow_always"})).await;
    assert_eq!((status, std::fs::read_to_string(&s.rules).unwrap().as_str()), (400, EDITED), "{v}");
    // The console's confirm now sends the preview's base (driven in real Chromium by
    // console_table::the_console_tables_real_decisions_in_local_time_filters_them_and_counts_down_an_ask).
    let body = json!({"decision": "allow_always", "base": preview["base"]});
    let (status, v) = s.admin.post(&format!("/approvals/{id}"), body).await;
    let after = std::fs::read_to_string(&s.rules).unwrap();
    if status == 200 {
        let _ = pending.await;
    } else {
        s.admin.post(&format!("/approvals/{id}"), json!({"decision": "deny"})).await;
        let _ = pending.await;
    }
    let written = portcullis::approval::always_file::unified("f", EDITED, &after);
    assert!(
        status == 409 && after == EDITED,
        "HTTP {status} {v}\nshown:\n{shown}\nwritten instead:\n{written}\nfile now:\n{after}"
    );
}

#[tokio::test]
async fn allow_always_with_the_previews_base_refuses_a_rule_file_changed_since_and_writes_nothing() {
    let s = setup("PORTCULLIS_TEST_R8_RACE_B", "r8-race-operator-token-b").await;
    let pending = call(&s.url, &s.session, "write_note", json!({"path": "a", "text": "hello"}));
    let id = s.admin.parked_one().await;
    let (status, preview) = s.admin.get(&format!("/approvals/{id}/always")).await;
    assert_eq!(status, 200, "{preview}");
    std::fs::write(&s.rules, EDITED).unwrap();
    let body = json!({"decision": "allow_always", "base": preview["base"]});
    let (status, v) = s.admin.post(&format!("/approvals/{id}"), body).await;
    assert_eq!(status, 409, "{v}");
    assert!(v["error"].as_str().unwrap().contains("changed since the preview"), "{v}");
    assert_eq!(std::fs::read_to_string(&s.rules).unwrap(), EDITED, "nothing written");
    assert_eq!(s.admin.parked_one().await, id, "the call is still parked, undecided");
    // An old id, once decided, cannot be replayed into a rule.
    s.admin.post(&format!("/approvals/{id}"), json!({"decision": "allow_once"})).await;
    assert_eq!(text_of(&pending.await.unwrap()), "wrote 5 bytes to a");
    let (status, v) = s.admin.post(&format!("/approvals/{id}"), json!({"decision": "allow_always"})).await;
    assert_eq!(status, 404, "{v}");
    assert_eq!(std::fs::read_to_string(&s.rules).unwrap(), EDITED, "a replayed id writes nothing");
}
