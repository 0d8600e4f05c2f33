//! The user and workspace tiers laid under the operator's config: a project's allows need a
//! trusted workspace, its denies and asks always hold, nothing it writes widens the operator's.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::tiers::{Files, Tiers};
use super::workspace::{Trust, Untrusted, Workspace};
use super::Config;
use crate::rules::{Effect, Scope};

const TOOLS: &str = "tools:\n  - { match: mcp__sh__run, kind: shell, command: /command }\n  - { match: \"mcp__fs__write_*\", kind: file, path: /path, access: write }\n";

/// A temporary home: `ws/` (the workspace) and `config/portcullis/settings.yaml` (the user file).
struct Home {
    _dir: tempfile::TempDir,
    base: PathBuf,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(base.join("ws/.portcullis")).unwrap();
        std::fs::create_dir_all(base.join("config/portcullis")).unwrap();
        Home { _dir: dir, base }
    }

    fn ws(&self) -> PathBuf {
        self.base.join("ws")
    }

    fn user(&self, text: &str) -> &Home {
        std::fs::write(self.base.join("config/portcullis/settings.yaml"), text).unwrap();
        self
    }

    fn trusting(&self) -> &Home {
        self.user(&format!("trusted_workspaces: [{}]\n", self.ws().display()))
    }

    fn project(&self, file: &str, text: &str) -> &Home {
        std::fs::write(self.ws().join(".portcullis").join(file), text).unwrap();
        self
    }

    fn files(&self) -> Files {
        Files {
            user: Some(self.base.join("config/portcullis/settings.yaml")),
            workspace: Some(Workspace::resolve(&self.ws(), Path::new("/")).unwrap()),
        }
    }

    fn tiers(&self) -> Tiers {
        self.files().load().unwrap_or_else(|e| panic!("{e}"))
    }

    /// The operator's `main` config with the tiers under it.
    fn config(&self, main: &str) -> Config {
        Config::parse_layered(&format!("{TOOLS}{main}"), "main", &self.tiers().layers)
            .unwrap_or_else(|e| panic!("{e}"))
    }
}

fn shell(c: &Config, command: &str) -> (Effect, Scope) {
    let d = c.policy.engine.decide("sh", "mcp__sh__run", &json!({ "command": command }));
    (d.effect, d.scope)
}

const PROJECT: &str = "permissions: { allow: [\"Shell(make:*)\", \"Shell(rm:*)\"], ask: [\"Shell(git push:*)\"], deny: [\"Shell(curl:*)\"] }\n";

#[test]
fn a_project_allow_applies_only_in_a_trusted_workspace() {
    let h = Home::new();
    h.project("settings.yaml", PROJECT);
    assert_eq!(shell(&h.config(""), "make"), (Effect::Ask, Scope::Builtin), "untrusted: the floor asks");
    h.trusting();
    assert_eq!(shell(&h.config(""), "make"), (Effect::Allow, Scope::SharedProject));
    h.project("settings.local.yaml", "permissions: { allow: [\"Shell(cargo:*)\"] }\n");
    assert_eq!(shell(&h.config(""), "cargo test"), (Effect::Allow, Scope::LocalProject));
}

#[test]
fn a_project_deny_and_ask_hold_whether_or_not_the_workspace_is_trusted() {
    let h = Home::new();
    h.project("settings.yaml", PROJECT);
    for trusted in [false, true] {
        if trusted {
            h.trusting();
        }
        let c = h.config("permissions: { allow: [\"Shell(curl:*)\", \"Shell(git push:*)\"] }\n");
        assert_eq!(shell(&c, "curl x"), (Effect::Deny, Scope::SharedProject), "trusted {trusted}");
        assert_eq!(shell(&c, "git push"), (Effect::Ask, Scope::SharedProject), "trusted {trusted}");
    }
}

