//! The evaluators through the guard's one door: a Cedar policy adds denials and grants nothing,
//! sees normalised targets and typed arguments, and fails closed when it cannot be evaluated.

use std::io::Write;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::call::ToolCall;
use crate::config::Config;
use crate::gate::{Guard, Outcome};
use crate::identity::Agent;
use crate::mcp::era::Era;
use crate::telemetry::Metrics;

struct Setup {
    guard: Guard,
    _policy: tempfile::NamedTempFile,
    _jail: tempfile::TempDir,
}

/// A guard with `agents: dev`, a jail, file and fetch tools, every tool allowed but
/// `mcp__k8s__delete`, and `policy` as its Cedar policy.
fn setup(policy: &str) -> Setup {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(policy.as_bytes()).unwrap();
    let jail = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(jail.path().join("srv/secret")).unwrap();
    std::os::unix::fs::symlink(jail.path().join("srv/secret"), jail.path().join("innocent")).unwrap();
    let yaml = format!(
        "agents: {{ dev: {{ token_env: UNREAD_AUTHORITY_DEV }} }}\n\
         posture: trusted\n\
         jail: {{ root: {:?} }}\n\
         tools:\n  - {{ match: \"mcp__fs__read\", kind: file, path: /path, access: read }}\n  \
         - {{ match: mcp__web__fetch, kind: fetch, url: /url }}\n\
         permissions: {{ allow: [\"mcp__*\", \"Read(**)\", \"Fetch(*)\"], deny: [mcp__k8s__delete] }}\n\
         authority: {{ evaluator: cedar, policy: {:?} }}\n",
        jail.path(),
        f.path()
    );
    let c = Config::parse(&yaml, "test").unwrap_or_else(|e| panic!("{e}"));
    let guard = Guard::new(&c.policy, Arc::new(Metrics::new())).unwrap();
    Setup { guard, _policy: f, _jail: jail }
}

fn dev() -> Arc<Agent> {
    Arc::new(Agent::configured("dev".into()))
}

fn call(tool: &str, args: Value) -> ToolCall {
    let (up, name) = tool.split_once('.').unwrap();
    let raw = serde_json::value::RawValue::from_string(args.to_string()).unwrap();
    ToolCall::mcp(up.into(), name, Some(&raw), Era::Legacy).with_agent(Some(dev()))
}

/// `None` when forwarded; the refusal's rule and reason otherwise.
fn refused(g: &Guard, c: &ToolCall) -> Option<(String, String)> {
    match g.pre(c) {
        Outcome::Refuse(d) => Some((d.rule, d.reason)),
        _ => None,
    }
}

#[test]
fn a_forbid_denies_what_the_carried_set_allows_and_names_its_policy() {
    let s = setup("@id(\"no-prod\")\nforbid (principal, action, resource == Portcullis::Tool::\"mcp__k8s__scale\") when { context.args.ns == \"prod\" };\n");
    let (rule, reason) = refused(&s.guard, &call("k8s.scale", json!({"ns": "prod"}))).expect("forbidden");
    assert_eq!(rule, "authority: no-prod");
    assert!(reason.contains("no-prod") && reason.contains("forbids"), "{reason}");
    assert_eq!(refused(&s.guard, &call("k8s.scale", json!({"ns": "dev"}))), None);
}

#[test]
fn a_permit_never_grants_what_the_carried_set_denies() {
    let s = setup("permit (principal, action, resource);\n");
    let (rule, _) = refused(&s.guard, &call("k8s.delete", json!({}))).expect("still denied");
    assert!(!rule.starts_with("authority"), "the rule engine refused it: {rule}");
    assert_eq!(refused(&s.guard, &call("k8s.scale", json!({}))), None);
}

