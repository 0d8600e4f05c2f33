//! Shadow rubrics and models on live traffic: the Python SDK server behind the proxy, the fake
//! checker (a real HTTP server speaking the Chat Completions wire format) judging. A shadow is
//! counted and audited and never enforced: what the agent gets and what the upstream runs
//! follow the enforced verdict alone.

use std::time::Duration;

use serde_json::{json, Value};

use crate::guardrails::{metric, Session};
use crate::support::fake_checker::{FakeChecker, Reply, Request};
use crate::support::{config, eventually, proxy, proxy_url, Peer};

/// The shadow rubric's marker: the fake checker knows which rubric asks by it.
const STRICT: &str = "STRICT SHADOW RUBRIC";

/// The enforced rubric finds "attacker"; the strict one finds "maybe" (and not "attacker").
fn two_rubrics(r: &Request) -> (Reply, Option<Duration>) {
    let word = if r.system().contains(STRICT) { "maybe" } else { "attacker" };
    match r.data().contains(word) {
        true => (Reply::Unsafe(format!("mentions {word}")), None),
        false => (Reply::Safe, None),
    }
}

/// The shipped rubrics plus `strict`, in a directory the config names.
fn rubrics_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rubrics");
    for name in ["injection.md", "exfiltration.md", "shell.md"] {
        std::fs::copy(shipped.join(name), dir.path().join(name)).unwrap();
    }
    std::fs::write(dir.path().join("strict.md"), format!("{STRICT}: anything uncertain is unsafe.\n"))
        .unwrap();
    dir
}

fn shadow_lines(log: &std::path::Path, n: usize) -> impl std::future::Future<Output = Vec<Value>> + '_ {
    eventually("the shadow audit lines", move || async move {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("each line is JSON"))
            .filter(|l| l["phase"] == "shadow")
            .collect();
        (lines.len() >= n).then_some(lines)
    })
}

#[tokio::test]
async fn a_shadow_rubric_is_counted_and_audited_and_never_enforced() {
    let peer = Peer::python("legacy");
    let checker = FakeChecker::start(two_rubrics).await;
    let rubrics = rubrics_dir();
    let log = rubrics.path().join("audit.jsonl");
    let yaml = format!(
        "permissions: {{ allow: [\"mcp__*\"] }}\naudit: {{ to: \"{}\" }}\nguardrails:\n  checker: {{ base_url: \"{}\", model: fake-judge, timeout: 2s }}\n  rubrics: \"{}\"\n  min_content_bytes: 0\n  rules: [{{ match: \"mcp__*\", phases: [post], mode: block, shadow: strict }}]\n",
        log.display(),
        checker.url,
        rubrics.path().display()
    );
    let p = proxy(&config(&[("py", &peer.url())], &yaml)).await;
    let mut s = Session::open(&proxy_url(&p, "py")).await;

    // Enforced safe, shadow unsafe: the agent gets the result as it was.
    let (_, _, msg) = s.call("echo", json!({"message":"maybe tomorrow"}), &[]).await;
    assert_eq!(msg["result"]["content"][0]["text"], "maybe tomorrow", "{msg}");
    // Enforced unsafe, shadow safe: blocked as the enforced rubric says.
    let (_, _, msg) = s.call("echo", json!({"message":"from the attacker"}), &[]).await;
    assert_eq!(msg["result"]["isError"], true, "{msg}");
    // Both safe.
    let (_, _, msg) = s.call("echo", json!({"message":"hello"}), &[]).await;
    assert_eq!(msg["result"]["content"][0]["text"], "hello", "{msg}");

    let lines = shadow_lines(&log, 3).await;
    let by_text = |needle: &str| {
        lines.iter().find(|l| l["preview"].as_str().unwrap_or("").contains(needle)).unwrap_or_else(|| {
            panic!("a shadow line for {needle:?} in {lines:#?}");
        })
    };
    let l = by_text("maybe tomorrow");
    assert_eq!((l["outcome"].as_str(), l["rule"].as_str()), (Some("would_block"), Some("mcp__*")), "{l}");
    assert_eq!(l["verdicts"]["enforced"]["verdict"], "safe", "{l}");
    assert_eq!(l["verdicts"]["shadow"]["verdict"], "unsafe", "{l}");
    assert!(l["verdicts"]["shadow"]["rubric"].as_str().unwrap().starts_with("strict@"), "{l}");
    assert!(l["verdicts"]["enforced"]["rubric"].as_str().unwrap().starts_with("injection@"), "{l}");
    assert_eq!(l["verdicts"]["shadow"]["reason"], "mentions maybe", "{l}");
    let l = by_text("from the attacker");
    assert_eq!(l["outcome"], "would_pass", "{l}");
    assert_eq!(l["verdicts"]["enforced"]["verdict"], "unsafe", "{l}");
    assert_eq!(by_text("hello")["outcome"], "agree");

    let m = |s: &str| metric(&p, &format!("portcullis_shadow_{s}"));
    assert_eq!(m("disagreements_total{direction=\"would_block\",rule=\"mcp__*\"}"), 1.0);
    assert_eq!(m("disagreements_total{direction=\"would_pass\",rule=\"mcp__*\"}"), 1.0);
    assert_eq!(m("checks_total{rule=\"mcp__*\",verdict=\"safe\"}"), 2.0);
    assert_eq!(m("checks_total{rule=\"mcp__*\",verdict=\"unsafe\"}"), 1.0);
    // Shadows are not checks: the enforced count is three results.
    let enforced: usize = String::from_utf8(p.metrics.render())
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("portcullis_checks_total{") && l.contains("phase=\"post\""))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(enforced, 3);
    // Each result was shown to the model twice, once per rubric.
    assert_eq!(checker.calls(), 6);
}

