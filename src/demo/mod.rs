//! `portcullis demo`: the embedded default end to end, with no API key and nothing to install.
//! Starts the sample tool server, the proxy in front of it, replays a scripted agent session,
//! then keeps serving so a real MCP client can connect.

pub mod sample_server;
mod script;

use std::future::Future;
use std::net::SocketAddr;

use anyhow::Context as _;
use tokio::net::TcpListener;

use crate::config::Config;

/// Runs the demo. With `once`, returns after the scripted session (an error if any step did not
/// behave as the policy promises).
pub async fn run(
    listen: Option<SocketAddr>,
    once: bool,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let scratch = std::env::temp_dir().join(format!("portcullis-demo-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    // The embedded default, with the jail pointed at the sample server's scratch directory, where
    // that server resolves relative paths (`jail.relative: root`).
    let yaml = format!(
        "{}\njail:\n  root: {:?}\n  relative: root\n",
        crate::config::DEFAULT_YAML,
        scratch.display().to_string()
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
    let sample = sample_server::start(sample_listener, scratch, env).await?;
    let upstream = config.upstreams.get_mut("sample").expect("embedded config has the sample upstream");
    upstream.url = sample.url.parse()?;

    // The operator's side of approvals: a token made for this run, printed below.
    config.approvals.channel = crate::approval::Channel::Api;
    // Every decision of the run, one JSON line each (beside the jail, not in it).
    let audit_log = std::env::temp_dir().join(format!("portcullis-demo-{}-audit.jsonl", std::process::id()));
    config.audit.target = crate::audit::Destination::File(audit_log.clone());
    let token = crate::checker::prompt::random_token();
    let running = crate::app::start_with_token(&config, Some(token.clone())).await?;
    let proxy_url = format!("http://{}/mcp/sample", running.addr);
    println!("portcullis demo: the embedded default (config/portcullis.yaml)");
    println!("  sample tool server  {}  (scratch dir {})", sample.url, sample.scratch.display());
    println!("  proxy               {proxy_url}");
    println!("  metrics             http://{}/metrics", running.admin_addr);
    println!("  audit log           {}", audit_log.display());
    println!("  approvals (operator) http://{}/approvals  token {token}", running.admin_addr);
    println!(
        "                      PORTCULLIS_ADMIN_TOKEN={token} portcullis approvals --admin http://{} list",
        running.admin_addr
    );
    println!();
    println!("scripted agent session through the proxy:");
    let operator = script::Operator::new(format!("http://{}", running.admin_addr), token);
    let surprises = script::replay(&proxy_url, &sample, &running.metrics, &operator).await?;
    println!();
    let result = if surprises == 0 {
        println!("every call behaved as the policy says.");
        Ok(())
    } else {
        Err(anyhow::anyhow!("{surprises} step(s) did not behave as the policy says"))
    };
    if !once {
        println!("still serving: point an MCP client at {proxy_url} (Streamable HTTP). Ctrl-C stops.");
        running.run_until(shutdown).await;
    } else {
        running.shutdown().await;
    }
    let _ = std::fs::remove_dir_all(&sample.scratch);
    result
}
