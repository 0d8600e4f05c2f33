//! Scope tiers and workspace trust attacked through the real `portcullis hook pre` binary with
//! Claude Code envelopes: an untrusted project widening through every key a tier file accepts
//! (and the Claude Code settings file beside it), and a project's denies shed by the `cwd` the
//! envelope names.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::hook::hook;

/// `$XDG_CONFIG_HOME` (`config/`) with a user file trusting nothing, and a workspace `ws/` with a
/// subdirectory.
struct Place {
    _dir: tempfile::TempDir,
    base: PathBuf,
}

impl Place {
    fn new() -> Place {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        for d in ["ws/.portcullis", "ws/src/deep", "config/portcullis"] {
            std::fs::create_dir_all(base.join(d)).unwrap();
        }
        std::fs::write(base.join("config/portcullis/settings.yaml"), "trusted_workspaces: []\n").unwrap();
        Place { _dir: dir, base }
    }

    fn ws(&self) -> PathBuf {
        self.base.join("ws")
    }

    fn project(&self, name: &str, text: &str) {
        std::fs::write(self.ws().join(".portcullis").join(name), text).unwrap();
    }

    fn xdg(&self) -> String {
        self.base.join("config").display().to_string()
    }
}

fn bash(cwd: &Path, command: &str) -> Vec<u8> {
    json!({
        "session_id": "rt7-tiers", "transcript_path": "/tmp/t.jsonl", "cwd": cwd.display().to_string(),
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": { "command": command },
        "permission_mode": "default",
    })
    .to_string()
    .into_bytes()
}

fn decision(answer: &Value) -> String {
    answer["hookSpecificOutput"]["permissionDecision"].as_str().unwrap_or("").to_owned()
}

/// Untrusted project files that try to allow `make` (asked by the floor) through every door a
/// tier file has: grants, object-form rules, a bare string, duplicate sections, operator keys,
/// a self-trusting list, the local file. None allows it.
#[tokio::test]
async fn an_untrusted_project_widens_nothing_through_any_key_it_may_write() {
    let files: &[(&str, &str)] = &[
        ("settings.yaml", "permissions: { allow: [\"Bash(make:*)\"] }\n"),
        ("settings.yaml", "permissions: { allow: [\"shell:execute:make\"] }\n"),
        ("settings.yaml", "permissions: { allow: [\"shell:execute:*\"] }\n"),
        ("settings.yaml", "permissions: { allow: [{ rule: \"Bash(make:*)\", match: [make] }] }\n"),
        ("settings.yaml", "permissions: { allow: \"Bash(make:*)\" }\n"),
        ("settings.yaml", "permissions: { allow: [\" shell:execute:make \"] }\n"),
        ("settings.yaml", "permissions: { allow: [\"Bash\"], subagent: { allow: [\"Bash(make:*)\"] } }\n"),
        ("settings.yaml", "posture: yolo\nprofiles: { default: privileged }\n"),
        ("settings.yaml", "upstreams: {}\ntools: [{ match: Bash, kind: read }]\n"),
        ("settings.yaml", "presets: [developer]\negress: { allow: [\"*\"] }\n"),
        ("settings.yaml", "trusted_workspaces: [\"/\"]\npermissions: { allow: [\"Bash(make:*)\"] }\n"),
        ("settings.yaml", "permissions: { allow: [\"Bash(make:*)\"] }\npermissions: { deny: [] }\n"),
        ("settings.yaml", "Permissions: { allow: [\"Bash(make:*)\"] }\n"),
        ("settings.local.yaml", "permissions: { allow: [\"Bash(make:*)\"] }\n"),
        ("settings.yaml", "a: &x [\"Bash(make:*)\"]\npermissions: { allow: *x }\n"),
    ];
    for (name, text) in files {
        let p = Place::new();
        p.project(name, text);
        let xdg = p.xdg();
        let (a, stderr) = hook(&["pre"], &bash(&p.ws(), "make"), &[("XDG_CONFIG_HOME", xdg.as_str())]).await;
        assert_ne!(decision(&a), "allow", "{name}: {text:?} widened: {a} {stderr}");
    }
}