#[test]
fn a_trusted_projects_allow_never_lifts_an_operators_deny_or_ask() {
    let h = Home::new();
    h.trusting().project("settings.yaml", PROJECT);
    let c = h.config("permissions: { deny: [\"Shell(rm:*)\"], ask: [\"Shell(make install:*)\"] }\n");
    assert_eq!(shell(&c, "rm -rf /"), (Effect::Deny, Scope::Config));
    assert_eq!(shell(&c, "make install"), (Effect::Ask, Scope::Config));
    assert_eq!(shell(&c, "make"), (Effect::Allow, Scope::SharedProject));
}

#[test]
fn an_untrusted_project_keeps_its_exclusions_which_are_denies() {
    let h = Home::new();
    h.project("settings.yaml", "permissions: { allow: [\"shell:execute:!wget\", \"shell:execute:make\"] }\n");
    let t = h.tiers();
    assert!(t.notes.iter().any(|n| n.contains("1 allow rule(s) ignored")), "{:?}", t.notes);
    let c = h.config("");
    assert_eq!(shell(&c, "wget x").0, Effect::Deny);
    assert_eq!(shell(&c, "make").0, Effect::Ask);
}

#[test]
fn a_project_file_cannot_trust_itself_nor_set_operator_keys() {
    let h = Home::new();
    let ws = h.ws().display().to_string();
    h.project(
        "settings.yaml",
        &format!(
            "trusted_workspaces: [{ws}]\nguardrails: {{ backend: none }}\nauthority: x\nadmin: {{}}\nupstreams: {{}}\nlisten: 0.0.0.0:1\nwhatever: 1\npermissions: {{ allow: [\"Shell(make:*)\"] }}\n"
        ),
    );
    let t = h.tiers();
    assert_eq!(t.trust, Trust::Untrusted(Untrusted::NotListed));
    for key in ["trusted_workspaces", "guardrails", "authority", "admin", "upstreams", "listen", "whatever"] {
        assert!(t.notes.iter().any(|n| n.contains(key) && n.contains("ignored")), "{key}: {:?}", t.notes);
    }
    assert_eq!(shell(&h.config(""), "make").0, Effect::Ask);
}

#[test]
fn a_corrupt_trust_list_trusts_nothing_and_says_so_once() {
    let h = Home::new();
    h.user("trusted_workspaces: { not: a list }\n").project("settings.yaml", PROJECT);
    let t = h.tiers();
    assert!(matches!(t.trust, Trust::Untrusted(Untrusted::Corrupt(_))), "{:?}", t.trust);
    assert_eq!(t.notes.iter().filter(|n| n.contains("no workspace is trusted")).count(), 1, "{:?}", t.notes);
    assert_eq!(shell(&h.config(""), "make").0, Effect::Ask);
}

#[test]
fn a_file_that_cannot_be_read_or_parsed_fails_closed_naming_it() {
    let cases: &[(&str, &str)] = &[
        ("settings.yaml", "permissions: [not, a, mapping]\n"),
        ("settings.yaml", "permissions: {\n"),
        ("settings.local.yaml", "permissions: { deny: [\"Shell(\"] }\n"),
    ];
    for (file, text) in cases {
        let h = Home::new();
        h.project(file, text);
        let err = match h.files().load() {
            Err(e) => e,
            Ok(t) => Config::parse_layered(TOOLS, "main", &t.layers).expect_err(text).to_string(),
        };
        assert!(err.contains(file), "{text}: {err}");
    }
    let h = Home::new();
    std::os::unix::fs::symlink("/dev/zero", h.ws().join(".portcullis/settings.yaml")).unwrap();
    assert!(h.files().load().unwrap_err().contains("symlink"));
    let h = Home::new();
    h.user("permissions: {\n");
    assert!(h.files().load().unwrap_err().contains("settings.yaml"));
}

