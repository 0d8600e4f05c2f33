//! The demo's scripted agent: a minimal MCP client speaking Streamable HTTP to the proxy, and
//! the session it replays — benign calls and hostile ones — printing what happened to each.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{json, Value};

use super::sample_server::{SampleServer, DEMO_SECRET};
use crate::gate::guard::REDACTED;

type HttpClient = Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>;

struct Agent {
    client: HttpClient,
    url: String,
    session: Option<String>,
    next_id: u64,
}

impl Agent {
    async fn rpc(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.next_id += 1;
        let body = json!({"jsonrpc":"2.0","id":self.next_id,"method":method,"params":params});
        let mut req = http::Request::post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18");
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        let resp = self
            .client
            .request(req.body(Full::new(Bytes::from(body.to_string())))?)
            .await?;
        if let Some(s) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            self.session = Some(s.to_owned());
        }
        let bytes = resp.into_body().collect().await?.to_bytes();
        Ok(serde_json::from_slice(&bytes)?)
    }

    async fn notify(&mut self, method: &str) -> anyhow::Result<()> {
        let body = json!({"jsonrpc":"2.0","method":method});
        let mut req = http::Request::post(&self.url).header("content-type", "application/json");
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        self.client
            .request(req.body(Full::new(Bytes::from(body.to_string())))?)
            .await?;
        Ok(())
    }
}

fn first_text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

fn one_line(s: &str, max: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max).collect();
    format!("{cut}…")
}

/// Replays the session against `proxy_url`, printing each step. Returns the number of steps whose
/// outcome differed from what the embedded policy promises (0 means the demo told the truth).
pub async fn replay(proxy_url: &str, sample: &SampleServer) -> anyhow::Result<usize> {
    let mut agent = Agent {
        client: Client::builder(TokioExecutor::new()).build_http(),
        url: proxy_url.to_owned(),
        session: None,
        next_id: 0,
    };
    let mut surprises = 0;
    let mut check = |ok: bool| {
        if !ok {
            surprises += 1;
        }
        if ok {
            ""
        } else {
            "   <-- unexpected"
        }
    };

    let init = agent
        .rpc("initialize", json!({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"portcullis-demo-agent","version":"1"}}))
        .await?;
    agent.notify("notifications/initialized").await?;
    println!(
        " 1. initialize                        -> protocol {}, session {}",
        init["result"]["protocolVersion"].as_str().unwrap_or("?"),
        agent.session.as_deref().unwrap_or("-")
    );
    let list = agent.rpc("tools/list", json!({})).await?;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    println!(
        " 2. tools/list                        -> {} tools: {}",
        names.len(),
        names.join(", ")
    );

    let steps: [(&str, Value, &str); 5] = [
        (
            "read_file",
            json!({"path":"notes.txt"}),
            "benign: read a note",
        ),
        ("list_directory", json!({}), "benign: look around"),
        (
            "run_command",
            json!({"command":"wc -l notes.txt todo.md"}),
            "benign: count lines",
        ),
        (
            "delete_file",
            json!({"path":"notes.txt"}),
            "hostile: destroy the user's notes",
        ),
        (
            "fetch_page",
            json!({"url":"https://example.com/release-notes"}),
            "hostile page: leaked key + prompt injection",
        ),
    ];
    for (i, (tool, args, why)) in steps.into_iter().enumerate() {
        let before = sample.calls(tool);
        let resp = agent
            .rpc("tools/call", json!({"name":tool,"arguments":args}))
            .await?;
        let reached = sample.calls(tool) > before;
        let result = &resp["result"];
        let body = first_text(result);
        let n = i + 3;
        println!("{n:>2}. {tool} {args}  ({why})");
        match tool {
            "delete_file" => {
                let still = sample.scratch.join("notes.txt").exists();
                let ok = !reached && still && result["isError"] == true;
                println!("    DENIED before the server: {}", one_line(&body, 110));
                println!(
                    "    server ran delete_file: {}; notes.txt still exists: {}{}",
                    if reached { "yes" } else { "no" },
                    if still { "yes" } else { "no" },
                    check(ok)
                );
            }
            "fetch_page" => {
                let ok = reached && !body.contains(DEMO_SECRET) && body.contains(REDACTED);
                println!(
                    "    FORWARDED, result REWRITTEN: the leaked key became {REDACTED}{}",
                    check(ok)
                );
                println!("    the page's prompt injection still reaches the agent: the checker model (Layer 2) is what catches it");
            }
            _ => {
                let ok = reached && result["isError"] != true;
                println!("    FORWARDED: {}{}", one_line(&body, 100), check(ok));
            }
        }
    }
    Ok(surprises)
}