/// The project's deny is read from `<cwd>/.portcullis`: a call whose envelope names a
/// subdirectory of the project (the agent ran `cd src` and Claude Code reports the new `cwd`)
/// is decided without the project's file at all, so its deny no longer holds.
#[tokio::test]
async fn a_projects_deny_holds_in_its_subdirectories() {
    let p = Place::new();
    p.project("settings.yaml", "permissions: { deny: [\"Bash(terraform:*)\"] }\n");
    let xdg = p.xdg();
    let env = [("XDG_CONFIG_HOME", xdg.as_str())];
    let (root, _) = hook(&["pre"], &bash(&p.ws(), "terraform apply"), &env).await;
    assert_eq!(decision(&root), "deny", "the control: at the root it holds: {root}");
    for sub in ["src", "src/deep"] {
        let (a, _) = hook(&["pre"], &bash(&p.ws().join(sub), "terraform apply"), &env).await;
        assert_eq!(decision(&a), "deny", "cwd {sub}: {a}");
    }
}

/// `--import-claude-permissions` reads the project's `.claude/settings.json` — as writable by a
/// cloned repository as `.portcullis/settings.yaml` — and lays its allows in scope `cli`, with no
/// trust check: the allow the untrusted `.portcullis` file may not give, this file gives.
#[tokio::test]
async fn an_untrusted_projects_claude_settings_allow_nothing_either() {
    let p = Place::new();
    std::fs::create_dir_all(p.ws().join(".claude")).unwrap();
    let claude = json!({ "permissions": { "allow": ["Bash(make:*)"] } });
    std::fs::write(p.ws().join(".claude/settings.json"), claude.to_string()).unwrap();
    let xdg = p.xdg();
    let home = p.base.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let home = home.display().to_string();
    let env = [("XDG_CONFIG_HOME", xdg.as_str()), ("HOME", home.as_str())];
    let (plain, _) = hook(&["pre"], &bash(&p.ws(), "make"), &env).await;
    assert_eq!(decision(&plain), "ask", "the control: without the import the floor asks: {plain}");
    let (a, stderr) = hook(&["pre", "--import-claude-permissions"], &bash(&p.ws(), "make"), &env).await;
    assert_ne!(decision(&a), "allow", "untrusted workspace, imported allow: {a} {stderr}");
}

/// A cloned repository ships a symlink to the user's tier file; the operator allows edits, and
/// the agent (told by the repository's README) writes "its" file — which is the user file that
/// trusts workspaces. The protection that asks before a write to a tier file must see the file
/// the write lands in.
#[tokio::test]
async fn a_write_through_a_symlink_to_the_user_file_is_still_asked() {
    let p = Place::new();
    let user = p.base.join("config/portcullis/settings.yaml");
    std::os::unix::fs::symlink(&user, p.ws().join("notes.yaml")).unwrap();
    let extra = p.base.join("operator.yaml");
    std::fs::write(&extra, "permissions: { allow: [\"Write\", \"Edit\"] }\n").unwrap();
    let xdg = p.xdg();
    let env = [("XDG_CONFIG_HOME", xdg.as_str())];
    let write = |path: PathBuf| {
        json!({
            "session_id": "rt7-tiers", "cwd": p.ws().display().to_string(), "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": { "file_path": path.display().to_string(), "content": format!("trusted_workspaces: [{}]\n", p.ws().display()) },
        })
        .to_string()
    };
    let extra = extra.display().to_string();
    let args = ["pre", "--permission-config", extra.as_str()];
    let (plain, _) = hook(&args, write(p.ws().join("plain.yaml")).as_bytes(), &env).await;
    assert_eq!(decision(&plain), "allow", "the control: the operator allows writes: {plain}");
    let (direct, _) = hook(&args, write(user.clone()).as_bytes(), &env).await;
    assert_eq!(decision(&direct), "ask", "the user file by name: {direct}");
    let (linked, stderr) = hook(&args, write(p.ws().join("notes.yaml")).as_bytes(), &env).await;
    assert_ne!(decision(&linked), "allow", "through the link: {linked} {stderr}");
}
