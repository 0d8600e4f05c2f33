//! `/readyz`'s look at the upstreams: a TCP connect to each HTTP upstream (at most one second,
//! all at once), so an operator reads which tool servers the proxy cannot reach.
//!
//! An unreachable upstream is reported, not made a readiness failure: one dead tool server must
//! not take the proxy — and every other upstream behind it — out of rotation. `/readyz?strict`
//! answers 503 for it, for deployments that want that.

use std::time::Duration;

use crate::config::Config;

/// How long one connect may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// The HTTP upstreams' names and addresses.
#[derive(Debug, Clone, Default)]
pub struct Upstreams(Vec<(String, String, u16)>);

impl Upstreams {
    pub fn from_config(config: &Config) -> Upstreams {
        let mut out = Vec::new();
        for u in config.upstreams.values() {
            let Some(host) = u.url.host() else { continue };
            let https = u.url.scheme_str() == Some("https");
            let port = u.url.port_u16().unwrap_or(if https { 443 } else { 80 });
            let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
            out.push((u.name.clone(), host, port));
        }
        Upstreams(out)
    }

    /// One line per upstream that could not be reached, naming it, its address and why.
    pub async fn unreachable(&self) -> Vec<String> {
        let probes = self.0.iter().map(|(name, host, port)| async move {
            let connect = tokio::net::TcpStream::connect((host.as_str(), *port));
            let why = match tokio::time::timeout(PROBE_TIMEOUT, connect).await {
                Ok(Ok(_)) => return None,
                Ok(Err(e)) => e.to_string(),
                Err(_) => format!("no answer within {PROBE_TIMEOUT:?}"),
            };
            Some(format!("upstream {name} ({host}:{port}) is unreachable: {why}\n"))
        });
        futures_util::future::join_all(probes).await.into_iter().flatten().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_listening_upstream_is_reachable_and_a_closed_port_is_named_with_its_error() {
        let open = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("{e}"));
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let closed_port = closed.local_addr().map(|a| a.port()).unwrap_or_else(|e| panic!("{e}"));
        drop(closed);
        let yaml = format!(
            "upstreams:\n  live: {{ url: \"http://{}/mcp\" }}\n  dead: {{ url: \"http://127.0.0.1:{closed_port}/mcp\" }}\n",
            open.local_addr().unwrap_or_else(|e| panic!("{e}"))
        );
        let config = Config::parse(&yaml, "t").unwrap_or_else(|e| panic!("{e}"));
        let lines = Upstreams::from_config(&config).unreachable().await;
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with(&format!("upstream dead (127.0.0.1:{closed_port}) is unreachable: ")),
            "{lines:?}"
        );
    }
}
