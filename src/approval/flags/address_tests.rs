//! A flag on an address-keyed caller (`peer:IP`): contained to its refused sessions by default,
//! every call of the address when the operator says so; session rotation never escapes either.
use super::*;

const LOOPBACK: Option<&str> = Some("peer:127.0.0.1");

fn flags(address: FlagAddress) -> Flags {
    Flags::new(3, 20, Arc::new(Metrics::new())).with_address(address)
}

/// Three refusals in a row in `session` from loopback.
fn hammer(f: &Flags, session: &str) {
    for _ in 0..3 {
        f.record(Some(session), LOOPBACK, true);
    }
}

#[test]
fn a_careless_agent_on_loopback_holds_its_own_session_and_not_a_second_agents() {
    let f = flags(FlagAddress::Sessions);
    f.record(Some("second-agent"), LOOPBACK, false);
    hammer(&f, "careless");
    assert!(f.flagged(Some("careless"), LOOPBACK), "the refused session is held");
    assert!(!f.flagged(Some("second-agent"), LOOPBACK), "another agent's session is not");
    assert!(!f.flagged(Some("fresh-agent"), LOOPBACK), "nor a fresh agent's");
    f.record(Some("second-agent"), LOOPBACK, false);
    assert!(!f.flagged(Some("second-agent"), LOOPBACK), "it keeps working");
    assert!(f.flagged(None, LOOPBACK), "a call without a session cannot be told apart: held");
    let listed: Vec<String> = f.list().into_iter().map(|(k, _)| k).collect();
    assert!(listed.contains(&"careless".to_owned()), "{listed:?}");
    assert!(
        listed.iter().any(|k| k.starts_with("caller:")),
        "the address is listed for the operator: {listed:?}"
    );
}

#[test]
fn rotating_session_ids_from_a_flagged_address_buys_one_probe_each_then_holds_the_address() {
    let f = flags(FlagAddress::Sessions);
    hammer(&f, "s0");
    // Each fresh id is held at its first refusal…
    f.record(Some("s1"), LOOPBACK, true);
    assert!(f.flagged(Some("s1"), LOOPBACK), "one refusal holds a session of a flagged address");
    assert!(!f.flagged(Some("bystander"), LOOPBACK), "two sessions held: the address is not yet");
    f.record(Some("s2"), LOOPBACK, true);
    // …and three sessions held hold every call of the address, fresh ids included.
    for s in ["s3", "bystander", "s0"] {
        assert!(f.flagged(Some(s), LOOPBACK), "{s}: the address is held whole");
    }
    // The operator clears the address: fresh sessions work again; the refused ones stay held.
    let address = f.list().into_iter().map(|(k, _)| k).find(|k| k.starts_with("caller:")).expect("listed");
    assert!(f.clear(&address));
    assert!(!f.flagged(Some("s3"), LOOPBACK));
    assert!(f.flagged(Some("s1"), LOOPBACK), "a held session is cleared on its own");
}

#[test]
fn a_flagged_address_still_holds_a_refused_session_spread_over_many_calls() {
    // Refusals spread so no session has three in a row: the address's total flags it, and the
    // session refused after that is held.
    let f = flags(FlagAddress::Sessions);
    for i in 0..20 {
        let s = format!("spread-{}", i % 10);
        f.record(Some(&s), LOOPBACK, true);
        f.record(Some(&s), LOOPBACK, false);
    }
    assert!(f.flagged(None, LOOPBACK), "twenty refusals flag the address");
    f.record(Some("spread-3"), LOOPBACK, true);
    assert!(f.flagged(Some("spread-3"), LOOPBACK));
    assert!(!f.flagged(Some("spread-4"), LOOPBACK), "a session not refused since is not held");
}

#[test]
fn holding_every_call_of_a_flagged_address_is_the_operators_choice() {
    let f = flags(FlagAddress::All);
    hammer(&f, "careless");
    for s in [Some("second-agent"), Some("fresh"), None] {
        assert!(f.flagged(s, LOOPBACK), "{s:?}: every call of the address");
    }
}

#[test]
fn only_address_keyed_callers_are_contained() {
    // A credential or an agent is one principal: its flag holds all of its sessions.
    let f = flags(FlagAddress::Sessions);
    for principal in ["authorization:Bearer t", "agent:dev"] {
        let me = Some(principal);
        for _ in 0..3 {
            f.record(Some(&format!("{principal}/a")), me, true);
        }
        assert!(f.flagged(Some(&format!("{principal}/fresh")), me), "{principal}");
    }
}
