//! The golden file of every sentence: `tests/golden/sentences.txt` holds each [`Said`] rendered
//! with the same sample names, so a change of wording is a reviewed diff. Regenerate with
//! `PORTCULLIS_BLESS=1 cargo test --lib says`.

use super::*;

/// Which arm `s` is: an exhaustive match, so a new sentence without a sample here fails the
/// coverage test below.
fn arm(s: &Said<'_>) -> usize {
    match s {
        Said::Denied { .. } => 0,
        Said::Headless { .. } => 1,
        Said::Flagged { .. } => 2,
        Said::Asked { .. } => 3,
        Said::Unfinished { .. } => 4,
        Said::RetryRefused { .. } => 5,
        Said::ArgumentsBlocked { .. } => 6,
        Said::Unchecked { .. } => 7,
        Said::ResultWithheld { .. } => 8,
        Said::DefinitionWithheld { .. } => 9,
        Said::PinChanged { .. } => 10,
        Said::Unpinned { .. } => 11,
        Said::MalformedAnswer { .. } => 12,
        Said::AnswerWithheld { .. } => 13,
        Said::ServerRequestRefused { .. } => 14,
        Said::HookAllows { .. } => 15,
        Said::HookAsks { .. } => 16,
        Said::HookCleaned { .. } => 17,
        Said::HookDisregard { .. } => 18,
        Said::CannotDecide { .. } => 19,
        Said::CannotInspect { .. } => 20,
        Said::RateLimited { .. } => 21,
        Said::Reviewed { .. } => 22,
    }
}
const ARMS: usize = 23;

