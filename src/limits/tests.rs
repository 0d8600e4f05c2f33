//! The limiter on this replica's counters, with the clock in the test's hands.

use std::sync::Arc;

use super::*;
use crate::config::Config;
use crate::gate::pre::block_on;
use crate::identity::Agent;
use crate::mcp::era::Era;

const T0: u64 = 1_800_000_000 - 1_800_000_000 % 86_400; // a UTC midnight

fn limiter(entries: &str) -> Limiter {
    std::env::set_var("PORTCULLIS_UNIT_LIMITS_DEV_T", "dev-token-0123456789abcdef");
    std::env::set_var("PORTCULLIS_UNIT_LIMITS_CI_T", "ci-token-0123456789abcdef0");
    let yaml = format!(
        "agents: {{ dev: {{ token_env: PORTCULLIS_UNIT_LIMITS_DEV_T }}, ci: {{ token_env: PORTCULLIS_UNIT_LIMITS_CI_T }} }}\n\
         limits:\n  per_agent:\n{entries}"
    );
    let c = Config::parse(&yaml, "t").unwrap_or_else(|e| panic!("{e}"));
    Limiter::new(&c.limits.per_agent, None, Some(Arc::new(Metrics::new())))
}

fn call(tool: &str) -> ToolCall {
    ToolCall::mcp("gh".into(), tool, None, Era::Legacy)
}

fn by(agent: &Agent, tool: &str) -> ToolCall {
    call(tool).with_agent(Some(Arc::new(agent.clone())))
}

fn anon(peer: &str, tool: &str) -> ToolCall {
    call(tool).with_caller(Some(peer))
}

fn admit(l: &Limiter, c: &ToolCall, now: u64) -> Result<Permit, Limited> {
    block_on(l.admit_at(c, now))
}

#[test]
fn per_minute_admits_up_to_the_limit_then_refuses_until_the_next_minute() {
    let l = limiter("    - { agent: \"*\", tool: \"mcp__gh__*\", per_minute: 2 }\n");
    let dev = Agent::configured("dev".into());
    assert!(admit(&l, &by(&dev, "list"), T0 + 10).is_ok());
    assert!(admit(&l, &by(&dev, "get"), T0 + 11).is_ok(), "one budget for every tool the pattern names");
    let refused = admit(&l, &by(&dev, "list"), T0 + 15).unwrap_err();
    assert_eq!(
        refused,
        Limited { entry: 0, bound: Bound::PerMinute, limit: 2, tool: "mcp__gh__*".into(), retry_after: 45 }
    );
    assert!(admit(&l, &by(&dev, "list"), T0 + 60).is_ok(), "a new minute, a new count");
}

#[test]
fn a_delegated_agent_spends_its_roots_budget() {
    let l = limiter("    - { agent: dev, tool: \"*\", per_day: 2 }\n");
    let dev = Agent::configured("dev".into());
    let kid = Agent { id: "dev>kid".into(), delegated_by: vec!["dev".into()], ..dev.clone() };
    let grandkid =
        Agent { id: "dev>kid>lint".into(), delegated_by: vec!["kid".into(), "dev".into()], ..dev.clone() };
    assert!(admit(&l, &by(&kid, "a"), T0).is_ok());
    assert!(admit(&l, &by(&grandkid, "a"), T0).is_ok());
    let e = admit(&l, &by(&dev, "a"), T0 + 3600).unwrap_err();
    assert_eq!((e.bound, e.retry_after), (Bound::PerDay, 82_800), "children spent the root's day");
}

#[test]
fn each_agent_and_each_anonymous_caller_is_counted_apart_under_the_wildcard() {
    let l = limiter("    - { agent: \"*\", tool: \"*\", per_minute: 1 }\n");
    let (dev, ci) = (Agent::configured("dev".into()), Agent::configured("ci".into()));
    for c in [by(&dev, "a"), by(&ci, "a"), anon("peer:10.0.0.1", "a"), anon("peer:10.0.0.2", "a")] {
        assert!(admit(&l, &c, T0).is_ok(), "{:?}", c.caller);
    }
    for c in [by(&dev, "a"), anon("peer:10.0.0.1", "a")] {
        assert!(admit(&l, &c, T0).is_err(), "{:?}", c.caller);
    }
}

#[test]
fn an_agents_own_entries_replace_the_wildcard_ones_for_it() {
    let l = limiter(
        "    - { agent: \"*\", tool: \"*\", per_minute: 1 }\n    - { agent: ci, tool: \"mcp__gh__*\", per_minute: 3 }\n",
    );
    let (dev, ci) = (Agent::configured("dev".into()), Agent::configured("ci".into()));
    assert!((0..3).all(|_| admit(&l, &by(&ci, "list"), T0).is_ok()), "ci's own entry: three");
    assert_eq!(admit(&l, &by(&ci, "list"), T0).unwrap_err().entry, 1);
    let elsewhere =
        ToolCall::mcp("fs".into(), "read", None, Era::Legacy).with_agent(Some(Arc::new(ci.clone())));
    assert!((0..3).all(|_| admit(&l, &elsewhere, T0).is_ok()), "no ci entry names it: ci is unlimited there");
    assert!(admit(&l, &by(&dev, "list"), T0).is_ok());
    assert_eq!(admit(&l, &by(&dev, "list"), T0).unwrap_err().entry, 0, "dev is under the wildcard");
}

