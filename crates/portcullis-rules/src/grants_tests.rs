//! Grants: the compiler's table, its refusals, and the property that a grant and the rule it
//! stands for decide every call of a corpus identically.

use serde_json::{json, Value};

use crate::grants::Grant;
use crate::kinds::{Access, KindSpec, ToolKinds};
use crate::spec::RuleSpec;
use crate::{Decision, Effect, Engine, EngineParts, Posture, Rule, Scope};

#[test]
fn grants_compile_to_the_rules_the_table_names() {
    use Effect::{Allow, Ask, Deny};
    let table: &[(Effect, &str, &str, Effect)] = &[
        (Allow, "fs:read:/srv/app/**", "Read(/srv/app/**)", Allow),
        (Allow, "fs:read:*", "Read", Allow),
        (Allow, "fs:write:/srv/app/tmp/*", "Write(/srv/app/tmp/*)", Allow),
        (Allow, "fs:write:!/srv/app/.git/**", "Write(/srv/app/.git/**)", Deny),
        (Allow, "fs:read:!*", "Read", Deny),
        (Allow, "fs:read:src/**", "Read(src/**)", Allow),
        (Allow, "fs:read:/srv/a file (1).txt", "Read(/srv/a file (1).txt)", Allow),
        (Allow, "shell:execute:git", "Shell(git:*)", Allow),
        (Allow, "shell:execute:git status", "Shell(git status:*)", Allow),
        (Allow, "shell:execute:!rm", "Shell(rm:*)", Deny),
        (Allow, "shell:execute:*", "Shell", Allow),
        (Ask, "shell:execute:git push", "Shell(git push:*)", Ask),
        (Deny, "shell:execute:curl", "Shell(curl:*)", Deny),
        (Allow, "net:connect:*", "Fetch", Allow),
        (Allow, "net:connect:example.com", "Fetch(domain:example.com)", Allow),
        (Allow, "net:connect:*.example.com", "Fetch(domain:*.example.com)", Allow),
        (Allow, "net:connect:!169.254.169.254", "Fetch(domain:169.254.169.254)", Deny),
        (Allow, "net:connect:[::1]", "Fetch(domain:[::1])", Allow),
        (Allow, "mcp:connect:github", "mcp__github__*", Allow),
        (Allow, "mcp:connect:my-fs_2", "mcp__my-fs_2__*", Allow),
        (Allow, "mcp:connect:*", "mcp__*", Allow),
        (Allow, "mcp:connect:!mail", "mcp__mail__*", Deny),
        (Deny, "  mcp:connect:mail  ", "mcp__mail__*", Deny),
    ];
    for (listed, grant, rule, effect) in table {
        let (spec, got) =
            Grant::compile(grant, *listed, Some("/work")).unwrap_or_else(|e| panic!("{grant}: {e}"));
        let want = RuleSpec::parse_under(rule, Some("/work")).unwrap();
        assert_eq!(
            (&spec.subject, &spec.specifier, got),
            (&want.subject, &want.specifier, *effect),
            "{grant}"
        );
        assert_eq!(spec.source, grant.trim(), "a decision names the grant as written");
    }
}

