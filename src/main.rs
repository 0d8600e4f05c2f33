//! The `portcullis` command line: parse arguments, load config, run.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
use portcullis::config::Config;

#[path = "main/commands.rs"]
mod commands;
#[path = "main/explain.rs"]
mod explain;
use commands::{connect, ApprovalAction, ConnectArgs, EvalArgs};

#[derive(Parser)]
#[command(name = "portcullis", version, about = "A guardrail proxy for AI agents' tool calls")]
struct Cli {
    /// Log as JSON lines instead of text (logs always go to stderr).
    #[arg(long, global = true)]
    log_json: bool,
    #[command(subcommand)]
    command: Command,
}

/// Where the configuration comes from.
#[derive(Args)]
struct ConfigArgs {
    /// Config file; without it, the embedded default (config/portcullis.yaml).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Extra permission files (`permissions:` only; scope `cli`, above the config's own rules).
    #[arg(long = "permission-config")]
    permission_config: Vec<PathBuf>,
    /// Also read Claude Code's permission rules (`.claude/settings.json` here and in the home
    /// directory), lossy and never wider than Claude Code (docs/claude-code.md).
    #[arg(long)]
    import_claude_permissions: bool,
}

impl ConfigArgs {
    fn load(&self) -> anyhow::Result<Config> {
        load_layered(self.config.as_ref(), &self.permission_config, self.claude_project().as_deref())
    }

    /// As [`Self::load`], with the user and project tiers of `workspace` (`--workspace`).
    fn load_in(&self, workspace: Option<&Path>) -> anyhow::Result<Config> {
        let claude = self.claude_project();
        let sources = portcullis::config::layered::Sources {
            extra: &self.permission_config,
            claude: claude.as_deref(),
            workspace,
        };
        portcullis::config::layered::load_from(self.config.as_ref(), sources).map_err(|e| anyhow::anyhow!(e))
    }

    /// The project whose Claude Code settings are imported: the working directory.
    fn claude_project(&self) -> Option<PathBuf> {
        self.import_claude_permissions.then(|| std::env::current_dir().unwrap_or_else(|_| ".".into()))
    }

