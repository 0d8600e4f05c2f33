//! What the checks issue 25 added cost on a delegated agent's path through the door, measured
//! against the lookup that was there before. `cargo test --lib identity::cost_tests -- --ignored
//! --nocapture`: prints ns per call; asserts nothing about time (the figures are the report's).

use std::hint::black_box;
use std::time::{Instant, SystemTime};

use super::delegation::{Delegations, MintRequest, Minting};
use super::*;
use crate::rules::kinds::ToolKinds;
use crate::rules::Profile;

const N: u32 = 200_000;

fn per_call(what: &str, mut f: impl FnMut()) -> f64 {
    for _ in 0..N / 10 {
        f();
    }
    let t = Instant::now();
    for _ in 0..N {
        f();
    }
    let ns = t.elapsed().as_nanos() as f64 / f64::from(N);
    println!("{what:<64} {ns:>8.1} ns");
    ns
}

#[tokio::test]
#[ignore = "a measurement: run with --ignored --nocapture"]
async fn cost_of_holding_a_delegation_against_the_credential_it_was_minted_under() {
    std::env::set_var("PORTCULLIS_COST_DEV", "cost-dev-token-0123456789abcdef");
    let dir = tempfile::tempdir().unwrap();
    let jwks = dir.path().join("jwks.json");
    // Five published keys (a provider mid-rotation publishes two or three).
    let keys: Vec<serde_json::Value> = (0..5)
        .map(|i| {
            serde_json::json!({"kty": "OKP", "crv": "Ed25519", "kid": format!("k{i}"), "alg": "EdDSA",
            "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"})
        })
        .collect();
    std::fs::write(&jwks, serde_json::json!({ "keys": keys }).to_string()).unwrap();
    let mut yaml = String::from("agents:\n  dev: { token_env: PORTCULLIS_COST_DEV }\n  alice: {}\n");
    for i in 0..8 {
        std::env::set_var(format!("PORTCULLIS_COST_A{i}"), format!("cost-agent-token-{i}-0123456789"));
        yaml.push_str(&format!("  a{i}: {{ token_env: PORTCULLIS_COST_A{i} }}\n"));
    }
    yaml.push_str(&format!(
        "auth: {{ jwt: {{ issuer: iss, audience: aud, jwks: \"{}\" }} }}\n",
        jwks.display()
    ));
    let config = crate::config::Config::parse(&yaml, "cost").unwrap_or_else(|e| panic!("{e}"));
    let ids = Identities::build(&config.policy.identity, None).unwrap();
    let store = Delegations::default();
    let kinds = ToolKinds::default();
    let m = Minting {
        settings: Default::default(),
        root_profile: Profile::Standard,
        kinds: &kinds,
        upstream: &|_: &str| true,
    };
    let now = SystemTime::now();
    let dev = ids.authenticate("cost-dev-token-0123456789abcdef").unwrap();
    let by_token = store.mint(&dev, MintRequest::default(), &m, now).unwrap().token;
    let alice = Agent::authenticated(
        "alice".into(),
        Credential {
            expires: Some(now + std::time::Duration::from_secs(3600)),
            provenance: Provenance::Jwt {
                issuer: "iss".into(),
                key: ids.jwt.as_ref().unwrap().last_key_print().unwrap(),
            },
        },
    );
    let by_jwt = store.mint(&alice, MintRequest::default(), &m, now).unwrap().token;
    assert_eq!(ids.authenticate_with(&by_token, &store).unwrap().name.as_ref(), "dev");
    assert_eq!(ids.authenticate_with(&by_jwt, &store).unwrap().name.as_ref(), "alice");

    let before = per_call("before: the grant lookup (digest, table)", || {
        black_box(store.authenticate(black_box(&by_token), SystemTime::now()).unwrap());
    });
    let token = per_call("after: lookup + root configured + static token still vouches", || {
        black_box(ids.authenticate_with(black_box(&by_token), &store).unwrap());
    });
    let jwt = per_call("after: lookup + root configured + JWT key still published", || {
        black_box(ids.authenticate_with(black_box(&by_jwt), &store).unwrap());
    });
    println!("added per delegated call: static token {:.1} ns, JWT {:.1} ns", token - before, jwt - before);
}
