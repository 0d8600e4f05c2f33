//! What every round-8 attack starts from: the Python SDK server behind a proxy whose admin API
//! has a token and whose asks park for the API, optionally with a rule file it reloads, and an
//! operator's client for that API.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::{eventually, get, post, proxy, LEGACY};

/// One tools/call on `session`, run in the background (it may park).
pub fn call(url: &str, session: &str, tool: &str, args: Value) -> tokio::task::JoinHandle<Value> {
    let (url, session) = (url.to_owned(), session.to_owned());
    let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":tool,"arguments":args}});
    tokio::spawn(async move {
        let h = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", LEGACY)];
        let (_, _, text) = post(&url, &h, body.to_string()).await;
        crate::support::rpc_body(&text)
    })
}

/// The operator's side of the admin API.
pub struct Admin {
    pub base: String,
    pub auth: String,
}

impl Admin {
    pub fn of(p: &portcullis::app::Running, token: &str) -> Admin {
        Admin { base: format!("http://{}", p.admin_addr), auth: format!("Bearer {token}") }
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        let (status, _, body) = get(&format!("{}{path}", self.base), &[("authorization", &self.auth)]).await;
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let (status, _, text) =
            post(&format!("{}{path}", self.base), &[("authorization", &self.auth)], body.to_string()).await;
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// The one parked call's id, once there is exactly one.
    pub async fn parked_one(&self) -> u64 {
        eventually("one parked call", || async {
            let (_, v) = self.get("/approvals").await;
            let pending = v["pending"].as_array().cloned().unwrap_or_default();
            (pending.len() == 1).then(|| pending[0]["id"].as_u64().unwrap())
        })
        .await
    }
}

/// The main config: the Python server as `py`, `echo` a shell tool, asks parked for the API.
pub fn write_config(dir: &Path, token_env: &str, upstream: &str, extra: &str) -> PathBuf {
    let path = dir.join("portcullis.yaml");
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\nupstreams:\n  py: {{ url: \"{upstream}\" }}\n\
         tools: [ {{ match: mcp__py__echo, kind: shell, command: /message }} ]\n\
         approvals: {{ channel: api, timeout: 60s }}\n{extra}"
    );
    std::fs::write(&path, yaml).unwrap();
    path
}

/// A proxy on `config` with the rule file `rules` (as `serve --permission-config rules`),
/// reloading both as `serve` does.
pub async fn serve(config: &Path, rules: Option<&Path>) -> portcullis::app::Running {
    let extra: Vec<PathBuf> = rules.iter().map(|r| r.to_path_buf()).collect();
    let c = portcullis::config::layered::load(Some(&config.to_path_buf()), &extra, None).unwrap();
    let p = proxy(&c).await;
    if let Some(r) = rules {
        p.shared.approvals.set_rule_file(r.to_path_buf());
    }
    let (cfg, files) = (config.to_path_buf(), extra.clone());
    p.reload_on_change(portcullis::reload::Reload {
        files: std::iter::once(config.to_path_buf()).chain(extra).collect(),
        load: Box::new(move || portcullis::config::layered::load(Some(&cfg), &files, None)),
        interval: std::time::Duration::from_millis(50),
    });
    p
}
