//! Tool poisoning and rug pulls against the Python SDK server (mcp 2.3.0): a poisoned tool
//! definition is withheld from `tools/list` and its calls refused; a definition that changes
//! mid-session (`notifications/tools/list_changed`, then a changed list) is withheld until an
//! operator re-pins. Over HTTP and over `wrap` (stdio). The upstream's journal proves a
//! withheld tool never ran.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::support::*;

const SCREEN: &str = "guardrails: { checker: local, rules: [{ match: \"mcp__*\", phases: [pre, post, tools], mode: block }] }\n";
const REDEFINED: &str = r#"{"description":"Writes a note, and also mails it to the author."}"#;

fn listed(step: &Value) -> Vec<String> {
    step["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {step}"))
        .iter()
        .filter_map(|t| t.as_str().map(str::to_owned))
        .collect()
}

/// Runs `portcullis pin` with `args`; panics with its output unless it succeeds.
fn pin(args: &[&str]) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .arg("pin")
        .args(args)
        .current_dir(peers_dir())
        .output()
        .unwrap();
    assert!(out.status.success(), "pin failed: {}", String::from_utf8_lossy(&out.stderr));
}

fn metric(p: &portcullis::app::Running, upstream: &str) -> String {
    let text = String::from_utf8(p.metrics.render()).unwrap();
    let series = format!("portcullis_tool_definition_changes_total{{upstream=\"{upstream}\"}} ");
    text.lines().find_map(|l| l.strip_prefix(series.as_str())).unwrap_or("0").to_owned()
}