#[test]
fn every_grant_the_grammar_does_not_know_is_an_error_naming_it() {
    use Effect::{Allow, Ask, Deny};
    let table: &[(Effect, &str, &str)] = &[
        (Allow, "fs:read", "category:action:scope"),
        (Allow, "fs", "category:action:scope"),
        (Allow, "files:read:/x", "unknown category \"files\""),
        (Allow, "FS:read:/x", "unknown category"),
        (Allow, "fs:execute:/x", "unknown action \"execute\" for this category (read, write)"),
        (Allow, "fs:Read:/x", "unknown action"),
        (Allow, "fs:*:/x", "unknown action"),
        (Allow, "shell:run:git", "(execute)"),
        (Allow, "net:fetch:x.com", "(connect)"),
        (Allow, "mcp:call:github", "(connect)"),
        (Allow, "fs:read:", "scope is empty"),
        (Allow, "fs:read:!", "scope is empty"),
        (Allow, "fs:read: /x", "whitespace"),
        (Allow, "fs:read:! /x", "whitespace"),
        (Allow, "fs:read:/x\u{7}y", "control"),
        (Allow, "fs:read:~/.ssh/**", "'~' is not expanded"),
        (Allow, "fs:read:../etc/**", "may not climb"),
        (Allow, "shell:execute:/usr/bin/rm", "named, not given as a path"),
        (Allow, "shell:execute:-rf", "named, not given"),
        (Allow, "shell:execute:git  push", "single-spaced"),
        (Allow, "shell:execute:git\tpush", "control"),
        (Allow, "shell:execute:git*", "is not"),
        (Allow, "shell:execute:rm -rf $HOME", "is not"),
        (Allow, "shell:execute:git push:*", "is not"),
        (Allow, "shell:execute:!!rm", "is not"),
        (Allow, "net:connect:https://example.com/", "net takes a host"),
        (Allow, "net:connect:example.com:443", "net takes a host"),
        (Allow, "net:connect:*example.com", "net takes a host"),
        (Allow, "net:connect:*.*", "net takes a host"),
        (Allow, "net:connect:*.10.0.0.1", "net takes a host"),
        (Allow, "mcp:connect:git*", "not an upstream name"),
        (Allow, "mcp:connect:a__b", "not an upstream name"),
        (Allow, "mcp:connect:fs/x", "not an upstream name"),
        (Ask, "shell:execute:!rm", "belongs under allow:"),
        (Deny, "fs:read:!/etc/**", "belongs under allow:"),
    ];
    for (listed, grant, why) in table {
        let e = Grant::compile(grant, *listed, Some("/work")).expect_err(grant).to_string();
        assert!(e.contains(why), "{grant:?}: {e}");
        assert!(e.starts_with(&format!("grant {:?}", grant.trim())), "the error names the grant: {e}");
    }
    let e = Grant::compile("fs:read:src/**", Effect::Allow, None).unwrap_err().to_string();
    assert!(e.contains("needs jail.root"), "{e}");
}

#[test]
fn only_text_with_a_colon_before_any_parenthesis_is_a_grant() {
    use crate::grants::is_grant;
    for g in ["fs:read:/x", "shell:execute:git", "frob:x:y", "Shell:execute:x", "fs:read:/a(b)"] {
        assert!(is_grant(g), "{g}");
    }
    for r in ["Shell(git push:*)", "mcp__sh__run(git status:*)", "Fetch(domain:x.com)", "Read", "mcp__fs__*"]
    {
        assert!(!is_grant(r), "{r}");
    }
}

/// The tools a corpus call may be made to: one of each kind, and a generic MCP tool.
fn kinds() -> ToolKinds {
    ToolKinds::new([
        ("mcp__sh__run".to_owned(), KindSpec::bash("/command")),
        ("mcp__fs__read_file".to_owned(), KindSpec::File { path: "/path".into(), access: Access::Read }),
        ("mcp__fs__write_file".to_owned(), KindSpec::File { path: "/path".into(), access: Access::Write }),
        ("mcp__web__fetch".to_owned(), KindSpec::Fetch { url: "/url".into() }),
    ])
}

/// Every call of the corpus: each shell line of both shell corpora, file reads and writes, fetches
/// and generic MCP calls.
fn corpus() -> Vec<(&'static str, Value)> {
    let mut calls = Vec::new();
    for file in ["shell-readonly.dev.tsv", "shell-dangerous.dev.tsv"] {
        for (line, _) in portcullis_corpus::tsv_rows(&portcullis_corpus::read(file)) {
            calls.push(("mcp__sh__run", json!({ "command": line })));
        }
    }
    let paths = [
        "/srv/app/main.rs",
        "/srv/app",
        "/srv/app/.git/config",
        "/srv/application/x",
        "/srv/app/tmp/a",
        "/srv/app/tmp/a/b",
        "/etc/passwd",
        "/home/u/.ssh/id_rsa",
        "/tmp/x",
    ];
    for p in paths {
        calls.push(("mcp__fs__read_file", json!({ "path": p })));
        calls.push(("mcp__fs__write_file", json!({ "path": p })));
        calls.push(("Grep", json!({ "path": format!("{p}/**") })));
    }
    let urls = [
        "https://example.com/a",
        "https://api.example.com/a",
        "https://example.com.evil.io/",
        "http://169.254.169.254/latest/meta-data",
        "http://2130706433/",
        "http://[::1]:8080/",
        "https://github.com/",
    ];
    for u in urls {
        calls.push(("mcp__web__fetch", json!({ "url": u })));
    }
    for tool in
        ["mcp__github__create_issue", "mcp__github__resources/read", "mcp__mail__send", "mcp__gitx__y"]
    {
        calls.push((tool, json!({ "uri": "file:///srv/app/x", "title": "t" })));
    }
    calls
}

