//! The repeated-denial breaker's table: streaks, shares, bounds and the quiet path.
use super::*;
use sha2::{Digest, Sha256};

#[test]
fn a_principal_key_is_the_first_eight_bytes_of_its_digest_in_lower_hex() {
    // The old spelling, a `format!` per byte, is the reference.
    let d: [u8; 32] = Sha256::digest(b"Bearer token").into();
    let expected: String = d[..8].iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(principal_key("Bearer token"), format!("caller:{expected}"));
    assert_eq!(principal_key("x").len(), "caller:".len() + 16);
}

#[test]
fn three_in_a_row_or_twenty_in_all_flag_a_session_until_cleared() {
    let f = Flags::new(3, 20, Arc::new(Metrics::new()));
    for _ in 0..2 {
        f.record(Some("a"), None, true);
    }
    f.record(Some("a"), None, false);
    f.record(Some("a"), None, true);
    assert!(!f.flagged(Some("a"), None), "a success resets the run");
    f.record(Some("a"), None, true);
    f.record(Some("a"), None, true);
    assert!(f.flagged(Some("a"), None));
    assert!(!f.flagged(Some("b"), None) && !f.flagged(None, None));
    assert_eq!(f.list(), [("a".to_owned(), 5)]);
    assert!(f.clear("a") && !f.flagged(Some("a"), None));
    for i in 0..20 {
        f.record(Some("c"), None, i % 2 == 0);
        f.record(Some("c"), None, false);
    }
    assert!(!f.flagged(Some("c"), None), "10 refusals in all");
    for _ in 0..10 {
        f.record(Some("c"), None, true);
        f.record(Some("c"), None, false);
    }
    assert!(f.flagged(Some("c"), None), "20 in all");
}

#[test]
fn thirty_denials_under_thirty_fresh_sessions_flag_the_caller_and_all_its_sessions() {
    let f = Flags::new(3, 20, Arc::new(Metrics::new()));
    let me = Some("Bearer agent-1");
    for i in 0..30 {
        let s = format!("fresh-{i}");
        assert!(i < 3 || f.flagged(Some(&s), me), "denial {i}: the caller is flagged by now");
        f.record(Some(&s), me, true);
    }
    assert!(f.flagged(Some("yet-another"), me), "every session of the caller");
    assert!(f.flagged(None, me), "and calls without a session");
    assert!(!f.flagged(Some("other"), Some("Bearer agent-2")), "another caller is not");
    let listed = f.list();
    let caller = listed.iter().find(|(k, _)| k.starts_with("caller:")).expect("the caller is listed");
    assert!(!caller.0.contains("agent-1"), "the credential is digested");
    assert!(f.clear(&caller.0));
    assert!(!f.flagged(Some("yet-another"), me), "cleared by an operator");
}

#[test]
fn a_decision_recorded_without_a_principal_counts_against_the_sessions_caller() {
    // (An address holding every call: contained, it would hold only its refused sessions.)
    let f = Flags::new(3, 20, Arc::new(Metrics::new())).with_address(FlagAddress::All);
    let me = Some("peer:127.0.0.1");
    for i in 0..3 {
        let s = format!("s{i}");
        assert!(!f.flagged(Some(&s), me));
        f.record(Some(&s), None, true);
    }
    assert!(f.flagged(Some("s9"), me));
}

#[test]
fn a_callers_sessions_beyond_its_share_are_one_streak() {
    let f = Flags::new(3, 1000, Arc::new(Metrics::new()));
    let me = Some("Bearer x");
    for i in 0..SESSIONS_PER_PRINCIPAL {
        f.record(Some(&format!("own-{i}")), me, false);
    }
    for i in 0..3 {
        f.record(Some(&format!("more-{i}")), me, true);
        // Interleaved successes elsewhere reset the caller's run, not the pooled one.
        f.record(Some("own-0"), me, false);
    }
    assert!(f.flagged(Some("more-99"), me), "the sessions beyond the share flag as one");
    assert!(!f.flagged(Some("own-1"), me), "its own sessions are not flagged");
}

