//! What a stdio server started by portcullis inherits: never the guard's own credentials (the
//! checker's key, the admin, agent and upstream tokens, the seal key, the state store's URL),
//! and with `upstreams.NAME.env` only a baseline and the names listed. The server is the real
//! server-everything, whose `get-env` tool returns its whole environment over MCP; `pin` is
//! checked with a shell that writes its environment to a file before it starts the server.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

use crate::support::*;

/// Each guard credential's variable and the value the test gives it.
const CREDENTIALS: &[(&str, &str)] = &[
    ("PC_TEST_CHECKER_KEY", "marker-checker-key-5be1"),
    ("PC_TEST_ADMIN_TOKEN", "marker-admin-token-5be1"),
    ("PC_TEST_AGENT_TOKEN", "marker-agent-token-5be1"),
    ("PC_TEST_SEAL_KEY", "marker-seal-key-5be1-0123456789abcdef0123456789"),
    ("PC_TEST_REDIS_URL", "redis://:marker-redis-5be1@127.0.0.1:9/0"),
    ("PC_TEST_BEARER", "marker-bearer-5be1"),
    ("PC_TEST_CLIENT_SECRET", "marker-client-secret-5be1"),
    ("PORTCULLIS_ADMIN_TOKEN", "marker-fixed-admin-5be1"),
];

/// A config naming every kind of guard credential; `extra` adds `upstreams` entries. `pin`
/// would list the HTTP upstreams first (and fail: nothing listens), so it gets none.
fn config(dir: &Path, http_upstreams: bool, extra: &str) -> PathBuf {
    let http = if http_upstreams { HTTP_UPSTREAMS } else { "" };
    let yaml = format!(
        r#"permissions: {{ allow: ["mcp__everything__*"] }}
admin: {{ token_env: PC_TEST_ADMIN_TOKEN }}
agents: {{ dev: {{ token_env: PC_TEST_AGENT_TOKEN }} }}
guardrails:
  checker: {{ base_url: "http://127.0.0.1:9/v1", model: m, api_key_env: PC_TEST_CHECKER_KEY, probe: off }}
  rules: []
approvals: {{ seal_key_env: PC_TEST_SEAL_KEY }}
state: {{ backend: redis, url_env: PC_TEST_REDIS_URL }}
upstreams:
{http}{extra}"#
    );
    let path = dir.join("portcullis.yaml");
    std::fs::write(&path, yaml).unwrap();
    path
}

/// Upstreams whose auth names credentials.
const HTTP_UPSTREAMS: &str = r#"  web: { url: "http://127.0.0.1:9/mcp", auth: { bearer_env: PC_TEST_BEARER } }
  oauth:
    url: "http://127.0.0.1:9/mcp"
    auth: { client_credentials: { token_url: "http://127.0.0.1:9/token", client_id: px, client_secret_env: PC_TEST_CLIENT_SECRET } }
"#;

/// `portcullis SUBCOMMAND…` with every credential set, plus `vars`.
fn portcullis(vars: &[(&str, &str)]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_portcullis"));
    c.env("PORTCULLIS_LOG", "warn").envs(CREDENTIALS.iter().copied()).envs(vars.iter().copied());
    c
}

/// Runs `wrap --name everything --agent dev` around server-everything and returns the
/// environment its `get-env` tool reports.
async fn wrapped_server_env(config: &Path, vars: &[(&str, &str)]) -> serde_json::Map<String, Value> {
    let server = node_module("@modelcontextprotocol/server-everything/dist/index.js");
    let mut child = portcullis(vars)
        .args(["wrap", "--config"])
        .arg(config)
        .args(["--name", "everything", "--agent", "dev", "--", "node"])
        .arg(&server)
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"portcullis-test","version":"1"}}});
    let initialized = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let call =
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get-env","arguments":{}}});
    for msg in [init, initialized, call] {
        stdin.write_all(format!("{msg}\n").as_bytes()).await.unwrap();
    }
    stdin.flush().await.unwrap();
    let answer = loop {
        let line = tokio::time::timeout(PATIENCE, lines.next_line())
            .await
            .expect("get-env answered in time")
            .unwrap()
            .expect("wrap's stdout is open");
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        if v["id"] == 2 {
            break v;
        }
    };
    drop(stdin);
    let _ = tokio::time::timeout(Duration::from_secs(30), child.wait()).await;
    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{answer}"));
    for (var, value) in CREDENTIALS {
        assert!(!text.contains(value), "the server saw {var}'s value: {text}");
    }
    match serde_json::from_str(text) {
        Ok(Value::Object(env)) => env,
        other => panic!("get-env returned no environment: {other:?}"),
    }
}

#[tokio::test]
async fn a_wrapped_server_inherits_the_environment_but_never_the_guards_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), true, "");
    // The checker's key again under a name the config does not know.
    let vars = [("PC_TEST_UNRELATED", "passes-through"), ("PC_TEST_ALIAS", CREDENTIALS[0].1)];
    let env = wrapped_server_env(&config, &vars).await;
    for (var, _) in CREDENTIALS {
        assert!(!env.contains_key(*var), "{var} reached the server");
    }
    assert!(!env.contains_key("PC_TEST_ALIAS"), "a credential's value under another name");
    assert_eq!(
        env.get("PC_TEST_UNRELATED"),
        Some(&json!("passes-through")),
        "without env: the rest is inherited"
    );
    assert!(env.contains_key("PATH"));
}

