//! Announcing parked asks (`approvals.notify`): each ask is POSTed to every configured webhook
//! and Slack channel, off the call's path. Each target has its own bounded queue and task, so a
//! receiver that hangs delays only its own announcements, never a decision nor another target:
//! [`Notifier::announce`] only tries to queue. An attempt is bounded by the target's timeout, a
//! failed one is retried a few times with a doubling pause, and every ending is counted in
//! `portcullis_notify_total{outcome}`. Logs name a target by scheme and host alone: a webhook's
//! path and query (and a Slack URL entirely) are credentials.
//!
//! These are the operator's own endpoints, configured by the operator: the `egress:` rules,
//! which judge where an *agent's* arguments may send a tool, do not apply to them.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tokio::sync::mpsc;

use super::notify_payload::Announcement;
use crate::config::approvals::notify::{Notify, Target};
use crate::telemetry::notify_metrics::Outcome;
use crate::telemetry::Metrics;

/// Announcements waiting for one target at most; beyond it one is dropped and counted.
const QUEUE: usize = 64;
/// Attempts per announcement (the first and its retries).
const ATTEMPTS: u32 = 4;
/// The pause after the first failed attempt; it doubles after each.
const BACKOFF: Duration = Duration::from_millis(250);

/// Why the notifier cannot start.
#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    /// A Slack target's variable is unset or empty, or does not hold an http(s) URL (never shown).
    #[error("approvals.notify[{index}].slack_webhook_env: the environment variable {var} {why}")]
    SlackUrl { index: usize, var: String, why: &'static str },
    /// The URL is valid but the HTTP client cannot address it (never shown).
    #[error("approvals.notify[{index}]: the {kind} URL cannot be used by the HTTP client")]
    Unaddressable { index: usize, kind: &'static str },
    /// Announcing needs a tokio runtime to run its tasks on.
    #[error("approvals.notify needs a tokio runtime to start its delivery tasks")]
    NoRuntime,
}

/// The body format a target reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Slack,
}

/// The announcing side of every configured target.
#[derive(Debug)]
pub struct Notifier {
    queues: Vec<(Format, mpsc::Sender<Arc<Announcement>>)>,
    metrics: Arc<Metrics>,
}

type Http = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

impl Notifier {
    /// Starts one delivery task per target on the current runtime; `env` reads a Slack
    /// target's variable (the URL is read once, here, and lives only in its task).
    pub fn start(
        targets: &[Notify],
        metrics: Arc<Metrics>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Notifier, NotifyError> {
        let mut resolved = Vec::new();
        for (index, n) in targets.iter().enumerate() {
            let (format, url) = match &n.target {
                Target::Webhook(u) => (Format::Json, u.clone()),
                Target::Slack { env: var } => {
                    let bad = |why| NotifyError::SlackUrl { index, var: var.clone(), why };
                    let value =
                        env(var).filter(|v| !v.trim().is_empty()).ok_or_else(|| bad("is unset or empty"))?;
                    let url = crate::config::approvals::notify::web_url(value.trim())
                        .map_err(|_| bad("does not hold an http(s) URL"))?;
                    (Format::Slack, url)
                }
            };
            let uri: http::Uri = url
                .as_str()
                .parse()
                .map_err(|_| NotifyError::Unaddressable { index, kind: n.target.kind() })?;
            resolved.push((format, uri, n.timeout, n.target.kind()));
        }
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| NotifyError::NoRuntime)?;
        let http = client();
        let mut queues = Vec::new();
        for (format, uri, timeout, kind) in resolved {
            let (tx, rx) = mpsc::channel(QUEUE);
            let target = Delivery { uri, timeout, kind, http: http.clone(), metrics: metrics.clone() };
            runtime.spawn(target.run(format, rx));
            queues.push((format, tx));
        }
        Ok(Notifier { queues, metrics })
    }

    /// Queues `a` for every target; never waits. A full queue drops it (counted).
    pub fn announce(&self, a: Announcement) {
        let a = Arc::new(a);
        for (_, q) in &self.queues {
            if q.try_send(a.clone()).is_err() {
                self.metrics.notify.count(Outcome::Dropped);
                tracing::warn!(id = a.id, "an approval announcement was dropped: its target's queue is full");
            }
        }
    }
}

/// How asks reach people beyond the API: announcements, and the rule file "allow always"
/// writes to.
#[derive(Debug, Default)]
pub(super) struct Reach {
    notifier: Option<Notifier>,
    console_url: Option<url::Url>,
    rule_file: std::sync::OnceLock<std::path::PathBuf>,
}

impl Reach {
    pub(super) fn new(settings: &super::Settings) -> Reach {
        Reach { console_url: settings.console_url.clone(), ..Reach::default() }
    }
}

