//! Sentinels substituted only where allowed; values and stray sentinels refused.

use std::sync::Arc;

use serde_json::value::RawValue;

use super::*;
use crate::mcp::era::Era;
use crate::secrets::held::tests::held;

fn mcp(tool: &str, args: &str) -> ToolCall {
    let raw = RawValue::from_string(args.to_owned()).unwrap();
    ToolCall::mcp(
        Arc::from(tool.split("__").nth(1).unwrap()),
        tool.split("__").nth(2).unwrap(),
        Some(&raw),
        Era::Legacy,
    )
}

fn http(upstream: &str, path: &str, args: &str) -> ToolCall {
    ToolCall::http(Arc::from(upstream), path, Some(RawValue::from_string(args.to_owned()).unwrap()))
}

#[test]
fn the_gate_refuses_values_anywhere_and_sentinels_bound_elsewhere() {
    let h = held();
    let kinds = ToolKinds::default();
    let table: &[(ToolCall, Option<&str>)] = &[
        (mcp("mcp__github__create", r#"{"auth":"portcullis:secret:github"}"#), None),
        (mcp("mcp__github__create", r#"{"auth":"nothing held"}"#), None),
        (mcp("mcp__notes__write", r#"{"text":"portcullis:secret:github"}"#), Some("secret github")),
        (mcp("mcp__github__create", r#"{"t":"portcullis:secret:stripe"}"#), Some("secret stripe")),
        (mcp("mcp__github__create", r#"{"t":"ghp_Zq8LmN3vT0xY"}"#), Some("secret github")),
        (mcp("mcp__notes__write", r#"{"t":"x gh\u0070_Zq8LmN3vT0xY y"}"#), Some("secret github")),
        (mcp("mcp__notes__write", r#"{"Z2hwX1pxOExtTjN2VDB4WQ":1}"#), Some("secret github")),
        (http("gh", "repos/x", r#"{"a":"portcullis:secret:github"}"#), None),
        (http("other", "repos/x", r#"{"a":"portcullis:secret:github"}"#), Some("secret github")),
        (http("gh", "repos/x", r#""raw text ghp_Zq8LmN3vT0xY""#), Some("secret github")),
    ];
    for (call, want) in table {
        let got = h.refusal(call, &kinds);
        assert_eq!(got.as_ref().map(|r| r.rule.as_str()), *want, "{} {:?}", call.qualified, call.args);
        if let Some(r) = got {
            assert!(!r.reason.contains("ghp_Zq8") && !r.reason.contains("sk-live"), "{}", r.reason);
            assert!(r.reason.contains(&*call.qualified), "the reason names the destination: {}", r.reason);
        }
    }
}

#[test]
fn a_refusal_names_the_destination_url_by_its_reading_never_the_value() {
    let h = held();
    let call = http("other", "x", r#"{"a":"portcullis:secret:github"}"#);
    let mut secrets = crate::config::secrets::Secrets::default();
    secrets.entries = h.secrets.clone();
    secrets.http_bases.insert("other".into(), "https://ghp_Zq8LmN3vT0xY.evil.example/".into());
    let h = Held::new(&secrets).unwrap();
    let r = h.refusal(&call, &ToolKinds::default()).unwrap();
    assert!(r.reason.contains("https://portcullis:secret:github.evil.example:443"), "{}", r.reason);
    assert!(!r.reason.to_ascii_lowercase().contains("ghp_zq8"), "{}", r.reason);
}

#[test]
fn only_allowed_sentinels_are_substituted_and_the_json_stays_valid() {
    let h = held();
    let kinds = ToolKinds::default();
    let args = r#"{ "auth" : "Bearer portcullis:secret:github", "n": [1, "portcullis:secret:stripe"], "k\"q": "\u00e9" }"#;
    let call = mcp("mcp__github__create", args);
    let out = h.unmask_args(&call, &kinds, args).unwrap();
    assert_eq!(
        out,
        r#"{ "auth" : "Bearer ghp_Zq8LmN3vT0xY", "n": [1, "portcullis:secret:stripe"], "k\"q": "\u00e9" }"#
    );
    assert!(h.unmask_args(&mcp("mcp__notes__write", args), &kinds, args).is_none(), "not allowed there");
    let escaped = r#"{"a":"portcullis\u003asecret:github"}"#;
    assert_eq!(h.unmask_args(&call, &kinds, escaped).unwrap(), r#"{"a":"ghp_Zq8LmN3vT0xY"}"#);
}

#[test]
fn a_value_needing_json_escapes_is_reserialised_correctly() {
    let mut secrets = crate::config::secrets::Secrets::default();
    let mut p = crate::config::Problems::default();
    let env = |_: &str| Some(std::ffi::OsString::from("a\"b\\c\nd\u{1}ef"));
    let raw = crate::config::secrets::Raw { name: "odd".into(), env: "V".into(), to: vec!["mcp__*".into()] };
    secrets.entries = crate::config::secrets::compile(vec![raw], Default::default(), &env, &mut p).entries;
    let h = Held::new(&secrets).unwrap();
    let args = r#"{"v":"x portcullis:secret:odd y"}"#;
    let out = h.unmask_args(&mcp("mcp__a__b", args), &ToolKinds::default(), args).unwrap();
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["v"], "x a\"b\\c\nd\u{1}ef y");
}

proptest::proptest! {
    #[test]
    fn rewriting_no_string_gives_nothing_and_every_rewrite_parses(s in "\\PC{0,40}", t in "\\PC{0,40}") {
        let text = serde_json::json!({ s.clone(): [t.clone(), 1, {"x": null}] }).to_string();
        proptest::prop_assert!(rewrite_strings(&text, &|_| None).is_none());
        let out = rewrite_strings(&text, &|x| Some(format!("{x}\"\\\u{0}é"))).unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        let want = serde_json::json!({ format!("{s}\"\\\u{0}é"): [format!("{t}\"\\\u{0}é"), 1, {"x\"\\\u{0}é": null}] });
        proptest::prop_assert_eq!(v, want);
    }
}