fn samples() -> Vec<(&'static str, Said<'static>)> {
    let tool = "mcp__fs__write_file";
    vec![
        (
            "denied",
            Said::Denied {
                tool,
                reason: "writes outside the workspace",
                rule: "File(/etc/**)",
                scope: "config",
                not: Not::Sent,
            },
        ),
        (
            "headless",
            Said::Headless {
                tool,
                reason: "pushes to a remote",
                rule: "Shell(git push:*)",
                scope: "config",
                not: Not::Sent,
            },
        ),
        (
            "denied, hook",
            Said::Denied {
                tool: "Write",
                reason: "writes /etc/passwd",
                rule: "File(/etc/**)",
                scope: "config",
                not: Not::Run,
            },
        ),
        ("flagged", Said::Flagged { tool }),
        (
            "rate limited",
            Said::RateLimited {
                tool,
                limit: 30,
                per: "a minute",
                pattern: "mcp__fs__*",
                retry_after: 42,
                not: Not::Sent,
            },
        ),
        (
            "rate limited, at once, hook",
            Said::RateLimited {
                tool: "Bash",
                limit: 4,
                per: "at once",
                pattern: "*",
                retry_after: 1,
                not: Not::Run,
            },
        ),
        ("asked", Said::Asked { tool, reason: "pushes to a remote", answer: None }),
        (
            "asked, denied",
            Said::Asked { tool, reason: "pushes to a remote", answer: Some(answer::USER_DENIED) },
        ),
        ("asked, operator denied", Said::Asked { tool, reason: "r", answer: Some(answer::OPERATOR_DENIED) }),
        ("asked, dismissed", Said::Asked { tool, reason: "r", answer: Some(answer::DISMISSED) }),
        (
            "asked, operator timed out",
            Said::Asked { tool, reason: "r", answer: Some(answer::OPERATOR_TIMED_OUT) },
        ),
        ("asked, user timed out", Said::Asked { tool, reason: "r", answer: Some(answer::USER_TIMED_OUT) }),
        ("asked, headless", Said::Asked { tool, reason: "r", answer: Some(answer::HEADLESS) }),
        ("asked, overloaded", Said::Asked { tool, reason: "r", answer: Some(answer::OVERLOADED) }),
        ("asked, store down", Said::Asked { tool, reason: "r", answer: Some(answer::STORE_DOWN) }),
        ("asked, in a batch", Said::Asked { tool, reason: "r", answer: Some(answer::IN_BATCH) }),
        (
            "reviewed, denied",
            Said::Reviewed { tool, reason: "r", answer: answer::REVIEWER_DENIED, not: Not::Sent },
        ),
        (
            "reviewed, failed",
            Said::Reviewed { tool, reason: "r", answer: answer::REVIEWER_FAILED, not: Not::Sent },
        ),
        (
            "reviewed, tripped",
            Said::Reviewed { tool, reason: "r", answer: answer::REVIEWER_TRIPPED, not: Not::Sent },
        ),
        ("unfinished", Said::Unfinished { tool, not: Not::Sent }),
        ("unfinished, hook", Said::Unfinished { tool: "Bash", not: Not::Run }),
        ("retry refused", Said::RetryRefused { why: "its seal does not verify" }),
        (
            "arguments blocked",
            Said::ArgumentsBlocked {
                tool,
                reason: "sends the key",
                rule: "exfil",
                rubric: "exfiltration@3",
                note: "",
            },
        ),
        ("unchecked", Said::Unchecked { tool, failure: "timeout", why: "guardrail rule exfil fails closed" }),
        (
            "result withheld",
            Said::ResultWithheld { tool, reason: "injection", rule: "inj", rubric: "injection@2", why: "" },
        ),
        (
            "definition withheld",
            Said::DefinitionWithheld {
                tool,
                what: "its description instructs",
                rule: "defs",
                rubric: "tools@1",
            },
        ),
        ("pin changed", Said::PinChanged { tool, file: "portcullis.lock" }),
        ("unpinned", Said::Unpinned { tool, file: "portcullis.lock" }),
        ("malformed answer", Said::MalformedAnswer { upstream: "fs" }),
        ("answer withheld", Said::AnswerWithheld { why: "the stream broke mid-event" }),
        ("server request refused", Said::ServerRequestRefused { why: BATCH_REFUSED }),
        ("hook allows", Said::HookAllows { tool: "Bash", reason: "read-only", rule: "Shell(git status)" }),
        (
            "hook asks",
            Said::HookAsks {
                tool: "Bash",
                reason: "pushes",
                rule: Some("Shell(git push:*)"),
                operator: None,
            },
        ),
        (
            "hook asks, operator",
            Said::HookAsks { tool: "Bash", reason: "pushes", rule: None, operator: Some(7) },
        ),
        ("hook cleaned", Said::HookCleaned { tool }),
        ("hook disregard", Said::HookDisregard { tool: "WebFetch", cleaned: "the page" }),
        ("cannot decide", Said::CannotDecide { why: "the proxy is unreachable" }),
        ("cannot inspect, withheld", Said::CannotInspect { why: "timeout", withheld: true }),
        ("cannot inspect, noted", Said::CannotInspect { why: "timeout", withheld: false }),
    ]
}

fn rendered() -> String {
    let mut out = String::new();
    for (name, s) in samples() {
        out.push_str(&format!("## {name}\n{s}\n\n"));
    }
    out
}

#[test]
fn every_sentence_has_a_sample() {
    let covered: std::collections::BTreeSet<usize> = samples().iter().map(|(_, s)| arm(s)).collect();
    assert_eq!(covered, (0..ARMS).collect(), "a Said arm has no sample in samples()");
}

#[test]
fn every_sentence_reads_as_the_golden_file_says() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/sentences.txt");
    let now = rendered();
    if std::env::var_os("PORTCULLIS_BLESS").is_some() {
        std::fs::write(&path, &now).unwrap();
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(golden, now, "sentences changed: review, then bless (PORTCULLIS_BLESS=1)");
}

#[test]
fn every_sentence_says_who_speaks() {
    for (name, s) in samples() {
        let text = s.to_string();
        assert!(text.starts_with("portcullis "), "{name}: {text}");
    }
}