#[test]
fn an_argument_condition_holds_and_a_value_of_another_type_cannot_slip_past_it() {
    let s = setup("@id(\"replicas\")\nforbid (principal, action, resource) when { context.args has replicas && context.args.replicas > 10 };\n");
    let decide = |args: Value| refused(&s.guard, &call("k8s.scale", args)).map(|(rule, _)| rule);
    assert_eq!(decide(json!({"replicas": 3})), None);
    assert_eq!(decide(json!({})), None, "no such argument: the guard holds");
    for sly in [
        json!({"replicas": 11}),
        json!({"replicas": "11"}),
        json!({"replicas": 11.5}),
        json!({"replicas": null}),
        json!({"replicas": 1e300}),
        json!({"replicas": u64::MAX}),
    ] {
        assert_eq!(decide(sly.clone()).as_deref(), Some("authority: replicas"), "{sly}");
    }
}

#[test]
fn a_policy_that_errors_for_a_call_denies_it_and_says_why() {
    let s = setup("forbid (principal, action, resource) when { context.args.replicas > 10 };\n");
    let (rule, reason) = refused(&s.guard, &call("k8s.scale", json!({"image": "x"}))).expect("fails closed");
    assert_eq!(rule, "authority: policy0");
    assert!(reason.contains("cannot be evaluated"), "{reason}");
}

#[test]
fn file_targets_are_the_jails_resolved_path_with_symlinks_followed() {
    let s = setup("@id(\"secret\")\nforbid (principal, action == Portcullis::Action::\"read\", resource) when { context.path like \"*/srv/secret/*\" };\n");
    let root = s._jail.path().display().to_string();
    for path in ["srv/secret/key", "srv/./other/../secret/key", "innocent/key"] {
        let path = format!("{root}/{path}");
        let got = refused(&s.guard, &call("fs.read", json!({ "path": path })));
        assert_eq!(got.map(|(r, _)| r).as_deref(), Some("authority: secret"), "{path}");
    }
    let public = format!("{root}/srv/public");
    assert_eq!(refused(&s.guard, &call("fs.read", json!({ "path": public }))), None);
    // A relative path is opened from the tool's own directory, which the proxy does not know.
    let (rule, reason) = refused(&s.guard, &call("fs.read", json!({"path": "srv/public"}))).expect("refused");
    assert_eq!(rule, "jail");
    assert!(reason.contains("relative"), "{reason}");
}

#[test]
fn fetch_targets_are_the_host_every_fetcher_reads() {
    let s = setup("@id(\"no-resolver\")\nforbid (principal, action == Portcullis::Action::\"fetch\", resource) when { context.host == \"8.8.8.8\" || context.host == \"evil.example\" };\n");
    for url in ["http://8.8.8.8/", "http://0x8.8.8.8:8080/x", "http://134744072/", "HTTPS://EVIL.Example./x"]
    {
        let got = refused(&s.guard, &call("web.fetch", json!({ "url": url })));
        assert_eq!(got.map(|(r, _)| r).as_deref(), Some("authority: no-resolver"), "{url}");
    }
    assert_eq!(refused(&s.guard, &call("web.fetch", json!({"url": "https://example.com/"}))), None);
}

