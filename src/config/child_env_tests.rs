//! Tests of `config::child_env`: every `*_env` setting is a guard credential, what a spawned
//! server's environment keeps, and the `upstreams.NAME.env` problems.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::Path;

use super::child_env::{ChildEnv, ADMIN_TOKEN_VAR};
use super::{Config, EnvName};

/// A config that sets every `*_env` setting there is, each to its own variable.
const EVERY_ENV: &str = r#"
admin: { token_env: PC_ADMIN }
upstreams:
  fs: { url: "http://127.0.0.1:1/mcp", auth: { bearer_env: PC_BEARER } }
  cc:
    url: "http://127.0.0.1:2/mcp"
    auth: { client_credentials: { token_url: "https://as.example/token", client_id: px, client_secret_env: PC_CLIENT_SECRET } }
  tool: { env: [GITHUB_TOKEN] }
agents:
  dev: { token_env: PC_AGENT_DEV }
  ci: { token_env: PC_AGENT_CI }
guardrails:
  checker: { base_url: "http://127.0.0.1:1/v1", model: m, api_key_env: PC_CHECKER }
  rules:
    - { match: "mcp__*", shadow: { rubric: injection, checker: { base_url: "http://127.0.0.1:2/v1", model: s, api_key_env: PC_SHADOW } } }
approvals: { seal_key_env: PC_SEAL, notify: [ { slack_webhook_env: PC_SLACK } ] }
state: { backend: redis, url_env: PC_REDIS }
"#;

/// Every field named `*_env` in the config's types (`src/config/*.rs`), read from the source:
/// a new setting is found here the day it is written.
fn env_fields_in_the_schema() -> BTreeSet<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/config");
    let mut out = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("child_env_tests.rs") {
            continue;
        }
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let field = line.trim_start().trim_start_matches("pub(crate) ").trim_start_matches("pub ");
            let Some((name, ty)) = field.split_once(':') else { continue };
            let is_ident = name.chars().all(|c| c.is_ascii_lowercase() || c == '_');
            let ty = ty.trim();
            let is_name_type =
                ["String", "EnvName", "Option<String>", "Option<EnvName>"].iter().any(|t| ty.starts_with(t));
            if is_ident && name.ends_with("_env") && is_name_type {
                out.insert(name.to_owned());
            }
        }
    }
    out
}

/// Every `*_env` key of a YAML document: its path (as problems spell paths), key and value.
fn env_keys(v: &serde_json::Value, path: &str, out: &mut Vec<(String, String, String)>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                let here = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                match v.as_str() {
                    Some(var) if k.ends_with("_env") => out.push((here, k.clone(), var.to_owned())),
                    _ => env_keys(v, &here, out),
                }
            }
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                env_keys(v, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_env_setting_in_the_schema_names_a_guard_credential() {
    let schema = env_fields_in_the_schema();
    for known in ["api_key_env", "token_env", "seal_key_env", "url_env", "bearer_env", "client_secret_env"] {
        assert!(schema.contains(known), "the source scan missed {known}: {schema:?}");
    }
    let doc: serde_json::Value = serde_saphyr::from_str(EVERY_ENV).unwrap();
    let mut keys = Vec::new();
    env_keys(&doc, "", &mut keys);
    let written: BTreeSet<String> = keys.iter().map(|(_, k, _)| k.clone()).collect();
    for field in &schema {
        assert!(
            written.contains(field),
            "{field} is a setting the test config does not set: add it to EVERY_ENV"
        );
    }
    let config = Config::parse(EVERY_ENV, "t").unwrap_or_else(|e| panic!("{e}"));
    let secrets = config.guard_secret_vars();
    for (path, _, var) in &keys {
        assert_eq!(secrets.source(var), Some(path.as_str()), "{var} (named at {path}) is not scrubbed");
    }
    assert!(secrets.contains(ADMIN_TOKEN_VAR));
    // Nothing else: the set is exactly the settings plus the fixed name.
    assert_eq!(secrets.names().count(), keys.len() + 1, "{secrets:?}");
    assert!(!secrets.contains("GITHUB_TOKEN"), "an allowlisted variable is no credential");
}

fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
}

