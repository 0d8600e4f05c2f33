//! The `approvals:` section: how asks reach a human, and how long waivers live.

use std::time::Duration;

use serde::Deserialize;

use super::raw::Scalar;
use super::Problems;

/// `approvals.notify` (its own file: config/mod.rs is full).
#[path = "notify.rs"]
pub mod notify;

/// How asks reach a human (`approvals.channel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Channel {
    /// The client's user when the client can elicit, else the operator API when an admin token
    /// is configured, else headless.
    #[default]
    Auto,
    /// The client's user only: a client that cannot elicit gets the headless refusal.
    Elicitation,
    /// Parked at the admin API until decided or timed out.
    Api,
    /// Nobody can be asked: every ask is refused.
    None,
}

impl Channel {
    pub fn parse(s: &str) -> Option<Channel> {
        Some(match s {
            "auto" => Channel::Auto,
            "elicitation" => Channel::Elicitation,
            "api" => Channel::Api,
            "none" => Channel::None,
            _ => return None,
        })
    }
}

/// What a flag on an address-keyed caller (an anonymous agent known only by its peer address,
/// `approvals.flag.address`) holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlagAddress {
    /// The address's sessions that were refused (each refused session is held at its first
    /// refusal once the address is flagged), its calls without a session, and every session
    /// once [`Settings::flag_consecutive`] of its sessions are held: one careless agent does not
    /// lock out every agent on the machine, and rotating session ids still meets a human.
    #[default]
    Sessions,
    /// Every call from the address, in any session (an address is one agent).
    All,
}

/// Validated `approvals:` settings.
#[derive(Debug, Clone)]
pub struct Settings {
    pub channel: Channel,
    pub timeout: Duration,
    /// How often a waiting call's stream says it is still there.
    pub keepalive: Duration,
    pub waiver_capacity: u64,
    pub waiver_idle: Duration,
    /// Refusals in a row that flag a session.
    pub flag_consecutive: u32,
    /// Refusals in all that flag a session.
    pub flag_total: u32,
    /// What a flagged address holds.
    pub flag_address: FlagAddress,
    /// Asks parked for an operator at once; beyond it a call is refused, never parked.
    pub max_pending: usize,
    /// The variable holding the key modern-era approval states are sealed with; required when
    /// replicas share state (each would draw its own key otherwise).
    pub seal_key_env: Option<String>,
    /// Where each parked ask is announced (`approvals.notify`).
    pub notify: Vec<notify::Notify>,
    /// The console page an announcement links to (`approvals.console_url`).
    pub console_url: Option<url::Url>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            channel: Channel::Auto,
            timeout: Duration::from_secs(120),
            keepalive: Duration::from_secs(10),
            waiver_capacity: 10_000,
            waiver_idle: Duration::from_secs(3600),
            flag_consecutive: 3,
            flag_total: 20,
            flag_address: FlagAddress::Sessions,
            max_pending: 256,
            seal_key_env: None,
            notify: Vec::new(),
            console_url: None,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    channel: Option<String>,
    timeout: Option<Scalar>,
    keepalive: Option<Scalar>,
    waivers: Option<RawWaivers>,
    flag: Option<RawFlag>,
    max_pending: Option<u64>,
    seal_key_env: Option<String>,
    #[serde(default)]
    notify: Vec<notify::Raw>,
    console_url: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFlag {
    consecutive: Option<u32>,
    total: Option<u32>,
    address: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWaivers {
    capacity: Option<u64>,
    idle: Option<Scalar>,
}

pub(crate) fn compile(raw: Raw, p: &mut Problems) -> Settings {
    let d = Settings::default();
    let channel = match raw.channel.as_deref() {
        None => d.channel,
        Some(c) => Channel::parse(c).unwrap_or_else(|| {
            p.add("approvals.channel", format!("{c:?}: one of auto, elicitation, api, none"));
            d.channel
        }),
    };
    let waivers = raw.waivers.unwrap_or_default();
    let flag = raw.flag.unwrap_or_default();
    let s = Settings {
        channel,
        timeout: p.duration("approvals.timeout", raw.timeout, d.timeout),
        keepalive: p.duration("approvals.keepalive", raw.keepalive, d.keepalive),
        waiver_capacity: waivers.capacity.unwrap_or(d.waiver_capacity),
        waiver_idle: p.duration("approvals.waivers.idle", waivers.idle, d.waiver_idle),
        flag_consecutive: flag.consecutive.unwrap_or(d.flag_consecutive),
        flag_total: flag.total.unwrap_or(d.flag_total),
        flag_address: match flag.address.as_deref() {
            None | Some("sessions") => FlagAddress::Sessions,
            Some("all") => FlagAddress::All,
            Some(other) => {
                p.add("approvals.flag.address", format!("{other:?}: one of sessions, all"));
                d.flag_address
            }
        },
        max_pending: raw.max_pending.map_or(d.max_pending, |n| n as usize),
        seal_key_env: raw.seal_key_env,
        notify: notify::compile(raw.notify, p),
        console_url: notify::console_url(raw.console_url, p),
    };
    if let Some(v) = &s.seal_key_env {
        if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            p.add("approvals.seal_key_env", format!("{v:?} is not an environment variable name"));
        }
    }
    if s.max_pending == 0 {
        p.add("approvals.max_pending", "must be at least 1");
    }
    if s.flag_consecutive == 0 || s.flag_total == 0 {
        p.add("approvals.flag", "consecutive and total must be at least 1");
    }
    if s.keepalive.is_zero() {
        p.add("approvals.keepalive", "must be more than 0");
    }
    if s.timeout.is_zero() {
        p.add("approvals.timeout", "must be more than 0");
    }
    s
}
