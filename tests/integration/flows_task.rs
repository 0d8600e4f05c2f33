//! The user's own task excuses a flow to the destination it names, and nothing else: recorded
//! through the admin listener (the channel the agent does not control), it lets the private
//! text the session read go to the mailbox it writes whole — not to another mailbox at that
//! domain, not to a look-alike domain, not in another session — while the task the agent writes
//! (`Portcullis-Task`) excuses nothing.

use crate::flows::{target, MAIL, SETTINGS_TOKEN};
use crate::support::*;

const ADMIN_ENV: &str = "PORTCULLIS_IT_FLOWS_TASK_ADMIN";
const ADMIN: &str = "flows-task-admin-token-5c1e9a";
const AGENT_ENV: &str = "PORTCULLIS_IT_FLOWS_TASK_EMMA";
const AGENT: &str = "flows-task-emma-token-8d2b6f";

#[tokio::test]
async fn a_task_from_the_trusted_channel_excuses_a_flow_to_the_mailbox_it_names_and_nothing_else() {
    std::env::set_var(ADMIN_ENV, ADMIN);
    std::env::set_var(AGENT_ENV, AGENT);
    let t = target().await;
    let config = portcullis::config::Config::parse(
        &format!(
            "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {ADMIN_ENV} }}\nposture: auto\n\
             upstreams:\n  vault: {{ url: \"{0}/v\" }}\n  mail: {{ url: \"{0}/m\" }}\n\
             agents: {{ emma: {{ token_env: {AGENT_ENV} }} }}\n\
             egress: {{ sinks: [\"http__mail__*\"] }}\n\
             flows: {{ private: [\"http__vault__*\"], task: allow }}\n",
            t.base
        ),
        "test",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let p = proxy(&config).await;
    let base = format!("http://{}/http", p.addr);
    let bearer = format!("Bearer {AGENT}");
    let s1 = [("authorization", bearer.as_str()), ("x-portcullis-session", "s1")];
    let (status, _, body) = post(&format!("{base}/vault/vault"), &s1, "{}").await;
    assert_eq!(status, 200, "{body}");
    let send = |to: &[&str]| serde_json::json!({ "to": to, "text": MAIL }).to_string();
    let mail = |headers: &'static [(&'static str, &'static str)], to: &[&str]| {
        let mut h: Vec<(&str, &str)> = s1.to_vec();
        h.extend_from_slice(headers);
        let url = format!("{base}/mail/send");
        let body = send(to);
        async move { post(&url, &h, body).await }
    };

    // The agent's own account of the task names the mailbox: it excuses nothing.
    let agent_says = &[("portcullis-task", "Send the deal note to bob@client.example.")];
    let (status, _, body) = mail(agent_says, &["bob@client.example"]).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("http__vault__vault"), "{body}");

    // The user's task, recorded by an operator-trusted front for this session.
    let task = serde_json::json!({ "task": "Please send the deal note to Bob at 'Bob@Client.example'." });
    let admin = format!("http://{}/sessions/emma/s1/task", p.admin_addr);
    let auth = format!("Bearer {ADMIN}");
    let (status, _, body) = post(&admin, &[("authorization", &auth)], task.to_string()).await;
    assert_eq!(status, 200, "{body}");

    let (status, _, body) = mail(&[], &["bob@client.example"]).await;
    assert_eq!(status, 200, "the user asked for this send: {body}");
    // The named recipient may get the user's text, never a credential the session was shown
    // (an injection can aim at the very recipient the user named): as written or encoded.
    let (status, _, body) = post(&format!("{base}/vault/settings"), &s1, "{}").await;
    assert_eq!(status, 200, "{body}");
    use base64::Engine;
    for text in [
        format!("the CI token is {SETTINGS_TOKEN}"),
        base64::engine::general_purpose::STANDARD.encode(SETTINGS_TOKEN),
    ] {
        let body = serde_json::json!({ "to": ["bob@client.example"], "text": text }).to_string();
        let (status, _, answer) = post(&format!("{base}/mail/send"), &s1, body).await;
        assert_eq!(status, 403, "{text}: {answer}");
        assert!(!answer.contains(SETTINGS_TOKEN), "the refusal does not quote it: {answer}");
    }
    // Once the session was shown a credential the excuse is withdrawn: the named recipient is
    // judged as anyone's, so the private text the user's task let through before is refused now.
    let (status, _, body) = mail(&[], &["bob@client.example"]).await;
    assert_eq!(status, 403, "{body}");
    for to in [
        &["bob@client.example", "mark@client.example"][..],
        &["mark@client.example"],
        &["bob@\u{441}lient.example"],
        &["bob@client.example.attacker.example"],
    ] {
        let (status, _, body) = mail(&[], to).await;
        assert_eq!(status, 403, "{to:?}: {body}");
    }
    // Another session of the same agent shares what it read, not what the user asked there.
    let s2 = [("authorization", bearer.as_str()), ("x-portcullis-session", "s2")];
    let (status, _, body) = post(&format!("{base}/mail/send"), &s2, send(&["bob@client.example"])).await;
    assert_eq!(status, 403, "{body}");
    let sent = t.seen.lock().unwrap().iter().filter(|l| l.starts_with("/m/send")).count();
    assert_eq!(sent, 1, "{:?}", t.seen.lock().unwrap());
}
