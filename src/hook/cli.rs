//! The `portcullis hook` command line: `pre` and `post` answer one envelope on stdin with one
//! JSON answer on stdout and exit 0, whatever happens — a message on stderr says what went
//! wrong, and the answer is then the conservative one (Claude Code reads any other exit status
//! but 2 as "go ahead", so crashing would be a silent allow).

use std::io::Read as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use super::envelope::{Envelope, Event};
use super::install::{self, Scope};
use super::one::decide_envelope;
pub use super::one::{HookArgs, Loader, OnProxyDown};

#[derive(clap::Subcommand)]
pub enum HookCommand {
    /// Answer Claude Code's PreToolUse hook: allow, ask or deny the call on stdin.
    Pre(HookArgs),
    /// Answer Claude Code's PostToolUse hook: pass, redact or block the result on stdin.
    Post(HookArgs),
    /// Record Claude Code's UserPromptSubmit prompt at a running proxy (--proxy): the user's own
    /// task, which the checker may read as intent. Prints nothing; never blocks the prompt.
    Prompt(HookArgs),
    /// Print (or --write) Claude Code's settings.json (with --codex: Codex's hooks.json) with the
    /// portcullis hooks merged in.
    Install {
        #[command(flatten)]
        args: HookArgs,
        /// `.claude/settings.json` (`.codex/hooks.json`) in the current directory (the default).
        #[arg(long)]
        project: bool,
        /// `~/.claude/settings.json` (`$CODEX_HOME/hooks.json`, else `~/.codex/hooks.json`).
        #[arg(long, conflicts_with = "project")]
        user: bool,
        /// Write the file instead of printing it.
        #[arg(long)]
        write: bool,
    },
}

