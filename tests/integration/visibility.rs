//! Per-principal tool visibility against the Python SDK server (mcp 2.3.0) and client: each agent
//! is listed only the tools it may call, over HTTP in both eras, over `wrap` (stdio), through
//! pages, for a delegated child, and across a reload. A withheld tool's call is still refused with
//! its reason, and the upstream's journal proves it never arrived.

use serde_json::{json, Value};

use crate::support::*;

const READER: (&str, &str) = ("PORTCULLIS_TEST_VIS_READER", "reader-token-0a1b2c3d4e5f6a7b8c");
const WRITER: (&str, &str) = ("PORTCULLIS_TEST_VIS_WRITER", "writer-token-9c8b7a6f5e4d3c2b1a");

/// `echo` is a file read (its message is the path): readonly may call it with a path proven
/// read-only, so it stays listed for the reader. Every other Python peer tool is generic.
/// The writer may not call `leak` or `confirm_*`; `slow` is asked, so it stays listed.
fn policy() -> String {
    for (var, value) in [READER, WRITER] {
        std::env::set_var(var, value);
    }
    format!(
        "tools:\n  - {{ match: mcp__py__echo, kind: file, path: /message, access: read }}\n\
         permissions: {{ allow: [\"mcp__*\"], ask: [mcp__py__slow] }}\n\
         agents:\n  \
           reader: {{ token_env: {}, profile: readonly }}\n  \
           writer: {{ token_env: {}, permissions: {{ deny: [mcp__py__leak, \"mcp__py__confirm_*\"] }} }}\n",
        READER.0, WRITER.0
    )
}

const READER_SEES: &[&str] = &["echo"];
const WRITER_SEES: &[&str] = &["echo", "add", "slow", "write_note", "web_post", "redefine"];

fn listed(step: &Value) -> Vec<String> {
    let names = step["tools"].as_array().unwrap_or_else(|| panic!("not a list: {step}"));
    names.iter().filter_map(|t| t.as_str().map(str::to_owned)).collect()
}

async fn as_agent(url: &str, era: &str, token: &str, steps: &[&str]) -> Vec<Value> {
    py_client_with(url, era, &["--header", &format!("Authorization: Bearer {token}")], steps).await
}

const NOTE: &str = r#"{"path":"/tmp/n","text":"hello"}"#;
const ECHO: &str = r#"{"message":"/tmp/notes.txt"}"#;

