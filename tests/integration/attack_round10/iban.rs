//! `egress: { ask: [iban] }` puts a human before any call whose arguments carry an account
//! number. The scan (and its pre-filter, `egress::quiet::iban_head`) reads an IBAN only in upper
//! case, its head (`DE89`) unbroken and its groups split by single spaces. The libraries a payment
//! tool validates with read more: python-stdnum's `iban.validate` upper-cases and drops spaces,
//! `-` and `.` anywhere (`de89-3704-…` is DE89370400440532013000), schwifty upper-cases and drops
//! whitespace (checked by hand with python-stdnum 2.x and schwifty 2025.x; neither is a test
//! dependency). Headless (no approvals channel), an ask is a refusal.

use serde_json::json;

use crate::support::{config, proxy, proxy_url, py_client, text_of, Peer};

const ACCOUNT: &str = "DE89370400440532013000";

fn rig(peer: &Peer) -> portcullis::config::Config {
    config(
        &[("py", &peer.url())],
        "posture: auto\npermissions: { allow: [\"mcp__*\"] }\negress: { ask: [iban] }\n",
    )
}

async fn sent(p: &portcullis::app::Running, message: &str) -> serde_json::Value {
    let args = json!({ "message": format!("pay 100 EUR to {message}") }).to_string();
    py_client(&proxy_url(p, "py"), "legacy", &["call", "echo", &args]).await.remove(0)
}

#[tokio::test]
async fn an_account_in_upper_case_groups_is_asked_about() {
    let peer = Peer::python("legacy");
    let p = proxy(&rig(&peer)).await;
    for spelling in [ACCOUNT, "DE89 3704 0044 0532 0130 00"] {
        let out = sent(&p, spelling).await;
        assert!(text_of(&out).contains("egress.ask: iban"), "{spelling}: {out}");
    }
    assert!(peer.tools_run().is_empty(), "{:?}", peer.tools_run());
    p.shutdown().await;
}

#[tokio::test]
async fn an_account_as_payment_libraries_read_it_is_asked_about() {
    let peer = Peer::python("legacy");
    let p = proxy(&rig(&peer)).await;
    let mut passed = Vec::new();
    for spelling in [
        "de89370400440532013000",
        "de89 3704 0044 0532 0130 00",
        "DE89-3704-0044-0532-0130-00",
        "DE89.3704.0044.0532.0130.00",
        "DE 89 3704 0044 0532 0130 00",
    ] {
        let out = sent(&p, spelling).await;
        if !text_of(&out).contains("egress.ask: iban") {
            passed.push(spelling);
        }
    }
    assert!(passed.is_empty(), "reached the tool unasked: {passed:?} (it ran {:?})", peer.tools_run());
    p.shutdown().await;
}
