//! The "allow always" rule for each call shape: exact, or none.

use super::*;
use crate::rules::kinds::Access;

fn shell() -> KindSpec {
    KindSpec::bash("/command")
}

fn file() -> KindSpec {
    KindSpec::File { path: "/path".into(), access: Access::Write }
}

fn fetch() -> KindSpec {
    KindSpec::Fetch { url: "/url".into() }
}

#[test]
fn exact_calls_get_exact_rules() {
    let cases: &[(&str, &str, KindSpec, &str)] = &[
        (
            "mcp__py__write_note",
            r#"{"text":"hello","path":"a"}"#,
            KindSpec::Generic,
            r#"mcp__py__write_note({"path":"a","text":"hello"})"#,
        ),
        (
            "mcp__py__write_note",
            r#"{"path":"*","text":"a?b\\c"}"#,
            KindSpec::Generic,
            r#"mcp__py__write_note({"path":"\*","text":"a\?b\\\\c"})"#,
        ),
        ("mcp__sh__run", r#"{"command":"git   status -s"}"#, shell(), "mcp__sh__run(git status -s)"),
        ("mcp__sh__run", r#"{"command":"'git' log --oneline"}"#, shell(), "mcp__sh__run(git log --oneline)"),
        ("mcp__fs__write", r#"{"path":"/srv/out/a.txt"}"#, file(), "mcp__fs__write(/srv/out/a.txt)"),
        (
            "mcp__web__get",
            r#"{"url":"https://x.example/a?b=*"}"#,
            fetch(),
            r"mcp__web__get(https://x.example/a\?b=\*)",
        ),
        ("mcp__we*b__get", r#"{}"#, KindSpec::Generic, r"mcp__we\*b__get({})"),
    ];
    for (tool, args, kind, want) in cases {
        assert_eq!(rule_for(tool, args, Source::Floor, kind).as_deref(), Ok(*want), "{tool} {args}");
    }
}

#[test]
fn anything_whose_rule_would_stand_for_more_than_the_call_gets_none() {
    let not_simple = [
        "git status; rm -rf /",
        "git status && make",
        "echo $(id)",
        "echo `id`",
        "echo $HOME",
        "cat <(ls)",
        "ls > out",
        "sudo git status",
        "FOO=1 make",
        "ls *.rs",
        "git commit -m 'two words'",
        "/tmp/evil/git status",
        "./build.sh",
        "ls ~",
        "echo 'a\tb'",
        "bash -c 'git status'",
        "if true; then ls; fi",
        "git status |",
        "",
    ];
    for line in not_simple {
        let args = serde_json::json!({ "command": line }).to_string();
        assert!(rule_for("mcp__sh__run", &args, Source::Floor, &shell()).is_err(), "{line:?} got a rule");
    }
    let refused: &[(&str, &str, KindSpec)] = &[
        ("mcp__sh__run", r#"{"command":"ls","cwd":"/"}"#, shell()),
        ("mcp__sh__run", r#"{"command":1}"#, shell()),
        ("mcp__fs__write", r#"{"path":"/srv/a","content":"x"}"#, file()),
        ("mcp__fs__write", r#"{"path":"/srv/../etc/passwd"}"#, file()),
        ("mcp__fs__write", r#"{"path":"relative/a"}"#, file()),
        ("mcp__fs__write", r#"{"path":"/srv//a"}"#, file()),
        ("mcp__fs__write", r#"{"path":"/srv/*"}"#, file()),
        ("mcp__web__get", r#"{"url":"file:///etc/passwd"}"#, fetch()),
        ("mcp__web__get", r#"{"url":"https://a b"}"#, fetch()),
        ("Bash", r#"{"command":"ls"}"#, shell()),
        ("mcp__a b__c", r#"{}"#, KindSpec::Generic),
        ("mcp__a(b)__c", r#"{}"#, KindSpec::Generic),
        ("mcp__py__x", r#"[1]"#, KindSpec::Generic),
        ("mcp__py__x", r#"not json"#, KindSpec::Generic),
    ];
    for (tool, args, kind) in refused {
        assert!(rule_for(tool, args, Source::Floor, kind).is_err(), "{tool} {args} got a rule");
    }
}

#[test]
fn only_a_floor_ask_is_offered_always() {
    for source in [Source::Configured, Source::Checker, Source::Flagged] {
        let got = rule_for("mcp__py__x", "{}", source, &KindSpec::Generic);
        assert!(matches!(got, Err(NoRule::NotFloor(_))), "{source:?}: {got:?}");
    }
}

#[test]
fn a_call_holding_a_secret_gets_no_rule_and_the_refusal_does_not_quote_it() {
    // A GitHub token shape (not a documented example), as a value, inside an array, and as a key.
    let key = "ghp_".to_owned() + "R8alwaysKeyR8alwaysKeyR8alwaysKey012";
    for args in [
        serde_json::json!({"text": format!("key {key}")}),
        serde_json::json!({"list": ["a", format!("token={key}")]}),
        serde_json::json!({ key.clone(): 1 }),
    ] {
        let got = rule_for("mcp__py__x", &args.to_string(), Source::Floor, &KindSpec::Generic);
        assert_eq!(got, Err(NoRule::Secret("secret")), "{args}");
        assert!(!got.unwrap_err().to_string().contains(&key));
    }
}

#[test]
fn a_tool_name_with_a_format_or_control_character_gets_no_rule_and_is_shown_escaped() {
    for tool in [
        "mcp__py__x\u{202e}txt",
        "mcp__py__a\u{200b}b",
        "mcp__py__x\u{1b}[2K",
        "mcp__py__x\u{2028}y",
        "mcp__py__x y",
    ] {
        let got = rule_for(tool, "{}", Source::Floor, &KindSpec::Generic);
        let Err(NoRule::ToolName(shown)) = &got else { panic!("{tool:?}: {got:?}") };
        assert!(shown.chars().all(|c| c.is_ascii() && !c.is_ascii_control()), "{shown:?}");
    }
    assert!(rule_for("mcp__py__write-note.v2", "{}", Source::Floor, &KindSpec::Generic).is_ok());
}

proptest::proptest! {
    /// Whatever the arguments, a generic tool's rule matches their canonical JSON and nothing
    /// that differs from it by one appended character.
    #[test]
    fn a_generic_rule_matches_exactly_its_arguments(s in ".{0,40}", n in 0u32..1000) {
        let v = serde_json::json!({"s": s, "n": n});
        let args = v.to_string();
        let got = rule_for("mcp__py__x", &args, Source::Floor, &KindSpec::Generic);
        proptest::prop_assume!(!matches!(got, Err(NoRule::Secret(_))), "a secret gets no rule (tested below)");
        let rule = got.unwrap();
        let spec = RuleSpec::parse(&rule).unwrap().specifier.unwrap();
        let canonical = canonical_json(&v);
        proptest::prop_assert!(spec.text.matches(&canonical));
        let longer = format!("{canonical}x");
        proptest::prop_assert!(!spec.text.matches(&longer));
        let other = canonical_json(&serde_json::json!({"s": format!("{s}*"), "n": n}));
        proptest::prop_assert!(!spec.text.matches(&other));
    }
}