#[tokio::test]
async fn each_agent_is_listed_only_what_it_may_call_and_a_withheld_call_never_reaches_the_upstream() {
    for era in ["legacy", "modern"] {
        let peer = Peer::python(era);
        let p = proxy(&config(&[("py", &peer.url())], &policy())).await;
        let url = proxy_url(&p, "py");

        let reader =
            as_agent(&url, era, READER.1, &["list", "call", "write_note", NOTE, "call", "echo", ECHO]).await;
        assert_eq!(listed(&reader[0]), READER_SEES, "{era}");
        assert_eq!(reader[1]["result"]["isError"], true, "{era}: {}", reader[1]);
        let why = text_of(&reader[1]);
        assert!(why.contains("mcp__py__write_note") && why.contains("readonly"), "{era}: {why}");
        assert_eq!(text_of(&reader[2]), "/tmp/notes.txt", "{era}: what it is shown works: {}", reader[2]);

        let writer =
            as_agent(&url, era, WRITER.1, &["list", "call", "leak", "{}", "call", "add", r#"{"a":1,"b":2}"#])
                .await;
        assert_eq!(listed(&writer[0]), WRITER_SEES, "{era}: an ask stays listed");
        assert_eq!(writer[1]["result"]["isError"], true, "{era}: {}", writer[1]);
        assert!(text_of(&writer[1]).contains("mcp__py__leak"), "{era}: {}", writer[1]);
        assert_ne!(writer[2]["result"]["isError"], true, "{era}: {}", writer[2]);

        let received = peer.calls_received();
        assert!(!received.iter().any(|t| t == "write_note" || t == "leak"), "{era}: {received:?}");
        assert_eq!(peer.tools_run(), ["echo", "add"], "{era}");
        p.shutdown().await;
    }
}

#[tokio::test]
async fn a_paged_list_stays_paged_and_each_page_shows_only_what_may_be_called() {
    let peer = Peer::start("python3", &["py_server.py", "--era", "legacy", "--page-size", "3"]);
    let p = proxy(&config(&[("py", &peer.url())], &policy())).await;
    let url = proxy_url(&p, "py");
    let out = as_agent(&url, "legacy", WRITER.1, &["pages"]).await;
    // Upstream pages: [echo add leak] [slow write_note confirm_delete] [redefine].
    assert_eq!(
        out[0]["pages"],
        json!([["echo", "add"], ["slow", "write_note", "web_post"], ["redefine"]]),
        "{}",
        out[0]
    );
    assert_eq!(out[0]["cursors"], json!(["3", "6", null]));
    let out = as_agent(&url, "legacy", READER.1, &["pages"]).await;
    assert_eq!(out[0]["pages"], json!([["echo"], [], []]), "an emptied page still leads on: {}", out[0]);
    p.shutdown().await;
}

/// `POST /delegations` as `token`; the child's token.
async fn delegate(addr: std::net::SocketAddr, token: &str, body: Value) -> String {
    let auth = format!("Bearer {token}");
    let (status, _, text) =
        post(&format!("http://{addr}/delegations"), &[("authorization", &auth)], &body.to_string()).await;
    assert_eq!(status, 201, "{text}");
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["token"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_delegated_child_whose_scope_narrows_is_listed_fewer_tools() {
    let peer = Peer::python("legacy");
    let p = proxy(&config(&[("py", &peer.url())], &policy())).await;
    let url = proxy_url(&p, "py");
    let child =
        delegate(p.addr, WRITER.1, json!({"name": "kid", "deny": ["mcp__py__add"], "ttl": "10m"})).await;
    let out = as_agent(&url, "legacy", &child, &["list", "call", "add", r#"{"a":1,"b":2}"#]).await;
    assert_eq!(
        listed(&out[0]),
        ["echo", "slow", "write_note", "web_post", "redefine"],
        "the parent's and its own"
    );
    assert_eq!(out[1]["result"]["isError"], true, "{}", out[1]);
    assert!(text_of(&out[1]).contains("as writer>kid, delegated by writer"), "{}", out[1]);
    // A readonly child of the writer: what its profile can never allow goes too.
    let child = delegate(p.addr, WRITER.1, json!({"name": "ro", "profile": "readonly", "ttl": "10m"})).await;
    let out = as_agent(&url, "legacy", &child, &["list"]).await;
    assert_eq!(listed(&out[0]), ["echo"]);
    let parent = as_agent(&url, "legacy", WRITER.1, &["list"]).await;
    assert_eq!(listed(&parent[0]), WRITER_SEES, "the parent's list is its own");
    assert!(peer.calls_received().is_empty(), "{:?}", peer.calls_received());
    p.shutdown().await;
}

#[tokio::test]
async fn a_reload_changes_what_is_listed() {
    let peer = Peer::python("legacy");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("portcullis.yaml");
    let yaml = |deny: &str| {
        format!(
            "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0 }}\nupstreams: {{ py: {{ url: \"{}\" }} }}\n\
             permissions: {{ allow: [\"mcp__*\"], deny: [{deny}] }}\n",
            peer.url()
        )
    };
    std::fs::write(&file, yaml("mcp__py__leak")).unwrap();
    let p = crate::support::proxy_reloading(&file).await;
    let url = proxy_url(&p, "py");
    let out = py_client(&url, "legacy", &["list"]).await;
    assert!(!listed(&out[0]).contains(&"leak".to_owned()), "{}", out[0]);

    std::fs::write(&file, yaml("mcp__py__echo, mcp__py__add")).unwrap();
    let after = eventually("the reloaded policy's list", || {
        let url = url.clone();
        async move {
            let tools = listed(&py_client(&url, "legacy", &["list"]).await[0]);
            tools.contains(&"leak".to_owned()).then_some(tools)
        }
    })
    .await;
    assert!(!after.contains(&"echo".to_owned()) && !after.contains(&"add".to_owned()), "{after:?}");
    p.shutdown().await;
}

#[tokio::test]
async fn wrap_lists_a_stdio_server_as_the_agent_it_decides_as() {
    let dir = tempfile::tempdir().unwrap();
    let (file, journal) = (dir.path().join("c.yaml"), dir.path().join("journal.jsonl"));
    std::fs::write(&file, policy()).unwrap();
    let argv = json!([
        env!("CARGO_BIN_EXE_portcullis"),
        "wrap",
        "--config",
        file,
        "--name",
        "py",
        "--agent",
        "reader",
        "--",
        "python3",
        "py_server.py",
        "--stdio",
        "--page-size",
        "4",
        "--journal",
        journal,
    ])
    .to_string();
    let out =
        py_client_stdio(&argv, &["pages", "call", "add", r#"{"a":1,"b":2}"#, "call", "echo", ECHO]).await;
    assert_eq!(out[0]["pages"], json!([["echo"], []]), "{}", out[0]);
    assert_eq!(out[0]["cursors"], json!(["4", null]));
    assert_eq!(out[1]["result"]["isError"], true, "{}", out[1]);
    assert!(text_of(&out[1]).contains("mcp__py__add"), "{}", out[1]);
    let ran: Vec<String> = std::fs::read_to_string(&journal)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|l| l["tool"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(ran, ["echo"], "the withheld tool never ran");
}

#[tokio::test]
async fn an_operators_description_is_what_the_agents_it_names_read() {
    let peer = Peer::python("legacy");
    let words = "Writes a note. Notes are kept for 30 days.";
    let yaml = format!(
        "{}tool_descriptions:\n  - {{ tool: mcp__py__write_note, agents: [writer], description: \"{words}\" }}\n",
        policy()
    );
    let p = proxy(&config(&[("py", &peer.url())], &yaml)).await;
    let out = as_agent(&proxy_url(&p, "py"), "legacy", WRITER.1, &["list", "call", "write_note", NOTE]).await;
    let description = |name: &str| {
        let tools = out[0]["result"]["tools"].as_array().unwrap();
        let tool = tools.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("{name} listed"));
        tool["description"].as_str().unwrap().to_owned()
    };
    assert_eq!(description("write_note"), words);
    assert_eq!(description("echo"), "Echo the message back as text.", "the rest as the upstream wrote them");
    assert_eq!(listed(&out[0]), WRITER_SEES, "what is withheld stays withheld");
    assert_eq!(out[1]["result"]["isError"], false, "the tool is the same tool: {}", out[1]);
    assert_eq!(peer.tools_run(), ["write_note"]);
    p.shutdown().await;
}