#[tokio::test]
async fn a_shadow_model_that_is_down_pages_nobody_and_blocks_nothing() {
    let peer = Peer::python("legacy");
    let enforced = FakeChecker::start(crate::guardrails::unsafe_if("attacker")).await;
    let shadow = FakeChecker::replying(Reply::Unsafe("everything".into())).await;
    let yaml = format!(
        "permissions: {{ allow: [\"mcp__*\"] }}\nguardrails:\n  checker: {{ base_url: \"{}\", model: fake-judge, timeout: 2s }}\n  min_content_bytes: 0\n  breaker: {{ failures: 2, cooldown: 30s }}\n  rules: [{{ match: \"mcp__*\", phases: [post], shadow: {{ rubric: injection, checker: {{ base_url: \"{}\", model: bigger-judge, timeout: 1s }} }} }}]\n",
        enforced.url, shadow.url
    );
    let p = proxy(&config(&[("py", &peer.url())], &yaml)).await;
    let mut s = Session::open(&proxy_url(&p, "py")).await;
    let (_, _, msg) = s.call("echo", json!({"message":"hello"}), &[]).await;
    assert_eq!(msg["result"]["content"][0]["text"], "hello", "a shadow's unsafe blocks nothing: {msg}");
    eventually("the shadow model asked", || async { (shadow.calls() == 1).then_some(()) }).await;
    let seen = &shadow.requests()[0];
    assert_eq!(seen.body["model"], "bigger-judge", "{}", seen.body);
    assert!(seen.data().contains("hello"), "{}", seen.body);
    let would_block = "portcullis_shadow_disagreements_total{direction=\"would_block\",rule=\"mcp__*\"}";
    eventually("the disagreement counted", || async { (metric(&p, would_block) == 1.0).then_some(()) }).await;

    // The shadow's model dies: its breaker opens, the enforcing checker stays up.
    shadow.kill();
    for i in 0..4 {
        let (_, _, msg) = s.call("echo", json!({"message": format!("call {i}")}), &[]).await;
        assert_eq!(msg["result"]["content"][0]["text"], format!("call {i}"), "{msg}");
    }
    let failed = "portcullis_shadow_checks_total{rule=\"mcp__*\",verdict=\"failed\"}";
    eventually("the shadow failures counted", || async { (metric(&p, failed) == 4.0).then_some(()) }).await;
    assert_eq!(
        metric(&p, "portcullis_breaker_state{checker=\"shadow\"}"),
        1.0,
        "the shadow's breaker opened"
    );
    assert_eq!(metric(&p, "portcullis_checker_up"), 1.0, "checker_up is the enforcing checker's");
    assert_eq!(metric(&p, "portcullis_breaker_state{checker=\"openai\"}"), 0.0);
    assert_eq!(enforced.calls(), 5);
    assert_eq!(metric(&p, would_block), 1.0, "a failure is not a disagreement");
}