fn names(env: &[(OsString, OsString)]) -> Vec<String> {
    env.iter().map(|(k, _)| k.to_string_lossy().into_owned()).collect()
}

#[test]
fn a_spawned_server_keeps_what_its_policy_passes_and_never_a_credential() {
    let config = Config::parse(EVERY_ENV, "t").unwrap();
    let secrets = config.guard_secret_vars();
    let parent = os(&[
        ("PATH", "/usr/bin"),
        ("HOME", "/home/a"),
        ("LC_ALL", "C.UTF-8"),
        ("LC_TIME", "C"),
        ("TZ", "UTC"),
        ("PC_CHECKER", "sk-1"),
        ("PC_ADMIN", "adm"),
        ("PC_AGENT_DEV", "dev"),
        ("PC_SHADOW", "sk-2"),
        ("PC_SEAL", "seal"),
        ("PC_REDIS", "redis://:pw@h"),
        ("PC_BEARER", "b"),
        ("PC_CLIENT_SECRET", "c"),
        (ADMIN_TOKEN_VAR, "adm2"),
        ("GITHUB_TOKEN", "ghp"),
        ("EDITOR", "vi"),
        ("LCX", "not a locale"),
    ]);
    let allowed = [EnvName::parse("GITHUB_TOKEN").unwrap(), EnvName::parse("PC_CHECKER").unwrap()];
    let table: &[(ChildEnv, &[&str])] = &[
        (ChildEnv::Inherit, &["PATH", "HOME", "LC_ALL", "LC_TIME", "TZ", "GITHUB_TOKEN", "EDITOR", "LCX"]),
        // PC_CHECKER is listed (validate refuses that) and still never passes.
        (ChildEnv::Only(&allowed), &["PATH", "HOME", "LC_ALL", "LC_TIME", "TZ", "GITHUB_TOKEN"]),
        (ChildEnv::Only(&[]), &["PATH", "HOME", "LC_ALL", "LC_TIME", "TZ"]),
    ];
    for (policy, want) in table {
        let built = policy.apply(parent.clone(), &secrets);
        assert_eq!(names(&built.vars), *want, "{policy:?}");
        assert!(built.aliases.is_empty());
    }
    assert_eq!(config.child_env("tool"), ChildEnv::Only(&[EnvName::parse("GITHUB_TOKEN").unwrap()]));
    assert_eq!(config.child_env("stdio"), ChildEnv::Inherit, "no entry: inherit, minus the credentials");
}

#[test]
fn a_credential_with_a_baseline_name_is_still_dropped() {
    let config = Config::parse("admin: { token_env: HOME }\n", "t").unwrap();
    let kept =
        ChildEnv::Only(&[]).apply(os(&[("HOME", "token"), ("PATH", "/bin")]), &config.guard_secret_vars());
    assert_eq!(names(&kept.vars), ["PATH"]);
}

#[test]
fn a_credential_value_under_another_name_never_passes() {
    let config = Config::parse(
        "guardrails: { checker: { base_url: \"http://127.0.0.1:1/v1\", model: m, api_key_env: PC_KEY } }\n",
        "t",
    )
    .unwrap();
    let secrets = config.guard_secret_vars();
    let parent = os(&[
        ("PC_KEY", "sk-live-1"),
        ("OPENAI_API_KEY", "sk-live-1"),
        ("PATH", "/bin"),
        ("EMPTY", ""),
        ("OTHER", "sk-live-2"),
    ]);
    let listed = [EnvName::parse("OPENAI_API_KEY").unwrap()];
    for policy in [ChildEnv::Inherit, ChildEnv::Only(&listed)] {
        let built = policy.apply(parent.clone(), &secrets);
        assert!(!built.vars.iter().any(|(_, v)| v == "sk-live-1"), "{policy:?}: {built:?}");
        assert_eq!(built.aliases, ["OPENAI_API_KEY"], "{policy:?}");
    }
    // An unset or empty credential makes no value a secret.
    let empty = os(&[("PC_KEY", ""), ("EMPTY", ""), ("PATH", "/bin")]);
    assert_eq!(names(&ChildEnv::Inherit.apply(empty, &secrets).vars), ["EMPTY", "PATH"]);
    let built = ChildEnv::Inherit.apply(parent, &secrets);
    assert_eq!(names(&built.vars), ["PATH", "EMPTY", "OTHER"]);
}