#[test]
fn the_policy_sees_the_agent_and_its_delegation_depth_never_a_credential() {
    use crate::identity::delegation::{Delegations, MintRequest, Minting};
    let s = setup("@id(\"shallow\")\nforbid (principal, action, resource) when { context.depth > 0 && context.root == \"dev\" };\n@id(\"who\")\nforbid (principal == Portcullis::Agent::\"dev\", action, resource) when { context.args has who };\n");
    let store = Arc::new(Delegations::default());
    let guard = s.guard.with_delegations(store.clone());
    let minting = Minting {
        settings: guard.delegation(),
        root_profile: guard.agent_profile("dev").unwrap(),
        kinds: guard.kinds(),
        upstream: &|_: &str| true,
    };
    let minted = store
        .mint(
            &dev(),
            MintRequest::parse(br#"{"name":"kid"}"#).unwrap(),
            &minting,
            std::time::SystemTime::now(),
        )
        .unwrap();
    let kid = Arc::new(store.authenticate(&minted.token, std::time::SystemTime::now()).unwrap());
    let as_kid = call("k8s.scale", json!({})).with_agent(Some(kid));
    assert_eq!(refused(&guard, &as_kid).map(|(r, _)| r).as_deref(), Some("authority: shallow"));
    assert_eq!(refused(&guard, &call("k8s.scale", json!({}))), None);
    assert_eq!(
        refused(&guard, &call("k8s.scale", json!({"who": 1}))).map(|(r, _)| r).as_deref(),
        Some("authority: who")
    );
}

#[test]
fn noop_refuses_a_delegated_call_and_local_keeps_the_carried_sets_decision() {
    use crate::rules::{Decision, Effect, Scope};
    let allowed = Decision {
        effect: Effect::Allow,
        rule: "r".into(),
        scope: Scope::Config,
        origin: crate::rules::Origin::Configured,
        reason: String::new(),
        prefilter: None,
    };
    let mut kid = Agent::configured("dev".into());
    kid.id = "dev>kid".into();
    kid.delegated_by = vec!["dev".into()];
    assert_eq!(super::local::noop(allowed.clone(), Some(&kid)).effect, Effect::Deny);
    assert_eq!(
        super::local::noop(allowed.clone(), Some(&Agent::configured("dev".into()))).effect,
        Effect::Allow
    );
    assert_eq!(super::local::noop(allowed.clone(), None).effect, Effect::Allow);
    let kinds = crate::rules::kinds::ToolKinds::default();
    let c = ToolCall::mcp("k8s".into(), "scale", None, Era::Legacy).with_agent(Some(Arc::new(kid)));
    assert_eq!(super::Authority::Local.vet(allowed.clone(), &kinds, &c, &json!({})).effect, Effect::Allow);
    assert_eq!(super::Authority::Noop.vet(allowed, &kinds, &c, &json!({})).effect, Effect::Deny);
}

#[test]
fn arguments_nested_past_the_bound_are_refused_not_overflowed() {
    let mut deep = json!(1);
    for _ in 0..(super::context::MAX_DEPTH + 2) {
        deep = json!({ "a": deep });
    }
    assert!(super::readings::readings(&deep).is_err());
    assert!(super::readings::readings(&json!({"a": [1, "x", null, {"b": true}]})).is_ok());
}

#[test]
fn an_equality_forbid_holds_for_every_spelling_an_upstream_reads_as_that_value() {
    let s = setup("@id(\"eleven\")\nforbid (principal, action, resource) when { context.args has a && context.args.a == 11 };\n@id(\"forced\")\nforbid (principal, action, resource) when { context.args has force && context.args.force == true };\n@id(\"bond\")\nforbid (principal, action, resource) when { context.args has code && context.args.code == \"007\" };\n");
    let decide = |args: Value| refused(&s.guard, &call("k8s.scale", args)).map(|(rule, _)| rule);
    for sly in
        [json!(11), json!(11.0), json!(1.1e1), json!("11"), json!(" 11 "), json!("0x0b"), json!("11.0")]
    {
        assert_eq!(decide(json!({ "a": sly })).as_deref(), Some("authority: eleven"), "a = {sly}");
    }
    for sly in [json!(true), json!(1), json!("true"), json!("yes"), json!("1")] {
        assert_eq!(decide(json!({ "force": sly })).as_deref(), Some("authority: forced"), "force = {sly}");
    }
    assert_eq!(decide(json!({"code": "007"})).as_deref(), Some("authority: bond"), "text stays text");
    for fine in [
        json!({"a": 12}),
        json!({"a": "11.5"}),
        json!({"a": "eleven"}),
        json!({"force": false}),
        json!({"force": "0"}),
        json!({"code": "7"}),
    ] {
        assert_eq!(decide(fine.clone()), None, "{fine}");
    }
}