    /// Reload the policy when any of its files changes (the embedded default never does).
    fn reload(&self) -> portcullis::reload::Reload {
        let mut files: Vec<PathBuf> = self.config.iter().chain(&self.permission_config).cloned().collect();
        files.extend(std::env::var_os("PORTCULLIS_MANAGED_CONFIG").map(PathBuf::from));
        let claude = self.claude_project();
        if let Some(project) = &claude {
            files.extend(portcullis::config::claude_import::settings_files(project, home().as_deref()));
        }
        let (config, extra) = (self.config.clone(), self.permission_config.clone());
        portcullis::reload::Reload {
            files,
            load: Box::new(move || {
                load_layered(config.as_ref(), &extra, claude.as_deref()).map_err(|e| format!("{e:#}"))
            }),
            interval: std::time::Duration::from_secs(1),
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run the proxy.
    Serve {
        #[command(flatten)]
        config: ConfigArgs,
        /// Where no human can be asked, let the checker's model review the built-in floor's asks
        /// (never an operator's `ask` rule): its allow lets that one call through, anything else
        /// refuses it. Needs `guardrails.checker`. A flag, not a config key: whoever starts the
        /// proxy decides that a model may stand in for a human.
        #[arg(long)]
        ask_reviewer: bool,
    },
    /// Guard a stdio MCP server: the agent launches this in place of the server.
    Wrap {
        #[command(flatten)]
        config: ConfigArgs,
        /// The name the server's tools go by in rules: `mcp__{name}__{tool}`, and the
        /// `upstreams` entry whose `env:` (the variables it gets) and `profile:` apply to it.
        #[arg(long, default_value = "stdio")]
        name: String,
        /// Decide as this configured agent (its profile, posture and permissions on the
        /// config's). Whoever launches `wrap` chooses; it selects a policy, it proves nothing.
        #[arg(long)]
        agent: Option<String>,
        /// Lay this workspace's tiers under the config: its `.portcullis/settings.yaml` and
        /// `settings.local.yaml`, and the user's file (docs/config.md "Scope tiers").
        #[arg(long)]
        workspace: Option<PathBuf>,
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
        /// Show the proxy's log lines (quiet by default: the story is on stdout).
        #[arg(short, long)]
        verbose: bool,
    },
    /// Decide JSONL tool calls offline (`{"tool": "...", "args": {...}}` per line on stdin), one
    /// JSONL decision per line on stdout: the same engine the proxy runs.
    Check {
        #[command(flatten)]
        config: ConfigArgs,
        /// `pre` decides calls (`{"tool", "args"}` lines); `post` judges results
        /// (`{"tool", "result"}` lines).
        #[arg(long, default_value = "pre", value_parser = ["pre", "post"])]
        phase: String,
        /// Decide as this configured agent (its profile, posture and permissions on the config's).
        #[arg(long)]
        agent: Option<String>,
        /// Lay this workspace's tiers under the config (as `wrap --workspace`).
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
    /// Measure the guardrail rules and rubrics on labelled rows (tests/corpus formats): recall,
    /// false-positive rate, which tier decided, model latency, the rows it got wrong.
    Eval(EvalArgs),
    /// Decide calls parked for approval at a running proxy's admin API.
    Approvals {
        /// The proxy's admin listener.
        #[arg(long, default_value = "http://127.0.0.1:8687")]
        admin: String,
        /// The environment variable holding the admin token.
        #[arg(long, default_value = portcullis::config::child_env::ADMIN_TOKEN_VAR)]
        token_env: String,
        #[command(subcommand)]
        action: ApprovalAction,
    },
    /// Why a decision came out as it did: the rule and its scope, every rule the call met, the
    /// checker's judgement, the policy version (docs/explain.md).
    Explain(explain::ExplainArgs),
    /// Print the runbook section for an alert (what it means, what to check, how to mitigate),
    /// or the whole runbook; the admin listener serves the same text at `/runbook`.
    Runbook {
        /// The alert, e.g. PortcullisCheckerDown (any case).
        alert: Option<String>,
    },
    /// Parse and validate a config, print every problem, exit non-zero if there is one.
    Validate {
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// List every upstream's tools and write their definitions' digests to the lock file the
    /// config names (`pins: { file }`); a running proxy reloads it. See docs/tool-pinning.md.
    Pin {
        /// The config whose upstreams are pinned.
        #[arg(long)]
        config: PathBuf,
        /// Write here instead of the config's `pins.file`.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Pin a stdio server too, under this name (the `wrap --name` it runs with).
        #[arg(long, default_value = "stdio")]
        name: String,
        /// The stdio server command and its arguments (as given to `wrap`), if any.
        #[arg(last = true)]
        cmd: Vec<String>,
    },
    /// Print the MCP configuration that points a client at the proxy (every upstream, over HTTP;
    /// a stdio server through `wrap`), or with --write merge it into the client's file.
    /// See docs/clients/.
    Connect(ConnectArgs),
    /// Claude Code's PreToolUse/PostToolUse hook (JSON on stdin, answer on stdout), and its install.
    Hook {
        #[command(subcommand)]
        action: portcullis::hook::cli::HookCommand,
    },
}

/// The layered policy ([`portcullis::config::layered`]).
fn load_layered(path: Option<&PathBuf>, extra: &[PathBuf], claude: Option<&Path>) -> anyhow::Result<Config> {
    portcullis::config::layered::load(path, extra, claude).map_err(|e| anyhow::anyhow!(e))
}

fn home() -> Option<PathBuf> {
    portcullis::config::layered::home()
}

fn init_logging(json: bool, level: &str) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;
    let filter = tracing_subscriber::EnvFilter::try_from_env("PORTCULLIS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(colour());
    // Structured logs close every tool call's span with a line of its own (session, tool,
    // outcome, time busy and idle).
    let fmt = match json {
        true => fmt.json().with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE).boxed(),
        false => fmt.boxed(),
    };
    // The trace layer sees only trace spans, and exports once `telemetry.otlp` starts it.
    tracing_subscriber::registry()
        .with(portcullis::telemetry::otel::layer())
        .with(fmt.with_filter(filter))
        .init();
}

/// Colour in log lines only for a person at a terminal: not into a file or a pipe, and never
/// when `NO_COLOR` is set to anything (no-color.org).
fn colour() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
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

fn main() -> ExitCode {
    // Before anything else: no process of this user (a stdio server started below, the agent's
    // own shell) may read the credentials in this process's environment through /proc.
    let sealed = portcullis::stdio::seal_process();
    let cli = Cli::parse();
    // The hook runs around every tool call: no multi-threaded runtime, warnings only.
    if let Command::Hook { action } = cli.command {
        init_logging(cli.log_json, "warn");
        let load = |c: Option<&PathBuf>, extra: &[PathBuf], claude: Option<&Path>, ws: Option<&Path>| {
            let sources = portcullis::config::layered::Sources { extra, claude, workspace: ws };
            portcullis::config::layered::load_from(c, sources)
        };
        return portcullis::hook::cli::run(action, &load);
    }
    // The demo tells its story on stdout; its log lines only with `-v` (errors always).
    let level = match &cli.command {
        Command::Demo { verbose: false, .. } => "error",
        _ => "info",
    };
    init_logging(cli.log_json, level);
    match sealed {
        Ok(portcullis::stdio::Sealed::NotDumpable) => {}
        Ok(portcullis::stdio::Sealed::Unsupported) => tracing::warn!(
            "this OS cannot close the process to others of its user: a stdio server could read its credentials"
        ),
        Err(e) => tracing::warn!(error = %e, "could not make the process non-dumpable: a stdio server could read its credentials through /proc"),
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("portcullis: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli.command)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("portcullis: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Approvals { admin, token_env, action } => {
            use portcullis::approval::{cli, Choice};
            let token = std::env::var(&token_env)
                .with_context(|| format!("the admin token: set {token_env} (or pass --token-env)"))?;
            let action = match action {
                ApprovalAction::List => cli::Action::List,
                ApprovalAction::Allow { id, rule: true, yes, .. } => {
                    let asked = |shown: &str| yes || commands::confirm(shown);
                    println!("{}", portcullis::approval::always_cli::run(&admin, &token, id, asked).await?);
                    return Ok(ExitCode::SUCCESS);
                }
                ApprovalAction::Allow { id, always: false, .. } => {
                    cli::Action::Decide { id, decision: Choice::AllowOnce }
                }
                ApprovalAction::Allow { id, always: true, .. } => {
                    cli::Action::Decide { id, decision: Choice::AllowSession }
                }
                ApprovalAction::Deny { id } => cli::Action::Decide { id, decision: Choice::Deny },
                ApprovalAction::Status => cli::Action::Status,
                ApprovalAction::Clear { session } => cli::Action::Clear { session },
            };
            println!("{}", cli::run(&admin, &token, action).await?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Connect(a) => connect(a),
        Command::Explain(a) => explain::run(a).await,
        Command::Runbook { alert } => match alert.as_deref().map(portcullis::admin::runbook::section) {
            None => {
                print!("{}", portcullis::admin::runbook::text());
                Ok(ExitCode::SUCCESS)
            }
            Some(Ok(section)) => {
                print!("{section}");
                Ok(ExitCode::SUCCESS)
            }
            Some(Err(missing)) => {
                eprintln!("portcullis: {missing}");
                Ok(ExitCode::from(2))
            }
        },
        Command::Validate { config } => {
            let c = config.load()?;
            let found = portcullis::config::validate::findings(&c, |v| std::env::var(v).ok());
            for w in &found.warnings {
                eprintln!("portcullis: warning: {}: {}", w.path, w.message);
            }
            if !found.problems.is_empty() {
                eprintln!(
                    "portcullis: the config parses, but {} problem(s) stop it here:",
                    found.problems.len()
                );
                for p in &found.problems {
                    eprintln!("  - {}: {}", p.path, p.message);
                }
                return Ok(ExitCode::FAILURE);
            }
            println!(
                "config ok: {} upstream(s), listen {}, admin {}",
                c.upstreams.len(),
                c.listen,
                c.admin.listen
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Wrap { config, name, agent, workspace, cmd } => {
            let c = config.load_in(workspace.as_deref())?;
            if let Some(why) = portcullis::sandbox::refusal(&c) {
                anyhow::bail!(why);
            }
            let code = portcullis::stdio::wrap(
                &c,
                &name,
                agent.as_deref(),
                &cmd,
                tokio::io::stdin(),
                tokio::io::stdout(),
            )
            .await?;
            Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
        }
        Command::Demo { listen, once, .. } => {
            portcullis::demo::run(listen, once, shutdown_signal()).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Check { config, phase, agent, workspace } => {
            let phase = match phase.as_str() {
                "post" => portcullis::checker::Phase::Post,
                _ => portcullis::checker::Phase::Pre,
            };
            let c = config.load_in(workspace.as_deref())?;
            let s = portcullis::check::run(
                &c,
                phase,
                agent.as_deref(),
                std::io::stdin().lock(),
                std::io::stdout().lock(),
            )
            .await?;
            match phase {
                portcullis::checker::Phase::Pre => eprintln!(
                    "portcullis check: {} allow, {} ask, {} deny; {} blocked by the checker; {} unreadable line(s)",
                    s.allow, s.ask, s.deny, s.blocked, s.errors
                ),
                portcullis::checker::Phase::Post => eprintln!(
                    "portcullis check: {} result(s) rewritten or blocked; {} unreadable line(s)",
                    s.blocked, s.errors
                ),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Eval(a) => {
            use portcullis::eval::{CheckerOverride, Options, Show};
            if let Some(traces) = a.traces {
                let opts = portcullis::eval::traces::TraceOptions {
                    traces,
                    json: a.json,
                    errors: a.errors,
                    progress: true,
                };
                print!("{}", portcullis::eval::traces::run(&a.config.load()?, &opts).await?);
                return Ok(ExitCode::SUCCESS);
            }
            let phase = a.phase.as_deref().map(|p| match p {
                "post" => portcullis::checker::Phase::Post,
                _ => portcullis::checker::Phase::Pre,
            });
            let checker = a.checker_url.zip(a.checker_model).map(|(url, model)| CheckerOverride {
                url,
                model,
                context_tokens: a.context_tokens,
            });
            let opts = Options {
                data: a.data.unwrap_or_default(),
                phase,
                rubrics: a.rubrics,
                concurrency: a.concurrency,
                sample: a.sample,
                checker,
                tool: a.tool,
                upstream: a.upstream,
                progress: true,
            };
            let compare = a.compare.map(|d| (d[0].clone(), d[1].clone()));
            let show = Show { compare, errors: a.errors, json: a.json };
            print!("{}", portcullis::eval::run(&a.config.load()?, &opts, &show).await?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Pin { config, out, name, cmd } => {
            let text =
                std::fs::read_to_string(&config).with_context(|| format!("reading {}", config.display()))?;
            let c = Config::parse_for_pinning(&text, &config.display().to_string())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let stdio =
                (!cmd.is_empty()).then_some(portcullis::pins::cli::StdioServer { name: &name, cmd: &cmd });
            for line in portcullis::pins::cli::run(&c, out.as_deref(), stdio).await? {
                println!("{line}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Hook { .. } => unreachable!("answered before the runtime starts"),
        Command::Serve { config, ask_reviewer } => {
            let c = config.load()?;
            if let Some(why) = portcullis::sandbox::refusal(&c) {
                anyhow::bail!(why);
            }
            if ask_reviewer {
                portcullis::approval::reviewer::requires_model(&c)?;
            }
            let runtime = portcullis::runtime::Runtime::new(&c, portcullis::runtime::admin_token(&c)?)?;
            // "Allow always" writes its rules into the first rule file named.
            if let Some(file) = config.permission_config.first() {
                runtime.shared.approvals.set_rule_file(file.clone());
            }
            if ask_reviewer {
                // Before the first call is accepted: no window in which a floor ask is refused
                // as headless only because the reviewer was not on yet.
                runtime.shared.approvals.enable_reviewer();
            }
            let running = portcullis::app::serve(runtime).await?;
            let mut reload = config.reload();
            // A re-pin is a policy change: the lock file is watched with the config.
            reload.files.extend(c.policy.pins.as_ref().map(|p| p.file.clone()));
            running.reload_on_change(reload);
            eprintln!(
                "portcullis listening on http://{} (admin http://{})",
                running.addr, running.admin_addr
            );
            for name in c.upstreams.keys() {
                eprintln!("  /mcp/{name}  ->  {}", c.upstreams[name].url);
            }
            running.run_until(shutdown_signal()).await;
            // The last spans: exported from a blocking thread while the runtime still runs.
            let _ = tokio::task::spawn_blocking(portcullis::telemetry::otel::flush).await;
            Ok(ExitCode::SUCCESS)
        }
    }
}
