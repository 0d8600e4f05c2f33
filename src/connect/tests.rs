//! Unit tests of the client formats: goldens per client, merges that keep what is there, and
//! shapes that are refused.

use serde_json::{json, Value};

use super::*;

fn http(name: &str, token: TokenMode) -> Server {
    Server {
        name: format!("portcullis-{name}"),
        transport: Transport::Http { url: format!("http://127.0.0.1:8686/mcp/{name}"), token },
    }
}

fn env() -> TokenMode {
    TokenMode::Env("PORTCULLIS_TOKEN_DEV".into())
}

fn parsed(client: Client, existing: &str, servers: &[Server]) -> Value {
    serde_json::from_str(&json::merge(client, existing, servers).unwrap()).unwrap()
}

#[test]
fn each_json_client_gets_its_own_spelling_of_url_and_token() {
    let s = [http("fs", env())];
    for (client, want) in [
        (
            Client::ClaudeCode,
            json!({"mcpServers": {"portcullis-fs": {"type": "http", "url": "http://127.0.0.1:8686/mcp/fs",
                "headers": {"Authorization": "Bearer ${PORTCULLIS_TOKEN_DEV}"}}}}),
        ),
        (
            Client::Cursor,
            json!({"mcpServers": {"portcullis-fs": {"url": "http://127.0.0.1:8686/mcp/fs",
                "headers": {"Authorization": "Bearer ${env:PORTCULLIS_TOKEN_DEV}"}}}}),
        ),
        (
            Client::Windsurf,
            json!({"mcpServers": {"portcullis-fs": {"serverUrl": "http://127.0.0.1:8686/mcp/fs",
                "headers": {"Authorization": "Bearer ${env:PORTCULLIS_TOKEN_DEV}"}}}}),
        ),
        (
            Client::VsCode,
            json!({"servers": {"portcullis-fs": {"type": "http", "url": "http://127.0.0.1:8686/mcp/fs",
                "headers": {"Authorization": "Bearer ${input:portcullis-token}"}}},
                "inputs": [{"type": "promptString", "id": "portcullis-token",
                    "description": "portcullis agent token (the value of PORTCULLIS_TOKEN_DEV)", "password": true}]}),
        ),
        (
            Client::ClaudeDesktop,
            json!({"mcpServers": {"portcullis-fs": {"command": "npx", "args": ["-y", "mcp-remote",
                "http://127.0.0.1:8686/mcp/fs", "--header", "Authorization:Bearer ${PORTCULLIS_TOKEN_DEV}"]}}}),
        ),
    ] {
        assert_eq!(parsed(client, "", &s), want, "{}", client.as_str());
    }
}

#[test]
fn anonymous_servers_carry_no_authorization_header() {
    for client in
        [Client::ClaudeCode, Client::Cursor, Client::Windsurf, Client::VsCode, Client::ClaudeDesktop]
    {
        let text = json::merge(client, "", &[http("fs", TokenMode::Anonymous)]).unwrap();
        assert!(!text.contains("Authorization") && !text.contains("inputs"), "{}: {text}", client.as_str());
    }
}

#[test]
fn a_merge_keeps_every_other_key_and_server_and_twice_is_once() {
    let existing =
        r#"{"theme": "dark", "mcpServers": {"mine": {"command": "x"}, "portcullis-fs": {"url": "old"}}}"#;
    let once = json::merge(Client::Cursor, existing, &[http("fs", env()), http("web", env())]).unwrap();
    let twice = json::merge(Client::Cursor, &once, &[http("fs", env()), http("web", env())]).unwrap();
    assert_eq!(once, twice);
    let v: Value = serde_json::from_str(&once).unwrap();
    assert_eq!(v["theme"], "dark");
    assert_eq!(v["mcpServers"]["mine"], json!({"command": "x"}));
    assert_eq!(v["mcpServers"]["portcullis-fs"]["url"], "http://127.0.0.1:8686/mcp/fs");
    assert_eq!(v["mcpServers"]["portcullis-web"]["url"], "http://127.0.0.1:8686/mcp/web");
}

#[test]
fn a_vscode_input_of_the_same_id_is_kept_not_duplicated() {
    let existing = r#"{"inputs": [{"type": "promptString", "id": "portcullis-token", "description": "mine", "password": true}], "servers": {}}"#;
    let v = parsed(Client::VsCode, existing, &[http("fs", env())]);
    assert_eq!(v["inputs"].as_array().unwrap().len(), 1);
    assert_eq!(v["inputs"][0]["description"], "mine");
}

