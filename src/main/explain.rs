//! `portcullis explain ID`: why a decision came out as it did, from a running proxy's admin
//! listener or from audit files (`--audit`), as words or (`--json`) as the audit lines.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use portcullis::explain::{fetch, render};

#[derive(clap::Args)]
pub struct ExplainArgs {
    /// The decision id a refusal cites ("decision 7K3M2Q9XW4AB").
    id: String,
    /// The proxy's admin listener.
    #[arg(long, default_value = "http://127.0.0.1:8687")]
    admin: String,
    /// The environment variable holding the admin token (as `admin.token_env` names it).
    #[arg(long, default_value = portcullis::config::child_env::ADMIN_TOKEN_VAR)]
    token_env: String,
    /// Read these audit files instead of asking the proxy (repeat for rotated files).
    #[arg(long)]
    audit: Vec<PathBuf>,
    /// Print the decision's audit lines as JSON.
    #[arg(long)]
    json: bool,
}

pub async fn run(a: ExplainArgs) -> anyhow::Result<ExitCode> {
    let id = fetch::id(&a.id)?;
    let lines = match a.audit.is_empty() {
        false => fetch::from_files(&a.audit, id)?,
        true => {
            let token = std::env::var(&a.token_env).with_context(|| {
                format!("the admin token: set {} (or pass --token-env, or read --audit FILE)", a.token_env)
            })?;
            fetch::from_admin(&a.admin, &token, id).await?
        }
    };
    match a.json {
        true => {
            let json = serde_json::to_string_pretty(&serde_json::json!({"id": id, "lines": lines}))?;
            println!("{}", portcullis::inert::inert_json(&json));
        }
        false => print!("{}", render::render(&id.to_string(), &lines)),
    }
    Ok(ExitCode::SUCCESS)
}
