//! `approvals.notify` and `approvals.console_url`: where each parked ask is announced (a JSON
//! webhook, a Slack incoming webhook whose URL is a secret read from a variable), and the
//! console link the announcement carries.

use std::time::Duration;

use serde::Deserialize;

use crate::config::raw::Scalar;
use crate::config::Problems;

/// One place an ask is announced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A JSON document POSTed to this URL (http or https).
    Webhook(url::Url),
    /// A Slack incoming webhook: its URL is a credential, read from this variable at start.
    Slack { env: String },
}

impl Target {
    /// The `outcome`-independent label logs use: never the URL's path or query.
    pub fn kind(&self) -> &'static str {
        match self {
            Target::Webhook(_) => "webhook",
            Target::Slack { .. } => "slack",
        }
    }
}

/// One validated `approvals.notify` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notify {
    pub target: Target,
    /// How long one delivery attempt may take.
    pub timeout: Duration,
}

/// The default attempt timeout.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// An entry as written: exactly one of `webhook` or `slack_webhook_env`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    webhook: Option<String>,
    slack_webhook_env: Option<String>,
    timeout: Option<Scalar>,
}

/// Validates `approvals.notify`; every problem is reported under its entry's path.
pub(crate) fn compile(raw: Vec<Raw>, p: &mut Problems) -> Vec<Notify> {
    let mut out = Vec::new();
    for (i, r) in raw.into_iter().enumerate() {
        let path = format!("approvals.notify[{i}]");
        let timeout = p.duration(&format!("{path}.timeout"), r.timeout, TIMEOUT);
        if timeout.is_zero() {
            p.add(format!("{path}.timeout"), "must be more than 0");
        }
        let target = match (r.webhook, r.slack_webhook_env) {
            (Some(u), None) => match web_url(&u) {
                Ok(u) => Target::Webhook(u),
                Err(why) => {
                    p.add(format!("{path}.webhook"), why);
                    continue;
                }
            },
            (None, Some(env)) => {
                if env.is_empty() || !env.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    p.add(
                        format!("{path}.slack_webhook_env"),
                        format!("{env:?} is not an environment variable name"),
                    );
                    continue;
                }
                Target::Slack { env }
            }
            _ => {
                p.add(&path, "exactly one of webhook: URL or slack_webhook_env: VARIABLE");
                continue;
            }
        };
        out.push(Notify { target, timeout });
    }
    out
}

/// An absolute http(s) URL with a host; anything else is refused with the reason. The text of a
/// refused URL is never echoed (a webhook URL may carry its token).
pub fn web_url(text: &str) -> Result<url::Url, String> {
    let u = url::Url::parse(text).map_err(|e| format!("not an absolute URL ({e})"))?;
    if !matches!(u.scheme(), "http" | "https") {
        return Err(format!("the scheme is {:?}: http or https only", u.scheme()));
    }
    if u.host_str().is_none_or(str::is_empty) {
        return Err("the URL names no host".into());
    }
    Ok(u)
}

/// Validates `approvals.console_url`: the console page's URL, an ask's link is it with
/// `#approval-{id}` appended.
pub(crate) fn console_url(raw: Option<String>, p: &mut Problems) -> Option<url::Url> {
    let text = raw?;
    web_url(&text).map_err(|why| p.add("approvals.console_url", why)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compiled(yaml: &str) -> (Vec<Notify>, Vec<String>) {
        let raw: Vec<Raw> = serde_saphyr::from_str(yaml).unwrap_or_else(|e| panic!("{e}"));
        let mut p = Problems::default();
        let out = compile(raw, &mut p);
        (out, p.problems.iter().map(|p| format!("{}: {}", p.path, p.message)).collect())
    }

    #[test]
    fn each_entry_is_a_webhook_url_or_a_slack_variable_and_every_mistake_is_reported() {
        let (ok, problems) = compiled(
            "- { webhook: \"https://hooks.example.com/a/b?t=1\" }\n- { slack_webhook_env: SLACK_URL, timeout: 2s }\n",
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[0].timeout, TIMEOUT);
        assert_eq!(
            ok[1],
            Notify { target: Target::Slack { env: "SLACK_URL".into() }, timeout: Duration::from_secs(2) }
        );
        let (bad, problems) = compiled(
            "- { webhook: \"ftp://x/y\" }\n- { webhook: \"/relative\" }\n- { slack_webhook_env: \"A-B\" }\n\
             - { webhook: \"https://x/\", slack_webhook_env: V }\n- {}\n- { webhook: \"http://x/\", timeout: 0s }\n",
        );
        assert_eq!(bad.len(), 1, "only the last is usable: {bad:?}");
        let lines = problems.join("\n");
        for path in [
            "[0].webhook",
            "[1].webhook",
            "[2].slack_webhook_env",
            "[3]: exactly one",
            "[4]: exactly one",
            "[5].timeout",
        ] {
            assert!(lines.contains(&format!("approvals.notify{path}")), "{path} missing in:\n{lines}");
        }
    }

    #[test]
    fn a_refused_webhook_url_is_never_echoed_in_the_problem() {
        let (_, problems) = compiled("- { webhook: \"gopher://hooks.example.com/T0SECRET\" }\n");
        assert_eq!(problems.len(), 1);
        assert!(!problems[0].contains("T0SECRET"), "{problems:?}");
    }
}
