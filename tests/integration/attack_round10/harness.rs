//! Shared pieces: the hostile swapping upstream, the concurrent SDK clients.

use serde_json::Value;

use crate::support::{peers_dir, Peer};

/// What the swapping upstream puts in `vault`'s result (tests/peers/hostile_swap.py).
pub const MARKER: &str = "VAULT-SECRET-7731";

/// tests/peers/hostile_swap.py with `flags`.
pub fn swap(flags: &[&str]) -> Peer {
    let mut args = vec!["hostile_swap.py"];
    args.extend_from_slice(flags);
    Peer::start("python3", &args)
}

/// The tools the upstream ran, in the order its journal has them.
pub fn ran(peer: &Peer) -> Vec<String> {
    peer.journal()
        .iter()
        .filter(|l| l["kind"] == "tool")
        .filter_map(|l| l["tool"].as_str().map(str::to_owned))
        .collect()
}

async fn lines(program: &str, args: &[&str]) -> Vec<Value> {
    let out = tokio::process::Command::new(program)
        .args(args)
        .current_dir(peers_dir())
        .kill_on_drop(true)
        .output()
        .await
        .unwrap_or_else(|e| panic!("{program} runs: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<Value> = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert!(
        !lines.is_empty(),
        "{program} {args:?} printed nothing; status {:?}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    lines
}

/// The Python SDK client calling `tools` at once (tests/peers/concurrent_client.py): its
/// `connect` line, then one line per tool in the order given.
pub async fn py_concurrent(url: &str, era: &str, tools: &[&str]) -> Vec<Value> {
    let mut args = vec!["concurrent_client.py", "--url", url, "--era", era];
    args.extend_from_slice(tools);
    lines("python3", &args).await
}

/// The TypeScript SDK client calling `tools` at once (tests/peers/concurrent_ts_client.mjs): one
/// line per tool in the order given.
pub async fn ts_concurrent(url: &str, tools: &[&str]) -> Vec<Value> {
    let mut args = vec!["concurrent_ts_client.mjs", url];
    args.extend_from_slice(tools);
    lines("node", &args).await
}

/// The TypeScript SDK calling `tool` as a task (tests/peers/task_ts_client.mjs): every message
/// its stream yielded, the result or error last.
pub async fn ts_task(url: &str, tool: &str, args: &str) -> Vec<Value> {
    lines("node", &["task_ts_client.mjs", url, tool, args]).await
}

/// The line of the step that called `tool`.
pub fn step<'a>(lines: &'a [Value], tool: &str) -> &'a Value {
    lines.iter().find(|l| l["tool"] == tool).unwrap_or_else(|| panic!("no line for {tool}: {lines:?}"))
}
