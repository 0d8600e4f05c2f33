//! `portcullis connect <client>`: what the command line asked, turned into the client's
//! configuration — printed, or merged into its file.

use std::path::PathBuf;

use anyhow::Context as _;

use super::{file, plan, render, Client, Options, Wrapped};
use crate::config::Config;

/// One `connect` invocation's arguments (see `portcullis connect --help`).
pub struct Run {
    pub client: String,
    /// The `--config` file, made absolute for a `wrap` entry.
    pub config_path: Option<PathBuf>,
    pub write: bool,
    pub file: Option<PathBuf>,
    pub upstreams: Vec<String>,
    pub agent: Option<String>,
    pub inline_token: bool,
    pub url: Option<String>,
    pub name: Option<String>,
    pub cmd: Vec<String>,
}

/// The configuration to print, or the line saying what was written where.
pub fn run(a: Run, c: &Config) -> anyhow::Result<String> {
    let client = Client::parse(&a.client).context("unknown client")?;
    let wrapped = match a.name {
        Some(name) => Some(Wrapped {
            name,
            cmd: a.cmd,
            exe: std::env::current_exe().context("the path of this portcullis")?.display().to_string(),
            config: match &a.config_path {
                Some(p) => Some(
                    std::fs::canonicalize(p)
                        .with_context(|| format!("{}", p.display()))?
                        .display()
                        .to_string(),
                ),
                None => None,
            },
        }),
        None => None,
    };
    let opts = Options {
        upstreams: a.upstreams,
        agent: a.agent,
        inline_token: a.inline_token,
        base_url: a.url,
        wrapped,
    };
    let servers = plan(c, &opts)?;
    if !a.write {
        return Ok(render(client, &servers).trim_end().to_owned());
    }
    let path = match a.file {
        Some(p) => p,
        None => file::default_path(client)?,
    };
    let holds = match opts.inline_token {
        true => file::Holds::Token,
        false => file::Holds::References,
    };
    let done = file::write(client, &path, &servers, holds)?;
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    Ok(format!("{}: {} ({})", path.display(), done.as_str(), names.join(", ")))
}
