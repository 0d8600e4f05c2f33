//! The arguments of `portcullis eval`, `connect` and `approvals`, and `connect`'s run (kept
//! apart so the command line's main file stays a readable size).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::ConfigArgs;

/// `portcullis eval`'s arguments.
#[derive(Args)]
pub(crate) struct EvalArgs {
    #[command(flatten)]
    pub(crate) config: ConfigArgs,
    /// The labelled rows: a `.tsv` shell corpus or JSONL (`{"text"|"tool"+"args", "label"}`).
    #[arg(long, required_unless_present = "traces", conflicts_with = "traces")]
    pub(crate) data: Option<PathBuf>,
    /// Recorded sessions (JSONL, one a line) to replay through the proxy: exfiltration recall
    /// and benign false positives per mechanism (see docs/checker.md, "Traces").
    #[arg(long)]
    pub(crate) traces: Option<PathBuf>,
    /// Judge as calls (pre) or results (post); default: text rows post, calls and commands pre.
    #[arg(long, value_parser = ["pre", "post"])]
    pub(crate) phase: Option<String>,
    /// A rubric directory in place of the config's.
    #[arg(long, conflicts_with = "compare")]
    pub(crate) rubrics: Option<PathBuf>,
    /// Run two rubric directories on the same rows and show what changed.
    #[arg(long, num_args = 2, value_names = ["DIR_A", "DIR_B"])]
    pub(crate) compare: Option<Vec<PathBuf>>,
    /// Print one JSON document.
    #[arg(long)]
    pub(crate) json: bool,
    /// How many wrong rows to show.
    #[arg(long, default_value_t = 5)]
    pub(crate) errors: usize,
    /// Rows in flight at once (default: the checker's max_concurrency).
    #[arg(long)]
    pub(crate) concurrency: Option<usize>,
    /// Judge only N rows, evenly spaced through the file (for a slow model; the same N rows
    /// every run, so two runs compare).
    #[arg(long)]
    pub(crate) sample: Option<usize>,
    /// The tool rows that name none go on (default: Bash for commands, read_text for results).
    #[arg(long)]
    pub(crate) tool: Option<String>,
    /// The upstream a bare tool name goes under: mcp__{upstream}__{tool}.
    #[arg(long, default_value = "corpus")]
    pub(crate) upstream: String,
    /// An OpenAI-compatible checker in place of the config's (with --checker-model).
    #[arg(long, requires = "checker_model")]
    pub(crate) checker_url: Option<String>,
    #[arg(long, requires = "checker_url")]
    pub(crate) checker_model: Option<String>,
    /// The overriding checker's context window in tokens.
    #[arg(long, requires = "checker_url")]
    pub(crate) context_tokens: Option<u32>,
}

/// `portcullis connect`'s arguments.
#[derive(Args)]
pub(crate) struct ConnectArgs {
    /// The client.
    #[arg(value_parser = ["claude-code", "claude-desktop", "cursor", "vscode", "codex", "windsurf"])]
    pub(crate) client: String,
    #[command(flatten)]
    pub(crate) config: ConfigArgs,
    /// Merge into the client's file (kept: every other key and server; twice is once).
    #[arg(long)]
    pub(crate) write: bool,
    /// The file to merge into, in place of the client's usual one.
    #[arg(long, requires = "write")]
    pub(crate) file: Option<PathBuf>,
    /// Only this upstream (repeatable); default: every upstream with a url.
    #[arg(long = "upstream")]
    pub(crate) upstreams: Vec<String>,
    /// The configured agent whose token the client sends (its token_env is referenced).
    #[arg(long)]
    pub(crate) agent: Option<String>,
    /// Write the token itself, read now from the agent's token_env, not a reference to it.
    #[arg(long, requires = "agent")]
    pub(crate) inline_token: bool,
    /// The proxy's base URL in place of http://{listen} (a name, TLS in front).
    #[arg(long)]
    pub(crate) url: Option<String>,
    /// Connect a stdio server through `portcullis wrap --name NAME -- CMD…`.
    #[arg(long, requires = "cmd")]
    pub(crate) name: Option<String>,
    /// The stdio server command and its arguments (with --name).
    #[arg(last = true, requires = "name")]
    pub(crate) cmd: Vec<String>,
}

pub(crate) fn connect(a: ConnectArgs) -> anyhow::Result<ExitCode> {
    let c = a.config.load()?;
    let run = portcullis::connect::cli::Run {
        client: a.client,
        config_path: a.config.config.clone(),
        write: a.write,
        file: a.file,
        upstreams: a.upstreams,
        agent: a.agent,
        inline_token: a.inline_token,
        url: a.url,
        name: a.name,
        cmd: a.cmd,
    };
    println!("{}", portcullis::connect::cli::run(run, &c)?);
    Ok(ExitCode::SUCCESS)
}

#[derive(Subcommand)]
pub(crate) enum ApprovalAction {
    /// The calls waiting for a decision.
    List,
    /// Allow a parked call: once, or with --always for the rest of its session, or with --rule
    /// always (an allow rule for exactly this call, written into the proxy's --permission-config).
    Allow {
        id: u64,
        #[arg(long)]
        always: bool,
        /// Allow always: show the rule and the rule file's diff, ask, then write it.
        #[arg(long, conflicts_with = "always")]
        rule: bool,
        /// With --rule: write without asking.
        #[arg(long, requires = "rule")]
        yes: bool,
    },
    /// Deny a parked call.
    Deny { id: u64 },
    /// Pending calls and sessions flagged by the repeated-denial breaker.
    Status,
    /// Clear a flagged session.
    Clear { session: String },
}

/// Shows `preview` and asks on the terminal whether to go on; anything but `y`/`yes` is no.
pub(crate) fn confirm(preview: &str) -> bool {
    use std::io::Write;
    println!("{preview}");
    eprint!("Write this rule and allow the call? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().read_line(&mut answer);
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}
