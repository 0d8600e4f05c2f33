//! Shipped `tools:` presets against the real servers in tests/peers, through `portcullis wrap`:
//! the preset names every tool the server lists (a server upgrade that adds a tool fails here),
//! and under the strict default a `preset: filesystem` read inside the jail is allowed while a
//! write outside it never reaches the disk.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::support::node_module;

/// `portcullis wrap --config CONFIG --name NAME -- CMD…`, driven line by line.
struct Wrapped {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl Wrapped {
    async fn start(config: &Path, name: &str, cmd: &[&str]) -> Wrapped {
        let mut child = Command::new(env!("CARGO_BIN_EXE_portcullis"))
            .args(["wrap", "--config"])
            .arg(config)
            .args(["--name", name, "--"])
            .args(cmd)
            .env("PORTCULLIS_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut w = Wrapped { _child: child, stdin, lines, next_id: 0 };
        let init = w
            .request(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "portcullis-test", "version": "1"}}),
            )
            .await;
        assert!(init["result"]["protocolVersion"].is_string(), "{init}");
        w.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        w
    }

    async fn send(&mut self, v: Value) {
        let line = format!("{v}\n");
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// Sends a request and returns its response (notifications and server requests skipped).
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        loop {
            let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
                .await
                .expect("a response within 30s")
                .unwrap()
                .expect("wrap's stdout is open");
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if v["id"] == id && v.get("method").is_none() {
                return v;
            }
        }
    }

    /// Every tool name the server lists through the proxy (following `nextCursor`).
    async fn tool_names(&mut self) -> Vec<String> {
        let mut names = Vec::new();
        let mut params = json!({});
        loop {
            let page = self.request("tools/list", params).await;
            let tools = page["result"]["tools"].as_array().unwrap_or_else(|| panic!("{page}"));
            names.extend(tools.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)));
            match page["result"]["nextCursor"].as_str() {
                Some(c) => params = json!({ "cursor": c }),
                None => return names,
            }
        }
    }
}

fn preset_tools(name: &str) -> Vec<String> {
    portcullis::config::presets::load(name).unwrap().tools.into_keys().collect()
}

#[tokio::test]
async fn each_preset_names_every_tool_its_real_server_lists() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().display().to_string();
    let fs = node_module("@modelcontextprotocol/server-filesystem/dist/index.js");
    let everything = node_module("@modelcontextprotocol/server-everything/dist/index.js");
    let github = node_module("@modelcontextprotocol/server-github/dist/index.js");
    let slack = node_module("@modelcontextprotocol/server-slack/dist/index.js");
    let playwright = node_module("@playwright/mcp/cli.js");
    // Slack's server will not start without its variables; neither server is called, so no
    // credential is real. Playwright lists its tools without starting a browser.
    std::env::set_var("SLACK_BOT_TOKEN", "xoxb-not-a-real-token");
    std::env::set_var("SLACK_TEAM_ID", "T00000000");
    let servers: [(&str, Vec<&str>, &str); 5] = [
        ("filesystem", vec!["node", fs.to_str().unwrap(), &root], ""),
        ("everything", vec!["node", everything.to_str().unwrap(), "stdio"], ""),
        ("github", vec!["node", github.to_str().unwrap()], ""),
        ("slack", vec!["node", slack.to_str().unwrap()], "SLACK_BOT_TOKEN, SLACK_TEAM_ID"),
        ("playwright", vec!["node", playwright.to_str().unwrap(), "--headless", "--isolated"], ""),
    ];
    for (preset, cmd, env) in servers {
        let config = dir.path().join(format!("{preset}.yaml"));
        // Everything allowed, so that tools/list hides nothing the server has.
        let yaml = format!(
            "permissions: {{ allow: [\"mcp__{preset}__*\"] }}\nupstreams:\n  {preset}: {{ env: [{env}], preset: {preset} }}\n"
        );
        std::fs::write(&config, yaml).unwrap();
        let mut w = Wrapped::start(&config, preset, &cmd).await;
        let listed = w.tool_names().await;
        assert!(listed.len() >= 2, "{preset}: {listed:?}");
        let named = preset_tools(preset);
        let missing: Vec<&String> = listed.iter().filter(|t| !named.contains(t)).collect();
        assert!(
            missing.is_empty(),
            "preset {preset} does not name {missing:?}: classify them in config/presets"
        );
    }
}

#[tokio::test]
async fn under_the_strict_default_a_filesystem_preset_read_in_the_jail_passes_and_a_write_outside_never_lands(
) {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (root, outside) = (base.join("root"), base.join("outside"));
    std::fs::create_dir(&root).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(root.join("notes.txt"), "meeting at noon\n").unwrap();
    let config = base.join("portcullis.yaml");
    let yaml = format!(
        "jail: {{ root: \"{}\" }}\nupstreams:\n  fs: {{ env: [], preset: filesystem }}\n",
        root.display()
    );
    std::fs::write(&config, yaml).unwrap();
    let fs = node_module("@modelcontextprotocol/server-filesystem/dist/index.js");
    // The server may write both directories: only portcullis stands in the way.
    let cmd = ["node", fs.to_str().unwrap(), root.to_str().unwrap(), outside.to_str().unwrap()];
    let mut w = Wrapped::start(&config, "fs", &cmd).await;

    let call = |name: &str, args: Value| json!({ "name": name, "arguments": args });
    let read =
        w.request("tools/call", call("read_text_file", json!({ "path": root.join("notes.txt") }))).await;
    assert_eq!(read["result"]["isError"], Value::Null, "{read}");
    assert!(read["result"].to_string().contains("meeting at noon"), "{read}");

    let target = outside.join("planted.txt");
    let write = w.request("tools/call", call("write_file", json!({ "path": target, "content": "x" }))).await;
    assert_eq!(write["result"]["isError"], true, "{write}");
    assert!(!target.exists(), "the refused write never reached the disk");

    // Without the preset the same read is a generic call the strict default does not allow.
    let bare = base.join("bare.yaml");
    std::fs::write(&bare, format!("jail: {{ root: \"{}\" }}\n", root.display())).unwrap();
    let mut w = Wrapped::start(&bare, "fs", &cmd).await;
    let read =
        w.request("tools/call", call("read_text_file", json!({ "path": root.join("notes.txt") }))).await;
    assert!(!read["result"].to_string().contains("meeting at noon"), "{read}");
}