#[tokio::test]
async fn a_wrapped_server_with_an_env_allowlist_gets_the_baseline_and_the_names_listed_only() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), true, "  everything: { env: [PC_TEST_ALLOWED] }\n");
    let vars =
        [("PC_TEST_ALLOWED", "listed-5be1"), ("PC_TEST_UNRELATED", "not-listed-5be1"), ("LC_TIME", "C")];
    let env = wrapped_server_env(&config, &vars).await;
    assert_eq!(env.get("PC_TEST_ALLOWED"), Some(&json!("listed-5be1")));
    assert_eq!(env.get("LC_TIME"), Some(&json!("C")), "the locale is baseline");
    assert!(env.contains_key("PATH"), "the baseline");
    assert!(!env.contains_key("PC_TEST_UNRELATED"), "{env:?}");
    assert!(!env.contains_key("PORTCULLIS_LOG"), "{env:?}");
    let unexpected: Vec<&String> = env
        .keys()
        .filter(|k| {
            !["PATH", "HOME", "USER", "LOGNAME", "LANG", "TERM", "TMPDIR", "SHELL", "TZ", "PC_TEST_ALLOWED"]
                .contains(&k.as_str())
        })
        .filter(|k| !k.starts_with("LC_"))
        .collect();
    assert!(unexpected.is_empty(), "only the baseline and the allowlist: {unexpected:?}");
}

#[tokio::test]
async fn pin_starts_a_stdio_server_with_the_same_environment_as_wrap() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), false, "");
    let seen = dir.path().join("env.txt");
    let server = node_module("@modelcontextprotocol/server-everything/dist/index.js");
    // The shell writes what it inherited, then becomes the server `pin` lists.
    let script = format!("env > '{}'; exec node '{}' stdio", seen.display(), server.display());
    let out = portcullis(&[("PC_TEST_UNRELATED", "passes-through")])
        .args(["pin", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(dir.path().join("pins.lock"))
        .args(["--name", "everything", "--", "sh", "-c", &script])
        .output()
        .await
        .unwrap();
    let seen = std::fs::read_to_string(&seen).unwrap_or_else(|e| {
        panic!("the server never started ({e}): {}", String::from_utf8_lossy(&out.stderr))
    });
    // This config has no HTTP upstreams, so their auth variables are no credential here.
    let named = CREDENTIALS.iter().filter(|(var, _)| !HTTP_UPSTREAMS.contains(var));
    for (var, value) in named {
        assert!(!seen.contains(value), "pin's server saw {var}: {seen}");
    }
    assert!(
        seen.contains("PC_TEST_BEARER=marker-bearer-5be1"),
        "a variable this config does not name passes"
    );
    assert!(seen.lines().any(|l| l == "PC_TEST_UNRELATED=passes-through"), "{seen}");
}

#[tokio::test]
async fn validate_refuses_an_env_allowlist_naming_a_guard_credential() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(
        dir.path(),
        true,
        "  everything: { env: [GITHUB_TOKEN, PC_TEST_CHECKER_KEY, PC_TEST_AGENT_TOKEN] }\n",
    );
    let out = portcullis(&[]).args(["validate", "--config"]).arg(&config).output().await.unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("upstreams.everything.env[1]: PC_TEST_CHECKER_KEY holds the guard's own credential (guardrails.checker.api_key_env)"),
        "{said}"
    );
    assert!(said.contains("upstreams.everything.env[2]: PC_TEST_AGENT_TOKEN"), "{said}");
    assert!(!said.contains("env[0]"), "GITHUB_TOKEN is the server's own: {said}");
}

/// The guard's credentials are in its own environment, so a child of the same user could read
/// them from `/proc/$PPID/environ`; portcullis makes itself non-dumpable, which closes that file
/// (and `mem`) to it. Run as root, the proxy is started as `nobody` (root reads anything).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_wrapped_server_cannot_read_the_guards_environment_through_proc() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = config(dir.path(), false, "");
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    // The binary where `nobody` can reach it (a checkout under /root is closed to it).
    let bin = dir.path().join("portcullis");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_portcullis"), &bin).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_portcullis"), &bin).unwrap();
    }
    let uid = std::process::Command::new("id").arg("-u").output().unwrap();
    let mut c = if String::from_utf8_lossy(&uid.stdout).trim() == "0" {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"]).arg(&bin);
        c
    } else {
        Command::new(&bin)
    };
    // What the server does: show whose child it is (status is world-readable), then try the
    // parent's environment and memory.
    let script = r#"grep '^Name:' /proc/$PPID/status >&2
tr '\0' '\n' < /proc/$PPID/environ >&2 || echo "environ refused" >&2
head -c 64 /proc/$PPID/mem >/dev/null 2>&1 || echo "mem refused" >&2"#;
    let out = c
        .env("PORTCULLIS_LOG", "warn")
        .envs(CREDENTIALS.iter().copied())
        .args(["wrap", "--config"])
        .arg(&config)
        .args(["--", "sh", "-c", script])
        .stdin(Stdio::null())
        .output()
        .await
        .expect("setpriv (util-linux) runs the proxy as nobody");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("Name:\tportcullis"), "the server's parent is the guard: {said}");
    for (var, value) in CREDENTIALS {
        assert!(!said.contains(value), "the server read {var} from /proc/$PPID/environ: {said}");
    }
    assert!(said.contains("environ refused") && said.contains("mem refused"), "{said}");
}