#[test]
fn files_of_the_wrong_shape_are_refused() {
    for (client, text) in [
        (Client::Cursor, "[1, 2]"),
        (Client::Cursor, "\"mcpServers\""),
        (Client::Cursor, r#"{"mcpServers": []}"#),
        (Client::Cursor, r#"{"mcpServers": "x"}"#),
        (Client::VsCode, r#"{"servers": 1}"#),
        (Client::VsCode, r#"{"servers": {}, "inputs": {}}"#),
        (Client::VsCode, "// a comment\n{\"servers\": {}}"),
        (Client::ClaudeCode, "{\"mcpServers\": {},}"),
        (Client::ClaudeCode, "{"),
    ] {
        assert!(json::merge(client, text, &[http("fs", env())]).is_err(), "{}: {text}", client.as_str());
    }
    for text in ["mcp_servers = 1\n", "mcp_servers = [1]\n", "[mcp_servers\n", "a = \n"] {
        assert!(codex::merge(text, &[http("fs", env())]).is_err(), "{text}");
    }
}

#[test]
fn codex_gets_a_table_per_server_with_the_token_variable_named() {
    let out = codex::merge("", &[http("fs", env())]).unwrap();
    assert_eq!(
        out,
        "[mcp_servers.portcullis-fs]\nurl = \"http://127.0.0.1:8686/mcp/fs\"\nbearer_token_env_var = \"PORTCULLIS_TOKEN_DEV\"\n"
    );
}

#[test]
fn a_codex_merge_keeps_comments_and_other_tables_and_twice_is_once() {
    let existing = "# my settings\nmodel = \"o3\"\n\n[mcp_servers.mine]\ncommand = \"x\" # keep me\n";
    let once = codex::merge(existing, &[http("fs", env())]).unwrap();
    assert!(once.starts_with(existing), "{once}");
    assert_eq!(codex::merge(&once, &[http("fs", env())]).unwrap(), once);
    let parsed: toml_edit::DocumentMut = once.parse().unwrap();
    assert_eq!(parsed["mcp_servers"]["portcullis-fs"]["url"].as_str(), Some("http://127.0.0.1:8686/mcp/fs"));
    assert_eq!(parsed["mcp_servers"]["mine"]["command"].as_str(), Some("x"));
    let changed = codex::merge(&once, &[http("fs", TokenMode::Anonymous)]).unwrap();
    assert!(!changed.contains("bearer_token_env_var"), "{changed}");
}

#[test]
fn stdio_servers_are_launched_through_wrap_in_every_format() {
    let s = Server {
        name: "portcullis-git".into(),
        transport: Transport::Stdio {
            command: "/usr/bin/portcullis".into(),
            args: vec![
                "wrap".into(),
                "--name".into(),
                "git".into(),
                "--".into(),
                "uvx".into(),
                "mcp-server-git".into(),
            ],
        },
    };
    let args = json!(["wrap", "--name", "git", "--", "uvx", "mcp-server-git"]);
    for client in
        [Client::ClaudeCode, Client::Cursor, Client::Windsurf, Client::VsCode, Client::ClaudeDesktop]
    {
        let v = parsed(client, "", std::slice::from_ref(&s));
        let e = &v[json::list_key(client)]["portcullis-git"];
        assert_eq!(
            (&e["command"], &e["args"]),
            (&json!("/usr/bin/portcullis"), &args),
            "{}",
            client.as_str()
        );
    }
    let toml = codex::merge("", &[s]).unwrap();
    assert!(toml.contains("command = \"/usr/bin/portcullis\"\nargs = [\"wrap\", \"--name\", \"git\", \"--\", \"uvx\", \"mcp-server-git\"]"), "{toml}");
}

#[test]
fn the_claude_command_keeps_the_variable_reference_away_from_the_shell() {
    let line = json::claude_mcp_add(&http("fs", env()));
    assert_eq!(
        line,
        "claude mcp add --scope project --transport http portcullis-fs http://127.0.0.1:8686/mcp/fs --header 'Authorization: Bearer ${PORTCULLIS_TOKEN_DEV}'"
    );
}

fn config(yaml: &str) -> Config {
    Config::parse(yaml, "t").unwrap()
}

#[test]
fn with_agents_configured_the_plan_needs_one_and_names_its_variable() {
    let c = config(
        "listen: 0.0.0.0:9000\nupstreams:\n  fs: { url: \"http://127.0.0.1:9/mcp\" }\nagents:\n  dev: { token_env: DEV_TOKEN }\n",
    );
    assert!(matches!(plan(&c, &Options::default()), Err(PlanError::AgentNeeded(_))));
    let opts = Options { agent: Some("dev".into()), ..Options::default() };
    let servers = plan(&c, &opts).unwrap();
    assert_eq!(
        servers,
        vec![Server {
            name: "portcullis-fs".into(),
            transport: Transport::Http {
                url: "http://127.0.0.1:9000/mcp/fs".into(),
                token: TokenMode::Env("DEV_TOKEN".into())
            },
        }]
    );
    let opts = Options { agent: Some("ops".into()), ..Options::default() };
    assert!(matches!(plan(&c, &opts), Err(PlanError::NoAgent(_))));
}

#[test]
fn an_unknown_upstream_is_refused_and_a_chosen_one_is_alone() {
    let c = config(
        "upstreams:\n  fs: { url: \"http://127.0.0.1:9/mcp\" }\n  web: { url: \"http://127.0.0.1:9/mcp\" }\n",
    );
    let opts = Options { upstreams: vec!["nope".into()], ..Options::default() };
    assert!(matches!(plan(&c, &opts), Err(PlanError::NoUpstream(..))));
    let opts = Options { upstreams: vec!["web".into()], ..Options::default() };
    let names: Vec<String> = plan(&c, &opts).unwrap().into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["portcullis-web"]);
}