impl super::Approvals {
    /// The same approvals, announcing each parked ask to `settings.notify`'s targets (a Slack
    /// target's URL is read from its variable now: unset is an error, not silence).
    pub fn with_notify(mut self, settings: &super::Settings) -> Result<super::Approvals, NotifyError> {
        if !settings.notify.is_empty() {
            let env = |v: &str| std::env::var(v).ok();
            self.reach.notifier = Some(Notifier::start(&settings.notify, self.metrics.clone(), env)?);
        }
        Ok(self)
    }

    /// Tells every target about `ask`, parked as `id` (queued; never waits).
    pub(super) fn announce(&self, id: u64, ask: &super::Ask) {
        if let Some(n) = &self.reach.notifier {
            let now = std::time::SystemTime::now();
            n.announce(Announcement::new(id, ask, now, self.timeout, self.reach.console_url.as_ref()));
        }
    }

    /// Names the rule file "allow always" writes to (the first `--permission-config`); the
    /// first file named is kept.
    pub fn set_rule_file(&self, file: std::path::PathBuf) {
        let _ = self.reach.rule_file.set(file);
    }

    /// The rule file "allow always" writes to, when `serve` was given one.
    pub fn rule_file(&self) -> Option<&std::path::Path> {
        self.reach.rule_file.get().map(|p| p.as_path())
    }
}

fn client() -> Http {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_webpki_roots()
        .https_or_http()
        .enable_http1()
        .wrap_connector(http);
    Client::builder(TokioExecutor::new()).build(https)
}

/// One target's delivery loop.
struct Delivery {
    uri: http::Uri,
    timeout: Duration,
    kind: &'static str,
    http: Http,
    metrics: Arc<Metrics>,
}

impl Delivery {
    /// Where logs say it went: scheme and host, never the path (a webhook's token lives there).
    fn shown(&self) -> String {
        format!(
            "{} {}://{}",
            self.kind,
            self.uri.scheme_str().unwrap_or("http"),
            self.uri.host().unwrap_or("")
        )
    }

    async fn run(self, format: Format, mut rx: mpsc::Receiver<Arc<Announcement>>) {
        while let Some(a) = rx.recv().await {
            let body = Bytes::from(match format {
                Format::Json => a.json(),
                Format::Slack => a.slack(),
            });
            let mut pause = BACKOFF;
            for attempt in 1..=ATTEMPTS {
                match self.attempt(body.clone()).await {
                    Ok(()) => {
                        self.metrics.notify.count(Outcome::Delivered);
                        break;
                    }
                    Err(why) if attempt < ATTEMPTS => {
                        self.metrics.notify.count(Outcome::Retried);
                        tracing::debug!(id = a.id, target = %self.shown(), attempt, why, "announcement failed; retrying");
                        tokio::time::sleep(pause).await;
                        pause *= 2;
                    }
                    Err(why) => {
                        self.metrics.notify.count(Outcome::Failed);
                        tracing::warn!(id = a.id, target = %self.shown(), attempts = ATTEMPTS, why, "an approval announcement could not be delivered");
                    }
                }
            }
        }
    }

    /// One POST; `Err` says why in words that carry no URL.
    async fn attempt(&self, body: Bytes) -> Result<(), &'static str> {
        let req = http::Request::post(self.uri.clone())
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::USER_AGENT, concat!("portcullis/", env!("CARGO_PKG_VERSION")))
            .body(Full::new(body))
            .map_err(|_| "the request could not be built")?;
        let exchange = async {
            let resp = self.http.request(req).await.map_err(|e| match e.is_connect() {
                true => "connection failed",
                false => "the exchange failed",
            })?;
            let status = resp.status();
            // Read (a bounded amount of) the answer so the connection can be reused.
            let _ = http_body_util::Limited::new(resp.into_body(), 64 * 1024).collect().await;
            match status.is_success() {
                true => Ok(()),
                false if status.is_server_error() => Err("the receiver answered 5xx"),
                false => Err("the receiver refused it (not 2xx)"),
            }
        };
        tokio::time::timeout(self.timeout, exchange).await.unwrap_or(Err("timed out"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_unset_or_empty_slack_variable_is_a_start_error_that_never_shows_a_value() {
        let targets =
            [Notify { target: Target::Slack { env: "PC_SLACK".into() }, timeout: Duration::from_secs(1) }];
        let m = Arc::new(Metrics::new());
        for value in [None, Some("  "), Some("not a url with T0KEN")] {
            let e =
                Notifier::start(&targets, m.clone(), |_| value.map(str::to_owned)).unwrap_err().to_string();
            assert!(
                e.starts_with("approvals.notify[0].slack_webhook_env: the environment variable PC_SLACK"),
                "{e}"
            );
            assert!(!e.contains("T0KEN"), "{e}");
        }
        assert!(
            Notifier::start(&targets, m, |_| Some("https://hooks.slack.com/services/T/B/X".into())).is_ok()
        );
    }
}
