//! Claude Code's permission rules, imported lossy and never wider.
use super::*;

fn imported(settings: Value) -> (Value, Vec<String>) {
    import(&settings.to_string(), Path::new("/work/repo"), Some(Path::new("/home/dev"))).unwrap()
}

#[test]
fn each_claude_rule_becomes_what_it_means_and_allows_only_narrow() {
    let (perms, lost) = imported(json!({"permissions": {
        "allow": ["Bash(npm run test:*)", "WebFetch(domain:docs.rs)", "WebSearch", "Read(~/notes/**)",
                  "Edit(/src/**)", "Read(//etc/hosts)", "Read(*.md)", "mcp__github", "Bash(unclosed"],
        "ask": ["Bash(git push *)"],
        "deny": ["Read(~/.ssh/**)", "Edit(/secrets/**)", "mcp__fs__delete_file", 7],
    }}));
    let p = &perms["permissions"];
    assert_eq!(
        p["allow"],
        json!([
            "Bash(npm run test:*)",
            "WebSearch",
            "Edit(/work/repo/src/**)",
            "Read(/etc/hosts)",
            "Read(/work/repo/*.md)",
            "mcp__github__*"
        ])
    );
    assert_eq!(p["ask"], json!(["Bash(git push *)", "Bash(git push:*)", "WebFetch(domain:docs.rs)"]));
    assert_eq!(
        p["deny"],
        json!([
            "Read(/home/dev/.ssh/**)",
            "Edit(/work/repo/secrets/**)",
            "Edit(/secrets/**)",
            "mcp__fs__delete_file"
        ])
    );
    for (what, needle) in [
        ("the demotion", "demoted to ask"),
        ("the inert home allow", "not expanded in an allow"),
        ("the unparseable rule", "Bash(unclosed"),
        ("the non-string", "7 is not a rule"),
    ] {
        assert!(lost.iter().any(|l| l.contains(needle)), "{what} is reported: {lost:?}");
    }
}

#[test]
fn a_file_that_is_not_settings_imports_nothing_and_says_why() {
    assert!(import("{", Path::new("/p"), None).is_err());
    let (perms, lost) = imported(json!({"permissions": {"allow": "Bash"}}));
    assert_eq!(perms["permissions"]["allow"], json!([]));
    assert!(lost.iter().any(|l| l.contains("not a list")), "{lost:?}");
    let (perms, lost) = imported(json!({"model": "opus"}));
    assert_eq!(perms["permissions"], json!({"allow": [], "ask": [], "deny": []}));
    assert!(lost.is_empty());
}

#[test]
fn every_imported_rule_compiles_in_a_real_config() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("repo");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let settings = json!({"permissions": {
        "allow": ["Bash(cargo test:*)", "Edit(src/**)"], "deny": ["Read(.env)", "Bash(rm *)"]}});
    std::fs::write(project.join(".claude/settings.json"), settings.to_string()).unwrap();
    let (layers, notes) = layers(&project, None);
    assert_eq!(layers.len(), 1, "{notes:?}");
    let config = crate::config::Config::parse_layered(crate::config::DEFAULT_YAML, "embedded", &layers)
        .unwrap_or_else(|e| panic!("{e}"));
    let engine = &config.policy.engine;
    let decide = |tool: &str, args: Value| engine.decide("", tool, &args).effect;
    use crate::rules::Effect as E;
    let env = project.join(".env").display().to_string();
    assert_eq!(decide("Read", json!({"file_path": env})), E::Deny);
    assert_eq!(decide("Bash", json!({"command": "rm -rf build"})), E::Deny);
    assert_eq!(decide("Bash", json!({"command": "rm"})), E::Deny, "the bare command too");
    // The project's file is the project's tier: in a workspace the user file does not trust (no
    // test trusts one), its allows are dropped and said, as `.portcullis/` allows are.
    assert_eq!(layers[0].scope, crate::rules::Scope::SharedProject);
    assert!(notes.iter().any(|n| n.contains("2 allow rule(s) ignored")), "{notes:?}");
    let src = project.join("src/lib.rs").display().to_string();
    assert_eq!(decide("Edit", json!({"file_path": src, "old_string": "a", "new_string": "b"})), E::Ask);
}

#[test]
fn the_users_own_claude_settings_are_the_user_tier_and_keep_their_allows() {
    let dir = tempfile::tempdir().unwrap();
    let (project, home) = (dir.path().join("repo"), dir.path().join("home"));
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let settings = json!({"permissions": {"allow": ["Bash(cargo test:*)"]}});
    std::fs::write(home.join(".claude/settings.json"), settings.to_string()).unwrap();
    let (layers, notes) = layers(&project, Some(&home));
    assert_eq!(layers.len(), 1, "{notes:?}");
    assert_eq!(layers[0].scope, crate::rules::Scope::User);
    assert!(layers[0].text.contains("Bash(cargo test:*)"), "{}", layers[0].text);
}
