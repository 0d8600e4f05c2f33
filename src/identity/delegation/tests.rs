use super::*;

fn minting(kinds: &ToolKinds) -> Minting<'_> {
    Minting {
        settings: DelegationSettings::default(),
        root_profile: Profile::Standard,
        kinds,
        upstream: &|u: &str| matches!(u, "fs" | "web" | "shell"),
    }
}

fn req(json: &str) -> MintRequest {
    MintRequest::parse(json.as_bytes()).unwrap_or_else(|e| panic!("{json}: {e}"))
}

fn dev() -> Agent {
    Agent::configured("dev".into())
}

const T0: Duration = Duration::from_secs(1_700_000_000);

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + T0 + Duration::from_secs(secs)
}

#[test]
fn a_minted_token_authenticates_as_the_child_with_its_chain() {
    let (kinds, store) = (ToolKinds::default(), Delegations::default());
    let m = store.mint(&dev(), req(r#"{"name":"reviewer","ttl":"15m"}"#), &minting(&kinds), at(0)).unwrap();
    assert!(m.token.starts_with(TOKEN_PREFIX) && m.token.len() >= TOKEN_PREFIX.len() + 43, "{}", m.token);
    assert_eq!(&*m.agent, "dev>reviewer");
    assert_eq!(m.expires, at(900));
    let a = store.authenticate(&m.token, at(1)).unwrap();
    assert_eq!((&*a.name, &*a.id), ("dev", "dev>reviewer"));
    assert_eq!(a.delegated_by, vec![Arc::<str>::from("dev")]);
    assert!(!a.id.contains('/'));
    // Only the digest is kept.
    assert!(!format!("{:?}", store.table()).contains(&m.token[TOKEN_PREFIX.len()..]));
    // A wrong token, or one a byte off, is unknown.
    let mut off = m.token.clone();
    off.pop();
    assert!(store.authenticate(&off, at(1)).is_err());
}

#[test]
fn a_grandchild_carries_every_ancestor_nearest_first() {
    let (kinds, store) = (ToolKinds::default(), Delegations::default());
    let a = store.mint(&dev(), req(r#"{"name":"a"}"#), &minting(&kinds), at(0)).unwrap();
    let child = store.authenticate(&a.token, at(0)).unwrap();
    let b = store
        .mint(&child, req(r#"{"name":"b","deny":["mcp__fs__write"]}"#), &minting(&kinds), at(0))
        .unwrap();
    let grandchild = store.authenticate(&b.token, at(0)).unwrap();
    assert_eq!(&*grandchild.id, "dev>a>b");
    assert_eq!(grandchild.delegated_by, vec![Arc::<str>::from("dev>a"), Arc::from("dev")]);
    let g = store.grant_of("dev>a>b", at(0)).unwrap();
    assert_eq!(g.chain.len(), 2);
    assert_eq!(g.chain[1].rules.len(), 1);
    assert_eq!(g.ancestors, vec![a.id.clone()]);
}

#[test]
fn a_child_cannot_widen_anything() {
    let (kinds, store) = (ToolKinds::default(), Delegations::default());
    let m = minting(&kinds);
    let parent = store
        .mint(&dev(), req(r#"{"name":"p","profile":"readonly","upstreams":["fs"],"ttl":"1m"}"#), &m, at(0))
        .unwrap();
    let parent = store.authenticate(&parent.token, at(0)).unwrap();
    let cases = [
        (r#"{"profile":"standard"}"#, "wider than dev>p's (readonly)"),
        (r#"{"upstreams":["web"]}"#, "outside dev>p's upstreams (fs)"),
        (r#"{"ttl":"2m"}"#, "outlives dev>p's own credential"),
        (r#"{"ttl":"2h"}"#, "longer than delegation.max_ttl"),
    ];
    for (body, why) in cases {
        match store.mint(&parent, req(body), &m, at(0)) {
            Err(MintError::Forbidden(msg)) => assert!(msg.contains(why), "{body}: {msg}"),
            other => panic!("{body}: {other:?}"),
        }
    }
    // The root's own profile bounds its children too.
    match store.mint(&dev(), req(r#"{"profile":"privileged"}"#), &m, at(0)) {
        Err(MintError::Forbidden(msg)) => assert!(msg.contains("wider than dev's (standard)"), "{msg}"),
        other => panic!("{other:?}"),
    }
    // What stays within the parent's is minted, and inherits its allowlist and expiry.
    let ok = store.mint(&parent, req(r#"{"name":"q","upstreams":["fs"],"ttl":"30s"}"#), &m, at(0)).unwrap();
    assert_eq!(ok.expires, at(30));
    let inherit = store.mint(&parent, req(r#"{"name":"r"}"#), &m, at(10)).unwrap();
    assert_eq!(inherit.expires, at(60), "no ttl: as long as the parent's");
    assert!(!store.grant_of("dev>p>r", at(10)).unwrap().reaches("web"));
}

#[test]
fn bad_requests_are_refused_by_name() {
    let kinds = ToolKinds::default();
    for (body, why) in [
        ("{", "not JSON"),
        ("[]", "JSON object"),
        (r#"{"deny":[],"colour":"red"}"#, "unknown field(s): colour"),
        (r#"{"allow":["mcp__*"]}"#, "can only narrow"),
        (r#"{"deny":"mcp__fs__write"}"#, "invalid type"),
    ] {
        let err = MintRequest::parse(body.as_bytes()).unwrap_err();
        assert!(err.to_string().contains(why), "{body}: {err}");
    }
    let store = Delegations::default();
    for (body, why) in [
        (r#"{"name":"a/b"}"#, "name \"a/b\""),
        (r#"{"name":"a>b"}"#, "name \"a>b\""),
        (r#"{"profile":"root"}"#, "not one of"),
        (r#"{"ttl":"5"}"#, "ttl"),
        (r#"{"ttl":"0s"}"#, "longer than zero"),
        (r#"{"upstreams":["nope"]}"#, "\"nope\" is not configured"),
        (r#"{"deny":["Shell(rm:*"]}"#, "deny[0]"),
    ] {
        match store.mint(&dev(), req(body), &minting(&kinds), at(0)) {
            Err(MintError::BadRequest(msg)) => assert!(msg.contains(why), "{body}: {msg}"),
            other => panic!("{body}: {other:?}"),
        }
    }
    assert!(store.is_empty());
}

#[test]
fn depth_is_bounded_by_max_depth() {
    let (kinds, store) = (ToolKinds::default(), Delegations::default());
    let m = minting(&kinds);
    let mut agent = dev();
    for name in ["one", "two"] {
        let t = store.mint(&agent, req(&format!(r#"{{"name":"{name}"}}"#)), &m, at(0)).unwrap();
        agent = store.authenticate(&t.token, at(0)).unwrap();
    }
    match store.mint(&agent, req("{}"), &m, at(0)) {
        Err(MintError::Forbidden(msg)) => assert!(msg.contains("max_depth is 2"), "{msg}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_store_is_bounded_in_all_and_per_root() {
    let kinds = ToolKinds::default();
    let m = minting(&kinds);
    let store = Delegations::with_capacity(3, 2);
    let ci = Agent::configured("ci".into());
    store.mint(&dev(), req("{}"), &m, at(0)).unwrap();
    store.mint(&dev(), req("{}"), &m, at(0)).unwrap();
    assert!(matches!(store.mint(&dev(), req("{}"), &m, at(0)), Err(MintError::Full(_))), "per root");
    store.mint(&ci, req("{}"), &m, at(0)).unwrap();
    assert!(matches!(store.mint(&ci, req("{}"), &m, at(0)), Err(MintError::Full(_))), "in all");
    // A live name is not handed out twice.
    let store = Delegations::default();
    store.mint(&dev(), req(r#"{"name":"x"}"#), &m, at(0)).unwrap();
    assert!(matches!(store.mint(&dev(), req(r#"{"name":"x"}"#), &m, at(0)), Err(MintError::Conflict(_))));
}

#[test]
fn expired_grants_are_refused_and_purged() {
    let (kinds, store) = (ToolKinds::default(), Delegations::with_capacity(2, 2));
    let m = minting(&kinds);
    let a = store.mint(&dev(), req(r#"{"name":"a","ttl":"1s"}"#), &m, at(0)).unwrap();
    store.mint(&dev(), req(r#"{"name":"b","ttl":"1s"}"#), &m, at(0)).unwrap();
    assert!(store.authenticate(&a.token, at(0)).is_ok());
    assert_eq!(
        store.authenticate(&a.token, at(1)),
        Err(AuthError::Invalid("the delegated credential has expired"))
    );
    assert!(store.grant_of("dev>b", at(1)).is_none(), "expired is not live");
    // Minting sweeps: the full store has room again, and the name is free.
    store.mint(&dev(), req(r#"{"name":"b"}"#), &m, at(2)).unwrap();
    assert_eq!(store.len(), 1);
    // Lookups sweep too, now and then.
    let store = Delegations::default();
    store.mint(&dev(), req(r#"{"ttl":"1s"}"#), &m, at(0)).unwrap();
    let _ = store.authenticate("pcd_nothing", at(60));
    assert!(store.is_empty());
}

#[test]
fn revoking_a_grant_revokes_its_descendants_and_only_ancestors_may() {
    let (kinds, store) = (ToolKinds::default(), Delegations::default());
    let m = minting(&kinds);
    let a = store.mint(&dev(), req(r#"{"name":"a"}"#), &m, at(0)).unwrap();
    let a_agent = store.authenticate(&a.token, at(0)).unwrap();
    let b = store.mint(&a_agent, req(r#"{"name":"b"}"#), &m, at(0)).unwrap();
    let b_agent = store.authenticate(&b.token, at(0)).unwrap();
    let sibling = store.mint(&dev(), req(r#"{"name":"s"}"#), &m, at(0)).unwrap();

    // Not a descendant's, not a sibling's, not another root's to revoke.
    let ci = Agent::configured("ci".into());
    for (who, id) in [(&b_agent, &a.id), (&a_agent, &a.id), (&ci, &a.id), (&a_agent, &sibling.id)] {
        assert_eq!(store.revoke(who, id, at(0)), Err(MintError::NotFound(id.to_string())), "{}", who.id);
    }
    assert!(matches!(store.revoke(&dev(), "nope", at(0)), Err(MintError::NotFound(_))));

    assert_eq!(store.revoke(&dev(), &a.id, at(0)), Ok(2));
    assert!(store.authenticate(&a.token, at(0)).is_err());
    assert!(store.authenticate(&b.token, at(0)).is_err(), "the grandchild goes with its parent");
    assert!(store.authenticate(&sibling.token, at(0)).is_ok());
    // A delegated agent may revoke what it delegated.
    let c = store.mint(&dev(), req(r#"{"name":"c"}"#), &m, at(0)).unwrap();
    let c_agent = store.authenticate(&c.token, at(0)).unwrap();
    let d = store.mint(&c_agent, req("{}"), &m, at(0)).unwrap();
    assert_eq!(store.revoke(&c_agent, &d.id, at(0)), Ok(1));
    assert!(store.authenticate(&c.token, at(0)).is_ok());
}

#[test]
fn a_root_removed_from_config_takes_its_tree() {
    let (kinds, store) = (ToolKinds::default(), Delegations::default());
    let m = minting(&kinds);
    store.mint(&dev(), req("{}"), &m, at(0)).unwrap();
    let ci = store.mint(&Agent::configured("ci".into()), req("{}"), &m, at(0)).unwrap();
    assert_eq!(store.retain_roots(|r| r == "ci"), 1);
    assert!(store.authenticate(&ci.token, at(0)).is_ok());
}

#[test]
fn timestamps_are_rfc3339_in_utc() {
    assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)), "2000-02-29T00:00:00Z");
    assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(1_700_000_000)), "2023-11-14T22:13:20Z");
}

/// `dev`, authenticated with a JWT that expires at `exp` (seconds after T0), signed by key `k`.
fn dev_with_jwt(exp: u64, k: u8) -> Agent {
    Agent::authenticated(
        "dev".into(),
        Credential {
            expires: Some(at(exp)),
            provenance: Provenance::Jwt { issuer: "iss".into(), key: [k; 32] },
        },
    )
}

#[test]
fn a_child_never_outlives_the_jwt_its_root_minted_it_under_nor_does_a_grandchild() {
    let (kinds, store) = (ToolKinds::default(), Delegations::default());
    let m = minting(&kinds);
    let parent = dev_with_jwt(5, 1);
    match store.mint(&parent, req(r#"{"ttl":"1m"}"#), &m, at(0)) {
        Err(MintError::Forbidden(msg)) => assert!(msg.contains("outlives dev's own credential"), "{msg}"),
        other => panic!("{other:?}"),
    }
    let child = store.mint(&parent, req(r#"{"name":"a"}"#), &m, at(0)).unwrap();
    assert_eq!(child.expires, at(5), "no ttl: as long as the JWT, not delegation.max_ttl");
    let a = store.authenticate(&child.token, at(1)).unwrap();
    assert_eq!(a.credential.expires, Some(at(5)));
    assert_eq!(a.credential.provenance, parent.credential.provenance, "the root's provenance travels down");
    let grandchild = store.mint(&a, req(r#"{"name":"b"}"#), &m, at(1)).unwrap();
    assert_eq!(grandchild.expires, at(5));
    assert!(store.authenticate(&child.token, at(5)).is_err(), "gone when the JWT expires");
    assert!(store.authenticate(&grandchild.token, at(6)).is_err());
    // A JWT accepted within its leeway after `exp` cannot mint at all.
    match store.mint(&dev_with_jwt(5, 1), req("{}"), &m, at(20)) {
        Err(MintError::Forbidden(msg)) => assert!(msg.contains("dev's own credential has expired"), "{msg}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn withdrawing_a_credential_takes_every_grant_minted_under_it_and_no_other() {
    let (kinds, store) = (ToolKinds::default(), Delegations::default());
    let m = minting(&kinds);
    let (k1, k2) = (dev_with_jwt(3600, 1), dev_with_jwt(3600, 2));
    let a = store.mint(&k1, req(r#"{"name":"a"}"#), &m, at(0)).unwrap();
    let a_agent = store.authenticate(&a.token, at(0)).unwrap();
    let b = store.mint(&a_agent, req(r#"{"name":"b"}"#), &m, at(0)).unwrap();
    let c = store.mint(&k2, req(r#"{"name":"c"}"#), &m, at(0)).unwrap();
    assert_eq!(store.withdraw(&k1.credential.provenance), 2, "the child and the grandchild");
    assert!(store.authenticate(&a.token, at(1)).is_err() && store.authenticate(&b.token, at(1)).is_err());
    assert!(store.authenticate(&c.token, at(1)).is_ok(), "a grant under another key stays");
}
