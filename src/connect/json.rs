//! The five JSON clients' server entries, and their merge into an existing file.
//!
//! | client | list key | HTTP entry | token reference |
//! | --- | --- | --- | --- |
//! | Claude Code `.mcp.json` | `mcpServers` | `type: http`, `url`, `headers` | `${VAR}` |
//! | Claude Desktop | `mcpServers` | stdio only: `npx -y mcp-remote URL --header …` | `${VAR}`, expanded by mcp-remote |
//! | Cursor | `mcpServers` | `url`, `headers` | `${env:VAR}` |
//! | VS Code `.vscode/mcp.json` | `servers` | `type: http`, `url`, `headers` | `${input:ID}` + an `inputs` prompt |
//! | Windsurf | `mcpServers` | `serverUrl`, `headers` | `${env:VAR}` |
//!
//! The sources each row was checked against are cited in `docs/clients/`.

use serde_json::{json, Map, Value};

use super::{Client, Server, TokenMode, Transport};

/// Why an existing file is left as it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("it is not plain JSON ({0}); JSON with comments is not rewritten: add the entries by hand")]
    NotJson(String),
    #[error("its top level is not a JSON object")]
    NotObject,
    #[error("its {0:?} is not a JSON object")]
    ListNotObject(&'static str),
    #[error("its \"inputs\" is not a JSON array")]
    InputsNotArray,
}

/// The VS Code input the agent token is prompted for.
pub const VSCODE_INPUT: &str = "portcullis-token";

/// The key a client lists its servers under.
pub fn list_key(client: Client) -> &'static str {
    match client {
        Client::VsCode => "servers",
        _ => "mcpServers",
    }
}

/// The `Authorization` value in the client's spelling of an environment reference.
fn authorization(client: Client, token: &TokenMode) -> Option<String> {
    let secret = match token {
        TokenMode::Anonymous => return None,
        TokenMode::Inline { value, .. } => value.clone(),
        TokenMode::Env(var) => match client {
            Client::ClaudeCode | Client::ClaudeDesktop => format!("${{{var}}}"),
            Client::Cursor | Client::Windsurf => format!("${{env:{var}}}"),
            Client::VsCode => format!("${{input:{VSCODE_INPUT}}}"),
            Client::Codex => return None,
        },
    };
    Some(format!("Bearer {secret}"))
}

/// One server's entry in `client`'s format.
pub fn entry(client: Client, server: &Server) -> Value {
    match &server.transport {
        Transport::Stdio { command, args } => match client {
            Client::ClaudeCode | Client::VsCode => {
                json!({ "type": "stdio", "command": command, "args": args })
            }
            _ => json!({ "command": command, "args": args }),
        },
        Transport::Http { url, token } => {
            let auth = authorization(client, token);
            let headers = |mut v: Value| {
                if let Some(a) = &auth {
                    v["headers"] = json!({ "Authorization": a });
                }
                v
            };
            match client {
                Client::ClaudeCode | Client::VsCode => headers(json!({ "type": "http", "url": url })),
                Client::Cursor => headers(json!({ "url": url })),
                Client::Windsurf => headers(json!({ "serverUrl": url })),
                Client::ClaudeDesktop => desktop_bridge(url, token),
                Client::Codex => Value::Null,
            }
        }
    }
}

/// Claude Desktop starts local servers only: `mcp-remote` bridges stdio to the proxy's URL. It
/// expands `${VAR}` in its arguments from its own environment; an inline token goes in `env`.
fn desktop_bridge(url: &str, token: &TokenMode) -> Value {
    let mut args = vec!["-y".to_owned(), "mcp-remote".to_owned(), url.to_owned()];
    let mut env = Map::new();
    match token {
        TokenMode::Anonymous => {}
        TokenMode::Env(var) => args.extend(["--header".into(), format!("Authorization:Bearer ${{{var}}}")]),
        TokenMode::Inline { value, .. } => {
            args.extend(["--header".into(), "Authorization:${PORTCULLIS_AUTHORIZATION}".into()]);
            env.insert("PORTCULLIS_AUTHORIZATION".into(), Value::String(format!("Bearer {value}")));
        }
    }
    let mut v = json!({ "command": "npx", "args": args });
    if !env.is_empty() {
        v["env"] = Value::Object(env);
    }
    v
}

/// `existing` (empty for a new file) with `servers` set under the client's list key — every
/// other key and server kept — pretty-printed with a final newline. Setting an entry that is
/// already there changes nothing, so merging twice is merging once.
pub fn merge(client: Client, existing: &str, servers: &[Server]) -> Result<String, ShapeError> {
    let mut doc: Value = if existing.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        serde_json::from_str(existing).map_err(|e| ShapeError::NotJson(e.to_string()))?
    };
    let root = doc.as_object_mut().ok_or(ShapeError::NotObject)?;
    let key = list_key(client);
    let list = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
    let list = list.as_object_mut().ok_or(ShapeError::ListNotObject(key))?;
    for s in servers {
        list.insert(s.name.clone(), entry(client, s));
    }
    let wants_input = client == Client::VsCode
        && servers.iter().any(|s| matches!(&s.transport, Transport::Http { token: TokenMode::Env(_), .. }));
    if wants_input {
        let var = servers.iter().find_map(|s| match &s.transport {
            Transport::Http { token: TokenMode::Env(v), .. } => Some(v.clone()),
            _ => None,
        });
        let inputs = root.entry("inputs").or_insert_with(|| Value::Array(Vec::new()));
        let inputs = inputs.as_array_mut().ok_or(ShapeError::InputsNotArray)?;
        if !inputs.iter().any(|i| i.get("id").and_then(Value::as_str) == Some(VSCODE_INPUT)) {
            inputs.push(json!({
                "type": "promptString",
                "id": VSCODE_INPUT,
                "description": format!("portcullis agent token (the value of {})", var.unwrap_or_default()),
                "password": true,
            }));
        }
    }
    let mut text = serde_json::to_string_pretty(&doc).map_err(|e| ShapeError::NotJson(e.to_string()))?;
    text.push('\n');
    Ok(text)
}

/// The `claude mcp add` command for one server, single-quoted for a POSIX shell so that
/// `${VAR}` reaches `.mcp.json` as a reference, not as the secret the shell would expand.
pub fn claude_mcp_add(server: &Server) -> String {
    let mut words: Vec<String> =
        vec!["claude".into(), "mcp".into(), "add".into(), "--scope".into(), "project".into()];
    match &server.transport {
        Transport::Http { url, token } => {
            words.extend(["--transport".into(), "http".into(), server.name.clone(), url.clone()]);
            if let Some(a) = authorization(Client::ClaudeCode, token) {
                words.extend(["--header".into(), format!("Authorization: {a}")]);
            }
        }
        Transport::Stdio { command, args } => {
            words.extend([server.name.clone(), "--".into(), command.clone()]);
            words.extend(args.iter().cloned());
        }
    }
    words.iter().map(|w| shell_quote(w)).collect::<Vec<_>>().join(" ")
}

/// A word for a POSIX shell: bare when it holds only characters no shell treats specially.
fn shell_quote(w: &str) -> String {
    let plain = !w.is_empty()
        && w.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/' | b':' | b'=' | b',' | b'@')
        });
    if plain {
        w.to_owned()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}
