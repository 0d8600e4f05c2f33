//! Codex CLI's `config.toml`: one `[mcp_servers.NAME]` table per server, merged into the
//! existing file with its comments, order and formatting kept (`toml_edit`).
//!
//! Fields, as Codex's own parser reads them (`codex-rs/config/src/mcp_types.rs`,
//! `RawMcpServerConfig`): a Streamable HTTP server has `url` and takes its token from the
//! variable `bearer_token_env_var` names (Codex refuses an inline `bearer_token`); a literal
//! header goes in `http_headers`. A stdio server has `command` and `args`.

use toml_edit::{value, Array, DocumentMut, Item, Table};

use super::{Server, TokenMode, Transport};

/// Why an existing file is left as it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("it is not TOML ({0})")]
    NotToml(String),
    #[error("its mcp_servers is not a table")]
    ListNotTable,
}

/// One server's table.
pub fn table(server: &Server) -> Table {
    let mut t = Table::new();
    match &server.transport {
        Transport::Http { url, token } => {
            t["url"] = value(url.as_str());
            match token {
                TokenMode::Anonymous => {}
                TokenMode::Env(var) => t["bearer_token_env_var"] = value(var.as_str()),
                TokenMode::Inline { value: secret, .. } => {
                    let mut h = toml_edit::InlineTable::new();
                    h.insert("Authorization", format!("Bearer {secret}").into());
                    t["http_headers"] = value(h);
                }
            }
        }
        Transport::Stdio { command, args } => {
            t["command"] = value(command.as_str());
            t["args"] = value(args.iter().map(String::as_str).collect::<Array>());
        }
    }
    t
}

/// `existing` (empty for a new file) with each server's table set under `mcp_servers`; every
/// other key, table and comment kept. Setting a table that is already there changes nothing.
pub fn merge(existing: &str, servers: &[Server]) -> Result<String, ShapeError> {
    let mut doc: DocumentMut =
        existing.parse().map_err(|e: toml_edit::TomlError| ShapeError::NotToml(e.to_string()))?;
    let list = doc.entry("mcp_servers").or_insert_with(|| {
        let mut t = Table::new();
        // `[mcp_servers.NAME]` headers only, no empty `[mcp_servers]` above them.
        t.set_implicit(true);
        Item::Table(t)
    });
    let list = list.as_table_mut().ok_or(ShapeError::ListNotTable)?;
    for s in servers {
        let fresh = table(s);
        let same = list.get(&s.name).and_then(Item::as_table).is_some_and(|old| same_values(old, &fresh));
        if !same {
            list.insert(&s.name, Item::Table(fresh));
        }
    }
    Ok(doc.to_string())
}

/// Whether two tables hold the same keys and values (formatting aside).
fn same_values(a: &Table, b: &Table) -> bool {
    let render = |t: &Table| {
        let mut t = t.clone();
        t.fmt();
        t.iter().map(|(k, v)| format!("{k}={}", v.to_string().trim())).collect::<Vec<_>>()
    };
    render(a) == render(b)
}
