//! A shell tool's line is judged as the shell that runs it: the read-only pre-filter skips the
//! checker only for what is proven in that shell.

use portcullis_rules::kinds::{KindSpec, ToolKinds};
use portcullis_rules::spec::RuleSpec;
use portcullis_rules::{Effect, Engine, EngineParts, Prefilter, Rule, Scope};
use portcullis_shell::Dialect;
use serde_json::json;

fn engine() -> Engine {
    let tool = |name: &str, shell: Dialect| {
        (
            name.to_owned(),
            KindSpec::Shell {
                command: "/command".into(),
                allowlist: None,
                shell,
                shell_pointer: None,
                cwd_pointer: None,
            },
        )
    };
    let kinds = ToolKinds::new([tool("mcp__bash__run", Dialect::Bash), tool("mcp__zsh__run", Dialect::Zsh)]);
    Engine::new(EngineParts { kinds, ..EngineParts::default() })
}

fn prefilter(engine: &Engine, tool: &str, line: &str) -> Option<Prefilter> {
    engine.decide("up", tool, &json!({ "command": line })).prefilter
}

#[test]
fn a_zsh_tool_is_not_proven_read_only_where_zsh_differs_from_bash() {
    let e = engine();
    let rebinding = "hash cat=/bin/sh; cat notes.txt";
    assert_eq!(prefilter(&e, "mcp__bash__run", rebinding), Some(Prefilter::Skip));
    assert_eq!(prefilter(&e, "mcp__zsh__run", rebinding), Some(Prefilter::Inspect));
    for line in ["ls -la", "git status"] {
        assert_eq!(prefilter(&e, "mcp__zsh__run", line), Some(Prefilter::Skip), "{line}");
    }
    for line in ["printf %d 1", "ls *.rs"] {
        assert_eq!(prefilter(&e, "mcp__zsh__run", line), Some(Prefilter::Inspect), "{line}");
    }
}

#[test]
fn claude_codes_bash_reads_the_hook_s_shell_from_its_arguments() {
    let e = Engine::default();
    let line = "hash cat=/bin/sh; cat x";
    let decide = |shell: Option<&str>| {
        let mut args = json!({ "command": line });
        if let Some(s) = shell {
            args["portcullis_shell"] = json!(s);
        }
        e.decide("claude-code", "Bash", &args).prefilter
    };
    assert_eq!(decide(None), Some(Prefilter::Skip));
    assert_eq!(decide(Some("zsh")), Some(Prefilter::Inspect));
    assert_eq!(decide(Some("bash")), Some(Prefilter::Skip));
}

#[test]
fn code_hidden_in_a_builtin_name_meets_the_deny_rules() {
    let deny = Rule {
        spec: RuleSpec::parse("Shell(rm:*)").expect("rule"),
        effect: Effect::Deny,
        scope: Scope::Config,
    };
    let kinds = ToolKinds::new([("mcp__sh__run".to_owned(), KindSpec::bash("/command"))]);
    let e = Engine::new(EngineParts { kinds, rules: vec![deny], ..EngineParts::default() });
    for line in [
        "printf '-va[$(rm -f victim)]' x",
        "read 'a[$(rm -f victim)]' <<< x",
        "declare -n r='a[`rm -f victim`]'",
        "[[ 'a[$(rm -f victim)]' -eq 1 ]]",
        "(( 'a[$(rm -f victim)]' ))",
        "echo ${a['$(rm -f victim)']}",
    ] {
        let d = e.decide("up", "mcp__sh__run", &json!({ "command": line }));
        assert_eq!(d.effect, Effect::Deny, "{line}: {d:?}");
    }
}
