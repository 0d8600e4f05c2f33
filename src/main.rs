//! The `portcullis` command line: parse arguments, load config, run.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use portcullis::config::Config;

#[derive(Parser)]
#[command(
    name = "portcullis",
    version,
    about = "A guardrail proxy for AI agents' tool calls"
)]
struct Cli {
    /// Log as JSON lines instead of text (logs always go to stderr).
    #[arg(long, global = true)]
    log_json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the proxy.
    Serve {
        /// Config file; without it, the embedded default (config/portcullis.yaml).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Guard a stdio MCP server: the agent launches this in place of the server.
    Wrap {
        #[arg(long)]
        config: Option<PathBuf>,
        /// The name the server's tools go by in rules: `mcp__{name}__{tool}`.
        #[arg(long, default_value = "stdio")]
        name: String,
        /// The server command and its arguments.
        #[arg(last = true, required = true)]
        cmd: Vec<String>,
    },
    /// Run the embedded default: a sample tool server, the proxy in front of it, and a scripted
    /// agent session through it; then keep serving for a real MCP client.
    Demo {
        /// Where the proxy listens (default: the embedded config's 127.0.0.1:8686; port 0 picks one).
        #[arg(long)]
        listen: Option<std::net::SocketAddr>,
        /// Exit after the scripted session instead of serving on.
        #[arg(long)]
        once: bool,
    },
    /// Parse and validate a config, print every problem, exit non-zero if there is one.
    Validate {
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

fn load(path: Option<&PathBuf>) -> anyhow::Result<Config> {
    match path {
        Some(p) => Config::load(p).map_err(|e| anyhow::anyhow!("{e}")),
        None => Ok(Config::embedded()),
    }
}

fn init_logging(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PORTCULLIS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { () = ctrl_c => {}, () = term => {} }
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.log_json);
    match run(cli.command).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("portcullis: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Validate { config } => {
            let c = load(config.as_ref())?;
            println!(
                "config ok: {} upstream(s), listen {}, admin {}",
                c.upstreams.len(),
                c.listen,
                c.admin.listen
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Wrap { config, name, cmd } => {
            let c = load(config.as_ref())?;
            let code =
                portcullis::stdio::wrap(&c, &name, &cmd, tokio::io::stdin(), tokio::io::stdout())
                    .await?;
            Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
        }
        Command::Demo { listen, once } => {
            portcullis::demo::run(listen, once, shutdown_signal()).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve { config } => {
            let c = load(config.as_ref())?;
            let running = portcullis::app::start(&c)
                .await
                .context("binding listeners")?;
            eprintln!(
                "portcullis listening on http://{} (admin http://{})",
                running.addr, running.admin_addr
            );
            for name in c.upstreams.keys() {
                eprintln!("  /mcp/{name}  ->  {}", c.upstreams[name].url);
            }
            running.run_until(shutdown_signal()).await;
            Ok(ExitCode::SUCCESS)
        }
    }
}