#[test]
fn a_full_table_never_evicts_a_flag_and_pools_what_it_cannot_hold() {
    let f = Flags::with_capacity(3, 20, 8, Arc::new(Metrics::new()));
    for _ in 0..3 {
        f.record(Some("hot"), None, true);
    }
    for i in 0..100 {
        f.record(Some(&format!("spray-{i}")), None, i % 2 == 0);
    }
    assert!(f.flagged(Some("hot"), None), "the flag survived the spray");
    for i in 0..3 {
        f.record(Some(&format!("late-{i}")), None, true);
    }
    assert!(f.flagged(Some("late-new"), None), "untracked keys share one streak, and it flagged");
}

#[test]
fn an_allowed_call_in_a_session_seen_before_with_no_run_takes_no_lock() {
    let f = Flags::new(3, 20, Arc::new(Metrics::new()));
    let me = Some("Bearer agent-1");
    f.record(Some("s"), me, false); // the first call claims the session and makes its streaks
    let locked = f.locked.load(Relaxed);
    for _ in 0..10 {
        assert!(!f.flagged(Some("s"), me));
        f.record(Some("s"), me, false);
        f.record(None, me, false);
        f.record(None, None, false);
    }
    assert_eq!(f.locked.load(Relaxed), locked, "allowed calls wrote nothing");
}

#[test]
fn an_allowed_call_still_ends_a_run_and_the_next_one_is_quiet_again() {
    let f = Flags::new(3, 20, Arc::new(Metrics::new()));
    let me = Some("Bearer agent-1");
    f.record(Some("s"), me, true);
    f.record(Some("s"), me, true);
    let locked = f.locked.load(Relaxed);
    f.record(Some("s"), me, false);
    assert_eq!(f.locked.load(Relaxed), locked + 1, "ending the run is a write");
    f.record(Some("s"), me, false);
    assert_eq!(f.locked.load(Relaxed), locked + 1, "with no run left, the next allow is not");
    f.record(Some("s"), me, true);
    f.record(Some("s"), me, true);
    assert!(!f.flagged(Some("s"), me), "the run restarted at zero");
    f.record(Some("s"), me, true);
    assert!(f.flagged(Some("s"), me));
}

#[test]
fn a_session_beyond_its_callers_share_is_read_without_a_lock() {
    let f = Flags::new(3, 1000, Arc::new(Metrics::new()));
    let me = Some("Bearer x");
    for i in 0..=SESSIONS_PER_PRINCIPAL {
        f.record(Some(&format!("own-{i}")), me, false);
    }
    let locked = f.locked.load(Relaxed);
    for i in 0..10 {
        f.record(Some(&format!("more-{i}")), me, false);
        assert!(!f.flagged(Some(&format!("more-{i}")), me));
    }
    assert_eq!(f.locked.load(Relaxed), locked, "the pooled streak exists: nothing to claim");
}

#[test]
fn an_allowed_call_with_no_room_ends_the_untracked_run() {
    let f = Flags::with_capacity(3, 20, 4, Arc::new(Metrics::new()));
    for i in 0..4 {
        f.record(Some(&format!("s{i}")), None, false);
    }
    f.record(Some("x1"), None, true);
    f.record(Some("x2"), None, true);
    f.record(Some("x3"), None, false);
    f.record(Some("x4"), None, true);
    assert!(!f.flagged(Some("x5"), None), "the allow in x3 ended the pooled run");
    f.record(Some("x6"), None, true);
    f.record(Some("x7"), None, true);
    assert!(f.flagged(Some("x5"), None), "three in a row, pooled");
    assert!(!f.flagged(Some("s0"), None), "a key with its own streak reads its own");
}

#[test]
fn a_delegated_agents_refusals_count_toward_its_root_and_a_flagged_root_flags_its_children() {
    let f = Flags::new(3, 20, Arc::new(Metrics::new()));
    // A parent minting a fresh child per probe: each child is refused once, in a fresh session.
    for i in 0..3 {
        let (child, session) = (format!("agent:dev>probe{i}"), format!("dev>probe{i}/s"));
        assert!(!f.flagged(Some(&session), Some(&child)), "probe {i} is not flagged yet");
        f.record(Some(&session), Some(&child), true);
    }
    assert!(f.flagged(None, Some("agent:dev")), "the root is flagged by its children's refusals");
    assert!(f.flagged(Some("dev>fresh/s"), Some("agent:dev>fresh")), "a fresh child is flagged with it");
    assert!(f.flagged(None, Some("agent:dev>fresh>deeper")), "and a grandchild");
    assert!(!f.flagged(None, Some("agent:ci")) && !f.flagged(None, Some("agent:ci>kid")), "not another root");
    assert!(!f.flagged(None, Some("agent:devops>kid")), "a root is its whole name");
    assert!(f.clear(&principal_key("agent:dev")));
    assert!(!f.flagged(None, Some("agent:dev>fresh")), "cleared by an operator");
}

