//! `portcullis demo`: the embedded default end to end, with no API key and nothing to install.
//! Starts the sample tool server, the proxy in front of it, replays a scripted agent session,
//! then keeps serving so a real MCP client can connect and an operator can open the console.
//!
//! Everything the demo writes (the sample server's files, the audit log) lives in one private
//! `scratch::Scratch` directory, removed on every way out: the story ends (`--once`), the
//! operator presses Ctrl-C (during the story or after it), SIGTERM or SIGHUP arrives, or a step
//! fails. The signals are listened for before the directory exists, so none of them can kill the
//! process with the directory still on disk.

/// `println!` that never panics: a reader that went away (`portcullis demo | head`) ends the
/// story's output, not the demo (which must still remove its scratch directory).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

pub mod sample_server;
mod scratch;
mod script;

use std::future::Future;
use std::net::SocketAddr;
use std::pin::pin;

use anyhow::Context as _;
use futures_util::FutureExt as _;
use tokio::net::TcpListener;

use crate::config::Config;

use scratch::Scratch;

/// Decisions the demo keeps in memory for its console (`GET /decisions`).
const RECENT: usize = 200;

/// Runs the demo. With `once`, returns after the scripted session (an error if any step did not
/// behave as the policy promises). `shutdown` (Ctrl-C, SIGTERM) ends it at any point.
pub async fn run(
    listen: Option<SocketAddr>,
    once: bool,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let mut stop = pin!(stopped(shutdown));
    // Polled once now: the signal handlers are installed before anything is written to disk.
    if stop.as_mut().now_or_never().is_some() {
        return Ok(());
    }
    let scratch = Scratch::create_in(&std::env::temp_dir()).context("the demo's scratch directory")?;
    let story = tokio::select! {
        story = tell(&scratch, listen) => story?,
        () = stop.as_mut() => {
            say!("\ninterrupted: scratch directory {} removed.", scratch.root().display());
            return Ok(());
        }
    };
    let Story { running, result, proxy_url } = story;
    if once {
        running.shutdown().await;
    } else {
        say!("still serving: point an MCP client at {proxy_url} (Streamable HTTP). Ctrl-C stops.");
        running.run_until(stop).await;
        say!("stopped: scratch directory {} removed.", scratch.root().display());
    }
    drop(scratch);
    result
}

/// `shutdown`, or SIGHUP (the terminal went away): either ends the demo cleanly.
async fn stopped(shutdown: impl Future<Output = ()>) {
    #[cfg(unix)]
    let hangup = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let hangup = std::future::pending::<()>();
    tokio::select! { () = shutdown => {}, () = hangup => {} }
}

/// The proxy, still running after the scripted session, and whether the session told the truth.
struct Story {
    running: crate::app::Running,
    result: anyhow::Result<()>,
    proxy_url: String,
}

/// Starts the sample server and the proxy in `scratch`, prints where everything is, and replays
/// the scripted session.
async fn tell(scratch: &Scratch, listen: Option<SocketAddr>) -> anyhow::Result<Story> {
    let jail = scratch.jail();
    // It must exist before the config is read: `jail.root` is resolved when it loads.
    std::fs::create_dir(&jail).context("the sample server's directory")?;
    // The embedded default, with the jail pointed at the sample server's files, where that server
    // resolves relative paths (`jail.relative: root`).
    let yaml = format!(
        "{}\njail:\n  root: {:?}\n  relative: root\n",
        crate::config::DEFAULT_YAML,
        jail.display().to_string()
    );
    let mut config =
        Config::parse(&yaml, "embedded config/portcullis.yaml").map_err(|e| anyhow::anyhow!("{e}"))?;
    let configured: SocketAddr = config.upstreams["sample"]
        .url
        .authority()
        .map(|a| a.as_str().to_owned())
        .unwrap_or_default()
        .parse()
        .context("sample upstream address")?;
    if let Some(l) = listen {
        config.listen = l;
        if l.port() == 0 {
            config.admin.listen.set_port(0);
        }
    }
    // The sample server takes its configured port when free, else any port.
    let sample_listener = match (listen.map(|l| l.port()), TcpListener::bind(configured).await) {
        (Some(0), _) | (_, Err(_)) => TcpListener::bind((configured.ip(), 0)).await?,
        (_, Ok(l)) => l,
    };
    // The sample server's shell gets what a stdio server named `sample` would: never the
    // guard's credentials.
    let env = config.child_env("sample").apply(std::env::vars_os(), &config.guard_secret_vars()).vars;
    let sample = sample_server::start(sample_listener, jail, env).await?;
    let upstream = config.upstreams.get_mut("sample").expect("embedded config has the sample upstream");
    upstream.url = sample.url.parse()?;

    // The operator's side of approvals: a token made for this run, printed below.
    config.approvals.channel = crate::approval::Channel::Api;
    // Every decision of the run: one JSON line each in the scratch directory, and the latest in
    // memory for the console.
    config.audit.target = crate::audit::Destination::File(scratch.audit_log());
    config.audit.recent = RECENT;
    let token = crate::checker::prompt::random_token();
    let running = crate::app::start_with_token(&config, Some(token.clone())).await?;
    let proxy_url = format!("http://{}/mcp/sample", running.addr);
    let admin = format!("http://{}", running.admin_addr);
    say!("portcullis demo: the embedded default (config/portcullis.yaml)");
    say!("  sample tool server  {}  (files in {})", sample.url, sample.scratch.display());
    say!("  proxy               {proxy_url}");
    say!("  console             {admin}/console  (paste the admin token below)");
    say!("  admin token         {token}");
    say!("  metrics             {admin}/metrics");
    say!("  audit log           {}", scratch.audit_log().display());
    say!("  approvals (CLI)     PORTCULLIS_ADMIN_TOKEN={token} portcullis approvals --admin {admin} list");
    say!("  scratch directory   {}  (removed when the demo ends)", scratch.root().display());
    say!();
    say!("scripted agent session through the proxy:");
    let operator = script::Operator::new(admin, token);
    let surprises = script::replay(&proxy_url, &sample, &running.metrics, &operator).await?;
    say!();
    let result = if surprises == 0 {
        say!("every call behaved as the policy says.");
        Ok(())
    } else {
        Err(anyhow::anyhow!("{surprises} step(s) did not behave as the policy says"))
    };
    Ok(Story { running, result, proxy_url })
}
