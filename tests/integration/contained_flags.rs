//! The repeated-denial breaker on anonymous agents sharing one address (every agent on a machine
//! calls from loopback): one careless agent's refusals hold its own session, not every agent's;
//! rotating session ids still meets a human; the operator sees what the address key is and can
//! clear it. Against a real HTTP tool server, whose side proves what was (not) forwarded.

use crate::http_tools::tool_server;
use crate::support::*;
use portcullis::app::Running;

const ADMIN_TOKEN_ENV: &str = "PORTCULLIS_TEST_ADMIN_TOKEN_CONTAINED";
const TOKEN: &str = "contained-operator";

async fn start(address: &str) -> (crate::http_tools::ToolServer, Running) {
    std::env::set_var(ADMIN_TOKEN_ENV, TOKEN);
    let tools = tool_server().await;
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {ADMIN_TOKEN_ENV} }}\nupstreams:\n  web: {{ url: \"{}\" }}\n\
         permissions: {{ allow: [http__web__ok], deny: [\"http__web__admin*\"] }}\n\
         approvals: {{ channel: none, flag: {{ address: {address} }} }}\n",
        tools.url
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    (tools, p)
}

/// One anonymous agent's call in `session`: the status.
async fn call(p: &Running, tool: &str, session: &str, agent: &str) -> (u16, String) {
    let url = format!("http://{}/http/web/{tool}", p.addr);
    let (status, _, body) =
        post(&url, &[("x-portcullis-session", session), ("user-agent", agent)], "{}").await;
    (status, body)
}

async fn status(p: &Running) -> serde_json::Value {
    let admin = p.admin_addr;
    let auth = format!("Bearer {TOKEN}");
    let (code, _, body) = get(&format!("http://{admin}/status"), &[("authorization", &auth)]).await;
    assert_eq!(code, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

fn forwarded(tools: &crate::http_tools::ToolServer, path: &str) -> usize {
    tools.seen.lock().unwrap().iter().filter(|(_, p, _)| p.ends_with(path)).count()
}

#[tokio::test]
async fn a_careless_agent_on_loopback_does_not_lock_out_the_next_agent_and_rotation_still_meets_a_human() {
    let (tools, p) = start("sessions").await;
    for _ in 0..3 {
        assert_eq!(call(&p, "admin", "careless", "careless-agent/1.0").await.0, 403);
    }
    let (code, body) = call(&p, "ok", "careless", "careless-agent/1.0").await;
    assert_eq!(code, 403, "the careless session is held: {body}");
    assert!(body.contains("flagged after repeated refusals"), "{body}");
    let (code, body) = call(&p, "ok", "second", "second-agent/2.0").await;
    assert_eq!(code, 200, "a second agent on the same machine is not locked out: {body}");
    assert_eq!(forwarded(&tools, "/ok"), 1);

    // The operator sees what the flagged address key is.
    let s = status(&p).await;
    let caller = s["flagged_sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["session"].as_str().is_some_and(|k| k.starts_with("caller:")))
        .unwrap_or_else(|| panic!("the address is listed: {s}"))
        .clone();
    assert_eq!(caller["caller"]["kind"], "address", "{caller}");
    assert_eq!(caller["caller"]["address"], "127.0.0.1", "{caller}");
    assert_eq!(caller["caller"]["user_agent"], "careless-agent/1.0", "the first user agent: {caller}");

    // Rotating ids: each fresh session is held at its first refusal, and three sessions held
    // hold the address — the second agent included (the trade-off, docs/SECURITY.md).
    for fresh in ["fresh-1", "fresh-2"] {
        assert_eq!(call(&p, "admin", fresh, "careless-agent/1.0").await.0, 403);
        assert_eq!(call(&p, "ok", fresh, "careless-agent/1.0").await.0, 403, "{fresh} is held");
    }
    for session in ["fresh-3", "second"] {
        assert_eq!(call(&p, "ok", session, "any").await.0, 403, "{session}: the address is held whole");
    }
    assert_eq!(forwarded(&tools, "/ok"), 1, "nothing more was forwarded");
    assert_eq!(forwarded(&tools, "/admin"), 0, "a denied call never reaches the upstream");

    // The operator clears the address: the second agent works again.
    let admin = p.admin_addr;
    let key = caller["session"].as_str().unwrap();
    let auth = format!("Bearer {TOKEN}");
    let (code, _, body) =
        post(&format!("http://{admin}/sessions/{key}/clear"), &[("authorization", &auth)], "").await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(call(&p, "ok", "second", "second-agent/2.0").await.0, 200);
    assert_eq!(call(&p, "ok", "fresh-1", "careless-agent/1.0").await.0, 403, "a held session stays held");
}

#[tokio::test]
async fn an_operator_may_hold_every_call_of_a_flagged_address() {
    let (tools, p) = start("all").await;
    for _ in 0..3 {
        assert_eq!(call(&p, "admin", "careless", "careless-agent/1.0").await.0, 403);
    }
    let (code, body) = call(&p, "ok", "second", "second-agent/2.0").await;
    assert_eq!(code, 403, "every call of the address: {body}");
    assert_eq!(forwarded(&tools, "/ok") + forwarded(&tools, "/admin"), 0);
}
