//! How a stdio server is started: a process of its own whose environment the config makes
//! (`config::child_env`): never the guard's own credentials, and with `upstreams.NAME.env` only
//! a baseline and the variables named there.

use tokio::process::Command;

use crate::config::Config;

/// The command that starts `program` with `args` as the stdio server `upstream` (`--name`).
/// Its environment is built from this process's, not inherited.
pub fn server_command(config: &Config, upstream: &str, program: &str, args: &[String]) -> Command {
    let env = config.child_env(upstream).apply(std::env::vars_os(), &config.guard_secret_vars());
    if !env.aliases.is_empty() {
        tracing::warn!(
            variables = %env.aliases.join(", "),
            "not passed to the server: they hold the value of one of the guard's credentials"
        );
    }
    let mut command = Command::new(program);
    command.args(args).env_clear().envs(env.vars);
    command
}

/// Says so when the config holds stdio servers' settings but none by this name: the server
/// then inherits everything but the guard's credentials, which a mistyped `--name` should not
/// silently mean.
pub fn warn_if_unconfigured(config: &Config, upstream: &str) {
    if !config.stdio_servers.is_empty() && !config.stdio_servers.contains_key(upstream) {
        let known: Vec<&str> = config.stdio_servers.keys().map(String::as_str).collect();
        tracing::warn!(
            name = upstream,
            configured = %known.join(", "),
            "no stdio server of this name in the config: it inherits the environment but the guard's credentials"
        );
    }
}