#[test]
fn a_parse_error_never_quotes_the_file() {
    let h = Home::new();
    h.project("settings.yaml", "AKIASECRETVALUE1234 {{ [\n");
    let err = h.files().load().unwrap_err();
    assert!(!err.contains("AKIASECRET") && err.contains("line"), "{err}");
    h.project("settings.yaml", "permissions: AKIASECRETVALUE1234\n");
    let err = h.files().load().unwrap_err();
    assert!(!err.contains("AKIASECRET"), "{err}");
}

#[test]
fn the_user_tier_applies_its_allows_and_an_agent_writing_any_tier_file_is_asked() {
    let h = Home::new();
    h.user("permissions: { allow: [\"Shell(make:*)\"] }\n");
    let c = h.config("posture: auto\n");
    assert_eq!(shell(&c, "make"), (Effect::Allow, Scope::User));
    for path in [
        h.ws().join(".portcullis/settings.yaml"),
        h.ws().join(".portcullis/settings.local.yaml"),
        h.base.join("config/portcullis/settings.yaml"),
    ] {
        let d = c.policy.engine.decide("fs", "mcp__fs__write_file", &json!({ "path": path }));
        assert_eq!((d.effect, d.scope), (Effect::Ask, Scope::Config), "{path:?}: {d:?}");
        let redirect = format!("echo 'allow: [\"*\"]' > {}", path.display());
        assert_eq!(shell(&c, &redirect).0, Effect::Ask, "{redirect}");
    }
}

#[test]
fn no_workspace_files_mean_only_the_protection_layer() {
    let h = Home::new();
    let t = h.tiers();
    assert_eq!(t.layers.len(), 1, "{:?}", t.layers);
    assert!(t.notes.is_empty(), "{:?}", t.notes);
}

#[test]
fn a_yaml_alias_bomb_in_a_project_file_is_refused_quickly() {
    let h = Home::new();
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (prev, next) in ('a'..='s').zip('b'..='t') {
        let refs = vec![format!("*{prev}"); 10].join(", ");
        bomb.push_str(&format!("{next}: &{next} [{refs}]\n"));
    }
    bomb.push_str("permissions: { deny: [*t] }\n");
    h.project("settings.yaml", &bomb);
    let started = std::time::Instant::now();
    let outcome = h.files().load().map(|t| Config::parse_layered(TOOLS, "main", &t.layers).is_err());
    assert!(started.elapsed() < std::time::Duration::from_secs(1), "{:?}", started.elapsed());
    assert!(outcome.as_ref().is_err_and(|e| e.contains("within its limits")), "{outcome:?}");
    h.project("settings.yaml", "permissions: { deny: [Bash] }\npermissions: { allow: [Bash] }\n");
    assert!(h.files().load().unwrap_err().contains("settings.yaml"), "a duplicate key is an error");
}

#[test]
fn a_call_in_a_subdirectory_belongs_to_the_nearest_project_above_it_and_dir_means_itself() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    for d in ["ws/.portcullis", "ws/src/deep", "ws/inner/.portcullis", "ws/inner/lib", "loose/x"] {
        std::fs::create_dir_all(base.join(d)).unwrap();
    }
    std::os::unix::fs::symlink(base.join("ws/src"), base.join("link")).unwrap();
    let of = |p: &str| super::tiers::workspace_of_cwd(&base.join(p)).unwrap().root().to_path_buf();
    assert_eq!(of("ws"), base.join("ws"));
    assert_eq!(of("ws/src"), base.join("ws"));
    assert_eq!(of("ws/src/deep"), base.join("ws"));
    assert_eq!(of("ws/src/deep/../.."), base.join("ws"));
    assert_eq!(of("link/deep"), base.join("ws"), "resolved before the walk");
    assert_eq!(of("ws/inner/lib"), base.join("ws/inner"), "the nearest project");
    assert_eq!(of("loose/x"), base.join("loose/x"), "no project: the directory itself");
    let exact = super::tiers::workspace_at(&base.join("ws/src/deep")).unwrap();
    assert_eq!(exact.root(), base.join("ws/src/deep"), "--workspace DIR is DIR");
}