#[test]
fn the_root_of_a_principal_is_only_ever_an_agents() {
    for (principal, root) in [
        ("agent:dev>kid", Some("agent:dev")),
        ("agent:dev>kid>lint", Some("agent:dev")),
        ("agent:dev", None),
        ("peer:127.0.0.1", None),
        ("Bearer dev>kid", None),
        ("agent:>kid", Some("agent:")),
    ] {
        assert_eq!(root_principal(principal), root, "{principal}");
    }
}

#[test]
fn another_principal_presenting_a_session_id_never_sees_or_feeds_the_first_ones_streak() {
    let f = Flags::new(3, 20, Arc::new(Metrics::new()));
    let (a, b) = (Some("peer:10.0.0.1"), Some("peer:10.0.0.2"));
    f.record(Some("shared"), a, false); // a claims the session
    for _ in 0..3 {
        f.record(Some("shared"), b, true);
    }
    assert!(!f.flagged(Some("shared"), a), "b's refusals under a's session id never flag a's session");
    assert!(f.flagged(Some("shared"), b) && f.flagged(None, b), "they flag b");
    let c = Some("peer:10.0.0.3");
    for _ in 0..3 {
        f.record(Some("c-session"), c, true);
    }
    assert!(f.flagged(Some("c-session"), c));
    assert!(
        !f.flagged(Some("c-session"), Some("peer:10.0.0.4")),
        "nor does a flag pass to whoever spells its id"
    );
    // A decision recorded later without a principal (an ask resolving) is still the owner's.
    assert!(f.flagged(Some("c-session"), None));
}

#[test]
fn session_ids_spelled_like_the_escape_keep_their_own_keys() {
    let ids = ["caller:x", "session:caller:x", "#more", "session:#more", "session:", "plain"];
    let mut keys: Vec<String> = ids.iter().map(|i| session_key(i).into_owned()).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), ids.len(), "{keys:?}");
    assert!(keys.iter().all(|k| !k.starts_with(CallerKey::PREFIX) && !k.starts_with('#')), "{keys:?}");
}

#[test]
#[ignore = "a measurement: run with --ignored --nocapture"]
fn cost_of_the_root_key_on_the_quiet_path() {
    use std::hint::black_box;
    const N: u32 = 200_000;
    let f = Flags::new(3, 20, Arc::new(Metrics::new()));
    let run = |what: &str, session: &str, principal: &str| {
        f.record(Some(session), Some(principal), false);
        let t = std::time::Instant::now();
        for _ in 0..N {
            f.record(black_box(Some(session)), black_box(Some(principal)), false);
            black_box(f.flagged(black_box(Some(session)), black_box(Some(principal))));
        }
        let ns = t.elapsed().as_nanos() as f64 / f64::from(N);
        println!("{what:<56} {ns:>8.1} ns (record + flagged)");
        ns
    };
    let time = |what: &str, g: &dyn Fn() -> CallerKey| {
        let t = std::time::Instant::now();
        for _ in 0..N {
            black_box(g());
        }
        println!("{what:<56} {:>8.1} ns", t.elapsed().as_nanos() as f64 / f64::from(N));
    };
    time("the root's key, digested", &|| CallerKey::of(black_box("agent:dev")));
    time("the root's key, remembered", &|| f.root_key(black_box("agent:dev")));
    let agent = run("a configured agent (session, owner, caller)", "dev/s", "agent:dev");
    let child = run("a delegated agent (+ its root's key)", "dev>kid/s", "agent:dev>kid");
    println!("added per delegated call: {:.1} ns", child - agent);
}