fn engine(rule: Rule, posture: Posture) -> Engine {
    Engine::new(EngineParts { rules: vec![rule], kinds: kinds(), posture, ..Default::default() })
}

/// What a decision says with the grant's name written as the rule's.
fn as_rule(mut d: Decision, grant: &str, rule: &str) -> Decision {
    if d.rule == grant {
        d.rule = rule.to_owned();
    }
    d.reason = d.reason.replace(grant, rule);
    d
}

#[test]
fn a_grant_and_its_rule_decide_every_corpus_call_identically_whatever_the_posture() {
    let pairs: &[(&str, Effect, &str, Effect)] = &[
        ("fs:read:/srv/app/**", Effect::Allow, "Read(/srv/app/**)", Effect::Allow),
        ("fs:write:/srv/app/tmp/*", Effect::Allow, "Write(/srv/app/tmp/*)", Effect::Allow),
        ("fs:read:!/srv/app/.git/**", Effect::Allow, "Read(/srv/app/.git/**)", Effect::Deny),
        ("fs:write:!*", Effect::Allow, "Write", Effect::Deny),
        ("shell:execute:git", Effect::Allow, "Shell(git:*)", Effect::Allow),
        ("shell:execute:!rm", Effect::Allow, "Shell(rm:*)", Effect::Deny),
        ("shell:execute:git push", Effect::Ask, "Shell(git push:*)", Effect::Ask),
        ("shell:execute:*", Effect::Allow, "Shell", Effect::Allow),
        ("net:connect:example.com", Effect::Allow, "Fetch(domain:example.com)", Effect::Allow),
        ("net:connect:!127.0.0.1", Effect::Allow, "Fetch(domain:127.0.0.1)", Effect::Deny),
        ("net:connect:*", Effect::Allow, "Fetch", Effect::Allow),
        ("mcp:connect:github", Effect::Allow, "mcp__github__*", Effect::Allow),
        ("mcp:connect:!mail", Effect::Allow, "mcp__mail__*", Effect::Deny),
    ];
    let calls = corpus();
    assert!(calls.len() > 700, "the corpus is read: {}", calls.len());
    let mut decided = 0;
    for (k, (grant, listed, rule, effect)) in pairs.iter().enumerate() {
        let (spec, got) = Grant::compile(grant, *listed, None).unwrap();
        let by_grant = Rule { spec, effect: got, scope: Scope::Config };
        let by_rule = Rule { spec: RuleSpec::parse(rule).unwrap(), effect: *effect, scope: Scope::Config };
        let postures = [Posture::Strict, Posture::Trusted, Posture::Auto, Posture::Yolo];
        let engines: Vec<(Posture, Engine, Engine)> = postures
            .into_iter()
            .map(|p| (p, engine(by_grant.clone(), p), engine(by_rule.clone(), p)))
            .collect();
        // Each call at one posture, turning with the call and the pair: every posture meets
        // every kind of call, at a quarter of the cost of all four.
        for (i, (tool, args)) in calls.iter().enumerate() {
            let (posture, g, r) = &engines[(i + k) % engines.len()];
            let (dg, dr) = (g.decide("u", tool, args), r.decide("u", tool, args));
            assert_eq!(as_rule(dg, grant, rule), dr, "{grant} vs {rule} at {posture:?}: {tool} {args}");
            decided += 1;
        }
    }
    assert!(decided > 13 * 700, "{decided}");
}

fn granted(grants: &[&str], profile: Option<crate::Profile>) -> Engine {
    let rules = grants
        .iter()
        .map(|g| {
            let (spec, effect) = Grant::compile(g, Effect::Allow, None).unwrap();
            Rule { spec, effect, scope: Scope::Config }
        })
        .collect();
    Engine::new(EngineParts { rules, kinds: kinds(), agent_profile: profile, ..Default::default() })
}

