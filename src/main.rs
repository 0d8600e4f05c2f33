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