/// Runs a `hook` subcommand.
pub fn run(command: HookCommand, load: Loader<'_>) -> ExitCode {
    match command {
        HookCommand::Pre(args) => answer(Event::Pre, &args, load),
        HookCommand::Post(args) => answer(Event::Post, &args, load),
        HookCommand::Prompt(args) => prompt(
            args.proxy.as_deref(),
            &args.token_env,
            args.agent.as_deref(),
            Duration::from_secs(args.proxy_timeout),
        ),
        HookCommand::Install { args, user, write, .. } => {
            let scope = if user { Scope::User } else { Scope::Project };
            let installed = match args.codex {
                true => install_codex(scope, &args, write),
                false => install(scope, &args, write),
            };
            match installed {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("portcullis hook install: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

fn answer(event: Event, args: &HookArgs, load: Loader<'_>) -> ExitCode {
    let decided = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decide(event, args, load)));
    let (answer, error) = match decided {
        Ok(pair) => pair,
        Err(_) => {
            let why = "portcullis hook failed unexpectedly (see the message above)".to_owned();
            (super::standalone::fallback(event, &why).to_json(), Some(why))
        }
    };
    if let Some(e) = error {
        // The error may quote the agent's input (a tool's name, a path): shown inert.
        let phase = if event == Event::Pre { "pre" } else { "post" };
        eprintln!("portcullis hook {phase}: {}", crate::inert::inert(&e));
    }
    println!("{answer}");
    ExitCode::SUCCESS
}

/// The answer to print and the error to show.
fn decide(event: Event, args: &HookArgs, load: Loader<'_>) -> (serde_json::Value, Option<String>) {
    if args.codex {
        return super::codex::decide(event, args, load);
    }
    match Envelope::read(std::io::stdin().lock(), event) {
        Ok((bytes, env)) => decide_envelope(event, args, load, bytes, &env),
        Err(e) => (super::standalone::fallback(event, &e.to_string()).to_json(), Some(e.to_string())),
    }
}

/// The command that runs this binary as the hook for `phase`, with `args`' choices.
fn command(phase: &str, args: &HookArgs) -> String {
    let exe =
        std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_else(|_| "portcullis".into());
    let quote = |s: &str| match s.contains(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
        true => format!("'{}'", s.replace('\'', r"'\''")),
        false => s.to_owned(),
    };
    let absolute =
        |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf()).display().to_string();
    let mut words = vec![quote(&exe), "hook".into(), phase.into()];
    if let Some(c) = &args.config {
        words.extend(["--config".into(), quote(&absolute(c))]);
    }
    for p in &args.permission_config {
        words.extend(["--permission-config".into(), quote(&absolute(p))]);
    }
    if args.import_claude_permissions && phase != "prompt" {
        words.push("--import-claude-permissions".into());
    }
    if let Some(p) = &args.proxy {
        words.extend(["--proxy".into(), quote(p)]);
        if args.token_env != crate::config::child_env::ADMIN_TOKEN_VAR {
            words.extend(["--token-env".into(), quote(&args.token_env)]);
        }
        if args.on_proxy_down == OnProxyDown::Deny {
            words.extend(["--on-proxy-down".into(), "deny".into()]);
        }
        if args.proxy_timeout != 30 {
            words.extend(["--proxy-timeout".into(), args.proxy_timeout.to_string()]);
        }
    }
    if let Some(a) = &args.agent {
        words.extend(["--agent".into(), quote(a)]);
    }
    if args.codex {
        words.push("--codex".into());
    }
    words.join(" ")
}

/// `hook install --codex`: Codex's hooks.json (no prompt hook: Codex's would not be recorded).
fn install_codex(scope: Scope, args: &HookArgs, write: bool) -> Result<(), install::InstallError> {
    use super::codex_install as codex;
    let path = match scope {
        Scope::Project => codex::Scope::Project.path()?,
        Scope::User => codex::Scope::User.path()?,
    };
    let wrap = |phase: &str| {
        codex::command(&command(phase, args), phase)
            .ok_or(install::InstallError::Unquotable { path: path.display().to_string() })
    };
    let merged = codex::merged(&path, &wrap("pre")?, &wrap("post")?)?;
    if write {
        install::write(&path, &merged)?;
        eprintln!(
            "portcullis hook install: wrote {}; Codex runs a new hook only once it is trusted: review it \
             with /hooks in Codex (docs/clients/codex.md)",
            path.display()
        );
    } else {
        println!("{merged:#}");
        eprintln!(
            "portcullis hook install: this is {} with the portcullis hooks merged in; pass --write to write it",
            path.display()
        );
    }
    Ok(())
}

fn install(scope: Scope, args: &HookArgs, write: bool) -> Result<(), install::InstallError> {
    let path = scope.path()?;
    // The user's prompt is recorded only where it can be kept: at a running proxy.
    let prompt = args.proxy.is_some().then(|| command("prompt", args));
    let merged = install::merged(&path, &command("pre", args), &command("post", args), prompt.as_deref())?;
    if write {
        install::write(&path, &merged)?;
        eprintln!("portcullis hook install: wrote {}", path.display());
    } else {
        println!("{merged:#}");
        eprintln!(
            "portcullis hook install: this is {} with the portcullis hooks merged in; pass --write to write it",
            path.display()
        );
    }
    Ok(())
}

/// `portcullis hook prompt`: hands the envelope on stdin to the proxy; prints nothing.
fn prompt(proxy: Option<&str>, token_env: &str, agent: Option<&str>, timeout: Duration) -> ExitCode {
    let warn = |why: &str| eprintln!("portcullis hook prompt: {why} (the prompt goes on unrecorded)");
    let Some(proxy) = proxy else {
        warn("--proxy is needed: without a running proxy there is nowhere to keep the task");
        return ExitCode::SUCCESS;
    };
    let mut body = Vec::new();
    if let Err(e) = std::io::stdin().lock().take(super::prompt::MAX_PROMPT_ENVELOPE).read_to_end(&mut body) {
        warn(&format!("cannot read the hook input: {e}"));
        return ExitCode::SUCCESS;
    }
    let Ok(token) = std::env::var(token_env) else {
        warn(&format!("${token_env} is not set"));
        return ExitCode::SUCCESS;
    };
    let shell = crate::shell::Dialect::Bash;
    if let Err(e) = super::client::send(proxy, "prompt", &token, agent, shell, body, timeout) {
        warn(&e.to_string());
    }
    ExitCode::SUCCESS
}