#[test]
fn a_call_one_bound_refuses_spends_no_other_bounds_budget() {
    let l = limiter(
        "    - { agent: \"*\", tool: \"*\", per_minute: 10 }\n    - { agent: \"*\", tool: \"mcp__gh__push\", per_day: 1 }\n",
    );
    let dev = Agent::configured("dev".into());
    assert!(admit(&l, &by(&dev, "push"), T0).is_ok());
    for _ in 0..5 {
        assert_eq!(admit(&l, &by(&dev, "push"), T0).unwrap_err().bound, Bound::PerDay);
    }
    // Nine left of the minute's ten: the refused pushes spent none.
    assert!((0..9).all(|_| admit(&l, &by(&dev, "read"), T0).is_ok()));
    assert_eq!(admit(&l, &by(&dev, "read"), T0).unwrap_err().bound, Bound::PerMinute);
}

#[test]
fn calls_at_once_are_bounded_until_a_permit_is_dropped_and_a_refusal_spends_no_window() {
    let l = limiter("    - { agent: \"*\", tool: \"*\", concurrent: 2, per_minute: 3 }\n");
    let dev = Agent::configured("dev".into());
    let a = admit(&l, &by(&dev, "x"), T0).unwrap();
    let _b = admit(&l, &by(&dev, "x"), T0).unwrap();
    let e = admit(&l, &by(&dev, "x"), T0).unwrap_err();
    assert_eq!((e.bound, e.limit, e.retry_after), (Bound::Concurrent, 2, 1));
    drop(a);
    let _c = admit(&l, &by(&dev, "x"), T0).expect("a place freed, and the minute's third call is left");
    drop(_b);
    assert_eq!(admit(&l, &by(&dev, "x"), T0).unwrap_err().bound, Bound::PerMinute);
}

#[test]
fn a_call_no_entry_names_is_free_and_holds_nothing() {
    let l = limiter("    - { agent: \"*\", tool: \"mcp__gh__push\", concurrent: 1 }\n");
    let p = admit(&l, &anon("peer:1", "read"), T0).unwrap();
    assert_eq!(p.held(), 0);
    assert_eq!(block_on(Limiter::default().admit(&call("x"))).unwrap().held(), 0);
}

#[test]
fn refusals_are_counted_by_the_configured_entry_never_the_called_name() {
    let metrics = Arc::new(Metrics::new());
    let c = Config::parse(
        "limits: { per_agent: [ { agent: \"*\", tool: \"mcp__gh__*\", per_minute: 1 } ] }\n",
        "t",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let l = Limiter::new(&c.limits.per_agent, None, Some(metrics.clone()));
    let _ = admit(&l, &anon("peer:1", "a"), T0);
    let _ = admit(&l, &anon("peer:1", "an_unbounded_name_from_the_wire"), T0);
    let text = String::from_utf8(metrics.render()).unwrap();
    assert!(
        text.contains(r#"portcullis_rate_limited_total{agent="*",limit="per_minute",tool="mcp__gh__*"} 1"#),
        "{text}"
    );
    assert!(!text.contains("an_unbounded_name_from_the_wire"));
}

#[test]
fn the_shortcut_matchers_agree_with_the_glob_on_every_shape() {
    use crate::rules::glob::{Flavour, Glob};
    let patterns = [
        "*",
        "**",
        "mcp__gh__*",
        "mcp__gh__list",
        "mcp__*__list",
        "mcp__gh__l?st",
        "a\\*",
        "mcp__gh__*x*",
        "",
    ];
    let names =
        ["mcp__gh__list", "mcp__gh__", "mcp__gh__lost", "mcp__fs__list", "a*", "a", "", "mcp__gh__xx"];
    for p in patterns {
        let glob = Glob::new(p, Flavour::Text);
        let m = ToolMatch::of(&glob);
        for n in names {
            assert_eq!(m.matches(n), glob.matches(n), "{p:?} on {n:?} ({m:?})");
        }
    }
}

proptest::proptest! {
    #[test]
    fn a_shortcut_matcher_never_disagrees_with_the_glob(p in "[a-c_*?\\\\]{0,6}", n in "[a-c_*?]{0,6}") {
        let glob = crate::rules::glob::Glob::new(&p, crate::rules::glob::Flavour::Text);
        proptest::prop_assert_eq!(ToolMatch::of(&glob).matches(&n), glob.matches(&n));
    }
}