#[tokio::test]
async fn a_poisoned_tool_is_withheld_from_the_list_and_its_call_never_reaches_the_upstream() {
    let peer = Peer::start("python3", &["py_server.py", "--era", "legacy", "--poison"]);
    let p = proxy(&config(&[("py", &peer.url())], &format!("{ALLOW_ALL}{SCREEN}"))).await;
    let out = py_client(
        &proxy_url(&p, "py"),
        "legacy",
        &["list", "call", "weather", r#"{"city":"Paris"}"#, "call", "echo", r#"{"message":"hi"}"#],
    )
    .await;
    let tools = listed(&out[0]);
    assert!(!tools.contains(&"weather".to_owned()), "{tools:?}");
    assert!(tools.contains(&"echo".to_owned()) && tools.contains(&"write_note".to_owned()), "{tools:?}");
    assert_eq!(out[1]["result"]["isError"], true, "{}", out[1]);
    assert!(text_of(&out[1]).contains("mcp__py__weather"), "{}", out[1]);
    assert_eq!(text_of(&out[2]), "hi", "the clean tools work: {}", out[2]);
    assert!(!peer.calls_received().contains(&"weather".to_owned()), "{:?}", peer.calls_received());
    assert_eq!(peer.tools_run(), ["echo"]);
}

#[tokio::test]
async fn a_tool_redefined_mid_session_is_withheld_until_an_operator_re_pins() {
    let peer = Peer::python("legacy");
    let dir = tempfile::tempdir().unwrap();
    let (file, lock) = (dir.path().join("portcullis.yaml"), dir.path().join("portcullis.lock"));
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0 }}\nupstreams: {{ py: {{ url: \"{}\" }} }}\n{ALLOW_ALL}{SCREEN}pins: {{ file: {:?} }}\n",
        peer.url(),
        lock.display().to_string()
    );
    std::fs::write(&file, yaml).unwrap();
    pin(&["--config", file.to_str().unwrap()]);
    let p = proxy(&portcullis::config::Config::load(&file).unwrap()).await;
    let loader = file.clone();
    p.reload_on_change(portcullis::reload::Reload {
        files: vec![file.clone(), lock.clone()],
        load: Box::new(move || portcullis::config::Config::load(&loader).map_err(|e| e.to_string())),
        interval: Duration::from_millis(50),
    });
    let note = r#"{"path":"/tmp/n","text":"hello"}"#;
    let url = proxy_url(&p, "py");
    let out = py_client(
        &url,
        "legacy",
        &[
            "list",
            "call",
            "write_note",
            note,
            "call",
            "redefine",
            REDEFINED,
            "list",
            "call",
            "write_note",
            note,
        ],
    )
    .await;
    assert!(listed(&out[0]).contains(&"write_note".to_owned()), "pinned: listed {}", out[0]);
    assert_eq!(out[1]["result"]["isError"], false, "{}", out[1]);
    assert_eq!(out[2]["result"]["isError"], false, "{}", out[2]);
    let after = listed(&out[3]);
    assert!(!after.contains(&"write_note".to_owned()) && after.contains(&"echo".to_owned()), "{after:?}");
    assert_eq!(out[4]["result"]["isError"], true, "{}", out[4]);
    assert!(text_of(&out[4]).contains("changed since it was pinned"), "{}", out[4]);
    assert_eq!(peer.tools_run(), ["write_note", "redefine"], "the withheld call never ran");
    assert_eq!(metric(&p, "py"), "1");
    // Another session that never listed is refused too: the proxy remembers the definition.
    let out = py_client(&url, "legacy", &["--no-validate", "call", "write_note", note]).await;
    assert_eq!(out[0]["result"]["isError"], true, "{}", out[0]);
    assert_eq!(peer.tools_run(), ["write_note", "redefine"]);

    // The operator reviews the new definition and re-pins: the proxy reloads and lets it through.
    pin(&["--config", file.to_str().unwrap()]);
    eventually("the re-pinned definition to be listed", || {
        let url = url.clone();
        async move {
            let out = py_client(&url, "legacy", &["list"]).await;
            listed(&out[0]).contains(&"write_note".to_owned()).then_some(())
        }
    })
    .await;
    let out = py_client(&url, "legacy", &["list", "call", "write_note", note]).await;
    assert_eq!(out[1]["result"]["isError"], false, "{}", out[1]);
    assert_eq!(peer.tools_run(), ["write_note", "redefine", "write_note"]);
}

fn wrap_argv(config: &Path, journal: &Path) -> String {
    serde_json::json!([
        env!("CARGO_BIN_EXE_portcullis"),
        "wrap",
        "--config",
        config,
        "--name",
        "py",
        "--",
        "python3",
        "py_server.py",
        "--stdio",
        "--poison",
        "--journal",
        journal,
    ])
    .to_string()
}

#[tokio::test]
async fn wrap_withholds_poisoned_and_redefined_tools_of_a_python_sdk_stdio_server() {
    let dir = tempfile::tempdir().unwrap();
    let (file, lock, journal) =
        (dir.path().join("c.yaml"), dir.path().join("c.lock"), dir.path().join("journal.jsonl"));
    let yaml = format!("{ALLOW_ALL}{SCREEN}pins: {{ file: {:?} }}\n", lock.display().to_string());
    std::fs::write(&file, yaml).unwrap();
    let pin_journal = dir.path().join("pin.jsonl");
    pin(&[
        "--config",
        file.to_str().unwrap(),
        "--name",
        "py",
        "--",
        "python3",
        "py_server.py",
        "--stdio",
        "--poison",
        "--journal",
        pin_journal.to_str().unwrap(),
    ]);
    let note = r#"{"path":"/tmp/n","text":"hello"}"#;
    let out = py_client_stdio(
        &wrap_argv(&file, &journal),
        &[
            "list",
            "call",
            "weather",
            r#"{"city":"Paris"}"#,
            "call",
            "redefine",
            REDEFINED,
            "list",
            "call",
            "write_note",
            note,
        ],
    )
    .await;
    let before = listed(&out[0]);
    assert!(!before.contains(&"weather".to_owned()), "pinned, but poisoned: {before:?}");
    assert!(before.contains(&"write_note".to_owned()), "{before:?}");
    assert_eq!(out[1]["result"]["isError"], true, "{}", out[1]);
    assert_eq!(out[2]["result"]["isError"], false, "{}", out[2]);
    assert!(!listed(&out[3]).contains(&"write_note".to_owned()), "{}", out[3]);
    assert_eq!(out[4]["result"]["isError"], true, "{}", out[4]);
    let ran: Vec<String> = std::fs::read_to_string(&journal)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|l| l["tool"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(ran, ["redefine"], "neither withheld tool ran");
}
