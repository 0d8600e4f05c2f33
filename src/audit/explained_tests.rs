//! What the audit keeps for `portcullis explain`: refusals even with the audit off, allowed
//! calls only when lines are written, `why` masked and bounded, a call's lines under one id.

use std::sync::Arc;
use std::time::Duration;

use super::why::{Layer1, Note, Waiver, Why};
use super::{Audit, Explained, Settings, Stage};
use crate::call::ToolCall;
use crate::decision::DecisionId;
use crate::mcp::era::Era;
use crate::outcome::{CallOutcome, Recorded};
use crate::telemetry::Metrics;

fn audit(settings: Settings) -> Audit {
    Audit::start(&settings, Arc::new(Metrics::new())).unwrap()
}

fn call() -> ToolCall {
    let args = serde_json::value::to_raw_value(&serde_json::json!({"command": "git push"})).unwrap();
    ToolCall::mcp("up".into(), "run", Some(&args), Era::Legacy)
}

fn pre(a: &Audit, c: &ToolCall, outcome: Recorded, why: Option<Why>) {
    let x = Explained { id: Some(c.decision), policy: Some("v1".into()), why };
    a.call_explained(Stage::Pre, c, (outcome, Some("rule"), Some("told")), None, Duration::ZERO, x);
}

#[test]
fn with_the_audit_off_refusals_are_kept_for_explain_and_allowed_calls_are_not() {
    let a = audit(Settings::default());
    assert!(!a.is_on());
    let (refused, allowed) = (call(), call());
    pre(&a, &refused, CallOutcome::Denied.into(), Some(Why::default()));
    pre(&a, &allowed, CallOutcome::Forwarded.into(), None);
    let kept = a.explained(refused.decision);
    assert_eq!(kept.len(), 1);
    assert_eq!((kept[0].outcome.as_str(), kept[0].policy.as_deref()), ("denied", Some("v1")));
    assert!(a.explained(allowed.decision).is_empty());
    let off = audit(Settings { explain: 0, ..Settings::default() });
    pre(&off, &refused, CallOutcome::Denied.into(), Some(Why::default()));
    assert!(off.explained(refused.decision).is_empty());
}

#[test]
fn why_is_masked_bounded_and_carries_the_notes_left_for_its_decision() {
    let a = audit(Settings::default());
    let c = call();
    let key = "ghp_".to_owned() + "R7q2ZkX9vLw3Tn8YbC5mPd1HsGf6Ja4Ue0Qx";
    let mut why = Why {
        layer1: Some(Layer1 {
            effect: "deny",
            rule: "Shell(git push:*)".into(),
            scope: "config",
            reason: format!("`git push {key} {}` is denied", "x".repeat(5000)),
        }),
        ..Why::default()
    };
    a.note(c.decision, Note::Waiver(Waiver { consulted: true, found: false }));
    a.note(DecisionId::next(), Note::Waiver(Waiver { consulted: true, found: true }));
    a.take_notes(c.decision, &mut why);
    pre(&a, &c, Recorded::Asked, Some(why));
    let kept = a.explained(c.decision);
    let why = kept[0].why.as_ref().unwrap();
    let reason = why["layer1"]["reason"].as_str().unwrap();
    assert!(!reason.contains(&key), "{reason}");
    assert!(reason.chars().count() <= 1025 && reason.ends_with('…'), "{}", reason.len());
    assert_eq!(
        (why["waiver"]["consulted"].as_bool(), why["waiver"]["found"].as_bool()),
        (Some(true), Some(false))
    );
    assert_eq!(why["layer1"]["scope"], "config");
}

#[test]
fn every_line_of_one_call_is_found_under_its_id() {
    let a = audit(Settings { recent: 10, ..Settings::default() });
    let c = call();
    pre(&a, &c, CallOutcome::Forwarded.into(), None);
    a.call(Stage::Post, &c, CallOutcome::Blocked.into(), None, Some("withheld"), None, Duration::ZERO);
    let phases: Vec<Stage> = a.explained(c.decision).iter().map(|r| r.phase).collect();
    assert_eq!(phases, [Stage::Pre, Stage::Post]);
}