#[cfg(unix)]
#[test]
fn a_variable_whose_name_is_not_utf8_passes_only_when_inheriting() {
    use std::os::unix::ffi::OsStringExt;
    let parent = vec![(OsString::from_vec(b"X\xff".to_vec()), OsString::from("v"))];
    let secrets = Config::parse("", "t").unwrap().guard_secret_vars();
    assert_eq!(ChildEnv::Inherit.apply(parent.clone(), &secrets).vars.len(), 1);
    assert!(ChildEnv::Only(&[]).apply(parent, &secrets).vars.is_empty());
}

#[test]
fn env_allowlist_problems_are_all_reported() {
    let text = r#"
guardrails: { checker: { base_url: "http://127.0.0.1:1/v1", model: m, api_key_env: PC_CHECKER } }
admin: { token_env: PC_ADMIN }
agents: { dev: { token_env: PC_DEV } }
upstreams:
  a: { env: [GITHUB_TOKEN, PC_CHECKER, "NPM_*", PC_DEV] }
  b: { url: "http://127.0.0.1:1/mcp", env: [X] }
  c: { env: [PORTCULLIS_ADMIN_TOKEN, PC_ADMIN], auth: { bearer_env: T } }
  d: { profile: readonly }
"#;
    let err = Config::parse(text, "t").unwrap_err();
    let paths: Vec<&str> = err.problems.iter().map(|p| p.path.as_str()).collect();
    for want in [
        "upstreams.a.env[1]",
        "upstreams.a.env[2]",
        "upstreams.a.env[3]",
        "upstreams.b.env",
        "upstreams.c.env[0]",
        "upstreams.c.env[1]",
        "upstreams.c.auth",
        "upstreams.d",
    ] {
        assert!(paths.contains(&want), "missing {want} in {err}");
    }
    assert!(!paths.contains(&"upstreams.a.env[0]"), "{err}");
    let said = err.to_string();
    assert!(
        said.contains("PC_CHECKER holds the guard's own credential (guardrails.checker.api_key_env)"),
        "{said}"
    );
    assert!(said.contains("PC_DEV holds the guard's own credential (agents.dev.token_env)"), "{said}");
}

#[test]
fn a_stdio_entry_is_no_http_upstream_keeps_its_profile_and_an_empty_env_is_the_baseline() {
    let text = r#"
upstreams:
  gh: { env: [GITHUB_TOKEN], profile: readonly }
tools: [{ match: "mcp__*__write", kind: file, path: /path, access: write }]
permissions: { allow: [mcp__gh__write, mcp__other__write] }
"#;
    let c = Config::parse(text, "t").unwrap();
    assert!(c.upstreams.is_empty(), "serve routes nothing to a stdio server");
    assert_eq!(c.stdio_servers["gh"].env, [EnvName::parse("GITHUB_TOKEN").unwrap()]);
    // Its profile is the wrapped server's (`wrap --name gh`), as an HTTP upstream's would be.
    let write = |upstream: &str| {
        let tool = format!("mcp__{upstream}__write");
        c.policy.engine.decide(upstream, &tool, &serde_json::json!({"path": "/tmp/x"})).effect
    };
    assert_eq!(write("gh"), crate::rules::Effect::Deny);
    assert_eq!(write("other"), crate::rules::Effect::Allow);
    let empty = Config::parse("upstreams:\n  gh: { env: [] }\n", "t").unwrap();
    assert_eq!(empty.child_env("gh"), ChildEnv::Only(&[]), "env: [] is the baseline alone");
}