#[test]
fn a_shadow_needs_a_model_a_known_rubric_and_something_to_differ() {
    let parse = |rules: &str, checker: &str| {
        portcullis::config::Config::parse(
            &format!("guardrails: {{ checker: {checker}, rules: {rules} }}\n"),
            "t",
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    };
    let model = "{ base_url: \"http://127.0.0.1:1/v1\", model: m }";
    assert_eq!(parse("[{ match: \"*\", shadow: injection }]", model), Ok(()));
    let err = parse("[{ match: \"*\", shadow: nosuch }]", model).unwrap_err();
    assert!(err.contains("guardrails.rules[0].shadow.rubric") && err.contains("nosuch"), "{err}");
    let err = parse("[{ match: \"*\", shadow: injection }]", "local").unwrap_err();
    assert!(err.contains("guardrails.rules[0].shadow") && err.contains("model"), "{err}");
    let own = "[{ match: \"*\", shadow: { rubric: injection, checker: { base_url: \"http://127.0.0.1:1/v1\", model: m2 } } }]";
    assert_eq!(parse(own, "local"), Ok(()), "a shadow with its own model needs no enforcing model");
    let err = parse("[{ match: \"*\", rubric: injection, shadow: injection }]", model).unwrap_err();
    assert!(err.contains("nothing could differ"), "{err}");
    let err = parse("[{ match: \"*\", shadow: { rubric: injection, model: m } }]", model).unwrap_err();
    assert!(err.contains("guardrails.rules[0].shadow"), "strict keys: {err}");
}

#[tokio::test]
async fn shadows_beyond_their_room_are_skipped_and_counted_never_queued() {
    let peer = Peer::python("legacy");
    let enforced = FakeChecker::replying(Reply::Safe).await;
    // The shadow's model never answers: every shadow holds its room until the test ends.
    let shadow = FakeChecker::replying(Reply::Hang).await;
    let yaml = format!(
        "permissions: {{ allow: [\"mcp__*\"] }}\nguardrails:\n  checker: {{ base_url: \"{}\", model: fake-judge, timeout: 2s }}\n  min_content_bytes: 0\n  max_concurrency: 1\n  rules: [{{ match: \"mcp__*\", phases: [post], shadow: {{ rubric: injection, checker: {{ base_url: \"{}\", model: slow-judge, timeout: 60s }} }} }}]\n",
        enforced.url, shadow.url
    );
    let p = proxy(&config(&[("py", &peer.url())], &yaml)).await;
    let mut s = Session::open(&proxy_url(&p, "py")).await;
    for i in 0..5 {
        let (_, _, msg) = s.call("echo", json!({"message": format!("call {i}")}), &[]).await;
        assert_eq!(msg["result"]["content"][0]["text"], format!("call {i}"), "never waited for: {msg}");
    }
    // Room for two (twice max_concurrency): the other three were skipped, none queued.
    let skipped = "portcullis_shadow_checks_total{rule=\"mcp__*\",verdict=\"skipped\"}";
    assert_eq!(metric(&p, skipped), 3.0);
    assert_eq!(enforced.calls(), 5);
    // One holds the shadow model's only slot; the other waits for it (inside its room).
    eventually("one shadow at the model", || async { (shadow.calls() == 1).then_some(()) }).await;
}