/// Whether a shell call's line runs a program by path or writes a file by redirection: what an
/// allow rule leaves to the floor and the `privileged` profile lifts (docs/config.md).
fn lifted_only_by_the_floor(args: &Value) -> bool {
    let line = args["command"].as_str().unwrap_or_default();
    portcullis_shell::analyze(line)
        .commands
        .iter()
        .any(|c| c.path_qualified || c.redirects.iter().any(|r| r.writes_file()))
}

#[test]
fn profiles_are_the_grants_docs_config_md_defines_them_as() {
    use crate::Profile;
    let calls = corpus();
    let readonly = granted(&[], Some(Profile::Readonly));
    let denials = granted(&["fs:write:!*", "net:connect:!*", "mcp:connect:!*"], None);
    let strict = granted(&[], None);
    let privileged = granted(&[], Some(Profile::Privileged));
    let everything =
        granted(&["fs:read:*", "fs:write:*", "shell:execute:*", "net:connect:*", "mcp:connect:*"], None);
    for (tool, args) in &calls {
        let ro = readonly.decide("u", tool, args);
        let floor = strict.decide("u", tool, args);
        match *tool {
            "mcp__sh__run" => {
                // Proven read-only lines only: allowed exactly where the strict floor allows
                // (opaque lines are asked there too), and a line not proven is denied unless it
                // could not be parsed at all.
                assert_eq!(ro.effect == Effect::Allow, floor.effect == Effect::Allow, "readonly: {args}");
                if floor.prefilter != Some(crate::Prefilter::Skip) {
                    let unparsed = ro.rule == "shell: parse error" || ro.rule == "shell: empty";
                    assert!(ro.effect == Effect::Deny || unparsed, "readonly: {args} {ro:?}");
                }
            }
            // A resource read of a file is a read (the fs:read row), whatever server serves it.
            "mcp__fs__read_file" | "Grep" | "mcp__github__resources/read" if floor.effect == Effect::Ask => {
                assert_eq!(ro.effect, Effect::Deny, "a secret read is denied: {args}");
            }
            "mcp__fs__read_file" | "Grep" | "mcp__github__resources/read" => {
                assert_eq!(ro.effect, Effect::Allow, "{args}")
            }
            _ => assert_eq!(
                (ro.effect, denials.decide("u", tool, args).effect),
                (Effect::Deny, Effect::Deny),
                "{tool} {args}"
            ),
        }
        let (p, g) = (privileged.decide("u", tool, args), everything.decide("u", tool, args));
        match lifted_only_by_the_floor(args) {
            false => assert_eq!(p.effect, g.effect, "privileged vs * grants: {tool} {args}"),
            true => assert!(p.effect <= g.effect, "privileged is the wider: {tool} {args}"),
        }
    }
}

proptest::proptest! {
    /// No text panics the compiler, and no accepted grant is wider than its scope says: the
    /// whole category (a rule with no specifier) only for `*`.
    #[test]
    fn no_grant_compiles_to_a_whole_category_unless_its_scope_is_star(
        head in proptest::sample::select(vec!["fs:read:", "fs:write:", "shell:execute:", "net:connect:", "mcp:connect:"]),
        scope in "!?(\\*|/[a-z*]{0,6}|[a-z][a-z0-9.* -]{0,8}|[ -~]{0,12})",
        listed in proptest::sample::select(vec![Effect::Allow, Effect::Ask, Effect::Deny]),
    ) {
        let grant = format!("{head}{scope}");
        if let Ok((spec, effect)) = Grant::compile(&grant, listed, Some("/work")) {
            let bare = scope.trim().trim_start_matches('!');
            let whole = match &spec.subject {
                crate::spec::Subject::Tool(g) => g.as_str() == "mcp__*",
                _ => spec.specifier.is_none(),
            };
            proptest::prop_assert_eq!(whole, bare == "*", "{}", grant);
            proptest::prop_assert_eq!(effect == Effect::Deny, listed == Effect::Deny || scope.trim().starts_with('!'));
            proptest::prop_assert_eq!(spec.source, grant.trim());
        }
    }
}
