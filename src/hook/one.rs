//! One envelope decided from the hook's arguments — standalone from the config, or by a running
//! proxy — shared by Claude Code's protocol ([`super::cli`]) and Codex's ([`super::codex`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::answer::{Answer, Permission};
use super::envelope::{Envelope, Event};
use crate::config::Config;

/// Loads the main config and extra permission files (`main.rs` owns the layering).
/// The third argument: the project whose Claude Code permissions are imported, if any; the
/// fourth: the workspace whose user and project tiers apply (the envelope's `cwd`).
pub type Loader<'a> =
    &'a dyn Fn(Option<&PathBuf>, &[PathBuf], Option<&Path>, Option<&Path>) -> Result<Config, String>;

/// What the proxy being down makes the hook answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnProxyDown {
    /// Claude Code asks its user before the call; after it, the result passes with a warning.
    Ask,
    /// The call is denied; after it, the result is blocked.
    Deny,
}

#[derive(clap::Args, Clone, Debug)]
pub struct HookArgs {
    /// Decide in this process from this config (default: the embedded one).
    #[arg(long, conflicts_with = "proxy")]
    pub(super) config: Option<PathBuf>,
    /// Extra permission files (scope cli), as for `serve`.
    #[arg(long = "permission-config", conflicts_with = "proxy")]
    pub(super) permission_config: Vec<PathBuf>,
    /// Also read Claude Code's permission rules for the call's project (its `cwd`) and the user,
    /// lossy and never wider than Claude Code (docs/claude-code.md).
    #[arg(long, conflicts_with = "proxy")]
    pub(super) import_claude_permissions: bool,
    /// Ask a running proxy instead: its admin listener, e.g. http://127.0.0.1:8687.
    #[arg(long)]
    pub(super) proxy: Option<String>,
    /// The environment variable holding the proxy's admin token (--proxy).
    #[arg(long, default_value = crate::config::child_env::ADMIN_TOKEN_VAR)]
    pub(super) token_env: String,
    /// Decide as this configured agent (its profile, posture and permissions on the config's).
    #[arg(long)]
    pub(super) agent: Option<String>,
    /// The answer when the proxy cannot be asked (--proxy). Never a silent allow.
    #[arg(long, value_enum, default_value = "ask")]
    pub(super) on_proxy_down: OnProxyDown,
    /// How long to wait for the proxy's answer, in seconds (a checker call may be in it).
    #[arg(long, default_value_t = 30)]
    pub(super) proxy_timeout: u64,
    /// Speak Codex CLI's hook protocol (docs/clients/codex.md) instead of Claude Code's; with
    /// `install`, write Codex's hooks.json.
    #[arg(long)]
    pub(super) codex: bool,
}

/// The answer (in Claude Code's words) to one envelope read as `bytes`, and the error to show.
pub(super) fn decide_envelope(
    event: Event,
    args: &HookArgs,
    load: Loader<'_>,
    bytes: Vec<u8>,
    env: &Envelope,
) -> (serde_json::Value, Option<String>) {
    let conservative = |why: String| (super::standalone::fallback(event, &why).to_json(), Some(why));
    // Claude Code runs `Bash` commands with the user's shell: zsh on macOS.
    let shell = super::map::shell_of(std::env::var_os("SHELL").as_deref());
    let Some(proxy) = &args.proxy else {
        // Claude Code's own rules for the project the call is made in (the envelope's `cwd`).
        let project = args.import_claude_permissions.then(|| env.cwd.clone().unwrap_or_else(|| ".".into()));
        // The tiers of the project the call is made in (the nearest `.portcullis/` from `cwd`
        // up); a `cwd` that is no directory holds no project file, so it has none
        // (`check --workspace` refuses one instead).
        let cwd = env.cwd.as_deref().filter(|c| c.is_absolute() && c.is_dir());
        let project_root = match cwd.map(crate::config::tiers::workspace_of_cwd) {
            Some(Err(e)) => return conservative(format!("the config cannot be loaded: {e}")),
            found => found.and_then(Result::ok).map(|w| w.root().to_path_buf()),
        };
        let workspace = project_root.as_deref();
        let extra = &args.permission_config;
        let config = match load(args.config.as_ref(), extra, project.as_deref(), workspace) {
            Ok(c) => c,
            Err(e) => return conservative(format!("the config cannot be loaded: {e}")),
        };
        if let Some(why) = crate::sandbox::refusal(&config) {
            return conservative(why);
        }
        return match super::standalone::decide(config, env, args.agent.as_deref(), shell) {
            Ok(a) => (a.to_json(), None),
            Err(e) => conservative(e),
        };
    };
    let down = |why: String| {
        let permission = match args.on_proxy_down {
            OnProxyDown::Ask => Permission::Ask,
            OnProxyDown::Deny => Permission::Deny,
        };
        (Answer::cannot_decide(event, permission, &why).to_json(), Some(why))
    };
    let token = match std::env::var(&args.token_env) {
        Ok(t) if !t.trim().is_empty() => t,
        _ => return down(format!("the admin token: set {} (or pass --token-env)", args.token_env)),
    };
    let timeout = Duration::from_secs(args.proxy_timeout.max(1));
    match super::client::forward(proxy, &token, event, args.agent.as_deref(), shell, bytes, timeout) {
        Ok(f) => (f.answer, f.error),
        Err(e) => down(e.to_string()),
    }
}
