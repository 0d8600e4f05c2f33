use super::*;

#[test]
fn each_meta_key_is_read_on_its_own_so_a_task_that_is_not_a_string_keeps_plan_mode() {
    let raw = |s: &str| RawValue::from_string(s.to_owned()).unwrap_or_else(|e| panic!("{e}"));
    let both = raw(r#"{"portcullis/mode":"plan","portcullis/task":{"text":"draft"}}"#);
    assert_eq!(ToolCall::task_and_mode_in_meta(Some(&both)), (None, Mode::Plan));
    let odd_mode = raw(r#"{"portcullis/mode":7,"portcullis/task":"draft"}"#);
    assert_eq!(ToolCall::task_and_mode_in_meta(Some(&odd_mode)), (Some("draft".into()), Mode::Act));
}

#[test]
fn every_method_the_gate_routes_is_one_whose_look_alikes_are_refused() {
    for m in Method::ROUTES.into_iter().chain([Method::ToolsCall]) {
        assert!(
            crate::mcp::method::KNOWN.contains(&m.as_str()),
            "{} is not in mcp::method::KNOWN",
            m.as_str()
        );
    }
}

#[test]
fn capacity_is_shared_by_caller_never_by_a_session_id_the_caller_picks() {
    let base = || ToolCall::mcp("fs".into(), "read_file", None, Era::Legacy);
    let a = base().with_session(Some("s1".into())).with_caller(Some("Bearer secret-token"));
    let b = base().with_session(Some("s2".into())).with_caller(Some("Bearer secret-token"));
    assert_eq!(a.share_key(), b.share_key(), "fresh session ids buy no fresh share");
    assert!(!a.share_key().unwrap().contains("secret"), "the credential is digested");
    let other = base().with_session(Some("s1".into())).with_caller(Some("peer:127.0.0.2"));
    assert_ne!(a.share_key(), other.share_key());
    assert_eq!(base().with_session(Some("s9".into())).share_key(), Some("s9"), "no caller: the session");
}

#[test]
fn a_caller_is_the_first_twelve_bytes_of_its_digest_in_lower_hex() {
    use sha2::Digest;
    let d = sha2::Sha256::digest(b"peer:127.0.0.1");
    let expected: String = d[..12].iter().map(|b| format!("{b:02x}")).collect();
    let c = ToolCall::mcp("fs".into(), "read_file", None, Era::Legacy).with_caller(Some("peer:127.0.0.1"));
    assert_eq!(c.caller.as_deref(), Some(format!("caller:{expected}").as_str()));
}

#[test]
fn only_plan_names_plan_mode_and_a_meta_that_does_not_read_acts() {
    let meta = |m: &str| RawValue::from_string(m.to_owned()).unwrap();
    for (m, mode) in [
        (r#"{"portcullis/mode":"plan"}"#, Mode::Plan),
        (r#"{"portcullis/mode":"PLAN","portcullis/task":"t"}"#, Mode::Plan),
        (r#"{"portcullis/mode":"default"}"#, Mode::Act),
        (r#"{"portcullis/mode":"planning"}"#, Mode::Act),
        (r#"{"portcullis/mode":7}"#, Mode::Act),
        (r#"{}"#, Mode::Act),
    ] {
        assert_eq!(ToolCall::task_and_mode_in_meta(Some(&meta(m))).1, mode, "{m}");
    }
    assert_eq!(ToolCall::task_and_mode_in_meta(None), (None, Mode::Act));
}

#[test]
fn qualified_names_follow_the_agent_convention() {
    let c = ToolCall::mcp("fs".into(), "read_file", None, Era::Legacy);
    assert_eq!(c.qualified, "mcp__fs__read_file");
    let h = ToolCall::http("weather".into(), "/v1/forecast/", None);
    assert_eq!(h.qualified, "http__weather__v1/forecast");
}

#[test]
fn a_budget_key_is_the_address_before_the_first_authorization_spelling() {
    fn by_split(c: &str) -> &str {
        match c.starts_with("peer:") {
            true => c.split_once("/authorization:").map_or(c, |(a, _)| a),
            false => c,
        }
    }
    for c in [
        "peer:127.0.0.1",
        "peer:127.0.0.1/authorization:Bearer x",
        "peer:10.0.0.1/authorization:a/authorization:b",
        "peer:::1//authorization:/x",
        "peer:x/author/authorization:é/",
        "peer:é/authorizatio",
        "peer:/authorization:",
        "agent:dev/authorization:x",
        "authorization:Bearer x",
        "",
    ] {
        assert_eq!(budget_key(c), by_split(c), "{c}");
    }
}
