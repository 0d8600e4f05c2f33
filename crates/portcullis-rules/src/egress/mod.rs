//! Egress: where a call's arguments send the tool. Every URL, bare host, e-mail address and
//! IBAN-like account in any argument ([`scan`]) meets the `egress:` rules (deny dominates ask
//! dominates allow, across the config's, the upstream's and the agent's), then the built-in
//! defaults: a tool with outward reach ([`Reach`]) is never sent to cloud metadata, loopback,
//! private or link-local destinations ([`Special`]), and no tool but a file tool is sent to
//! metadata — at every posture but yolo. An egress `allow` only lifts a default; it never allows
//! a call the other rules ask or deny.
//!
//! Hosts are read by [`crate::destination`], the one reading of URLs and hosts Layer 1 has
//! (WHATWG and curl; inet_aton numbers, IPv6 embeddings, IDNA).

mod iban;
mod mail;
pub mod quiet;
mod reach;
mod redirect;
pub mod scan;
mod special;
mod target;
mod unescape;
mod words;

#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod spelling_tests;
#[cfg(test)]
mod tests;

use std::ops::ControlFlow;

use serde_json::Value;

use crate::destination::{Host, HostMatch, Reading};
use crate::glob::{Flavour, Glob};
use crate::{Decision, Effect, Origin, Posture, Scope};
pub use reach::{Outward, Reach};
use scan::{Found, What};
pub use special::Special;
pub use target::Target;

/// One `egress:` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressRule {
    pub effect: Effect,
    pub target: Target,
    pub scope: Scope,
    /// Only calls to this upstream (an `upstreams.NAME.egress:` entry).
    pub upstream: Option<String>,
    /// As written, for reasons: `egress.deny: evil.example`.
    pub source: String,
}

/// A configured sink: tools with outward reach whatever their kind (`egress.sinks:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sink {
    pub tools: Glob,
    pub upstream: Option<String>,
}

impl Sink {
    pub fn new(glob: &str, upstream: Option<String>) -> Sink {
        Sink { tools: Glob::new(glob, Flavour::Text), upstream }
    }
}

/// The compiled `egress:` rules and sinks of every scope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Egress {
    pub rules: Vec<EgressRule>,
    pub sinks: Vec<Sink>,
    /// The configured upstreams (which may hold an `egress:` block): a refusal of a call to one
    /// names the line that allows the destination there only.
    pub upstreams: Vec<String>,
}

impl Egress {
    /// Whether a call's arguments must be read: the defaults hold at every posture but yolo,
    /// configured rules at every posture.
    pub fn active(&self, posture: Posture) -> bool {
        posture != Posture::Yolo || !self.rules.is_empty()
    }

    /// The configured sink that marks `qualified` on `upstream`, if one does.
    pub fn sink(&self, upstream: &str, qualified: &str) -> Option<&Sink> {
        self.sinks
            .iter()
            .filter(|s| s.upstream.as_deref().is_none_or(|u| u == upstream))
            .find(|s| s.tools.matches(qualified))
    }

    /// The refusal (ask or deny) egress makes of a call with `args`, or `None` when every
    /// destination in them may be sent. The first deny ends the scan.
    pub fn decide(&self, upstream: &str, args: &Value, reach: &Reach, posture: Posture) -> Option<Decision> {
        if matches!(reach, Reach::Local) && self.rules.is_empty() {
            return None;
        }
        self.worst(upstream, reach, posture, |judge| {
            walk_reach(reach, judge)?;
            scan::walk(args, judge)
        })
    }

    /// The refusal egress makes of a redirect to `location` (a 3xx answer's `Location`), which
    /// the client follows as a fetch.
    pub fn decide_redirect(&self, upstream: &str, location: &str, posture: Posture) -> Option<Decision> {
        let reach = Reach::Outward(Outward::Redirect);
        let follows = redirect::follow(location);
        if posture != Posture::Yolo {
            if let Some(why) = follows.iter().find_map(|f| match f {
                redirect::Follow::Unresolvable(why) => Some(why),
                _ => None,
            }) {
                let shown: String = location.chars().take(120).collect();
                return Some(Decision {
                    effect: Effect::Deny,
                    rule: UNREADABLE_RULE.to_owned(),
                    scope: Scope::Builtin,
                    origin: Origin::Floor,
                    reason: format!(
                        "the redirect to {shown:?} cannot be resolved as a URL ({why}), and a client \
                         may still follow it"
                    ),
                    prefilter: None,
                });
            }
        }
        // The Location as written (curl and urllib read an absolute one by RFC 3986), then
        // every place the standard's resolution leaves for.
        let at = || "(its Location header)".to_owned();
        self.worst(upstream, &reach, posture, |judge| {
            scan::text(location, &at, judge)?;
            for f in &follows {
                if let redirect::Follow::Leaves(to) = f {
                    scan::text(to, &at, judge)?;
                }
            }
            ControlFlow::Continue(())
        })
    }

    /// The worst decision over the destinations `scan` finds.
    fn worst(
        &self,
        upstream: &str,
        reach: &Reach,
        posture: Posture,
        scan: impl FnOnce(&mut dyn FnMut(Found) -> ControlFlow<()>) -> ControlFlow<()>,
    ) -> Option<Decision> {
        let mut worst: Option<Decision> = None;
        let mut judge = |found: Found| {
            if let Some(d) = self.judge(upstream, &found, reach, posture) {
                let deny = d.effect == Effect::Deny;
                worst = Some(match worst.take() {
                    Some(w) => w.worse(d),
                    None => d,
                });
                if deny {
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        };
        let _ = scan(&mut judge);
        worst
    }

    /// One destination: the configured rules that name it, then the default for its category.
    fn judge(&self, upstream: &str, found: &Found, reach: &Reach, posture: Posture) -> Option<Decision> {
        if matches!(reach, Reach::Local) {
            // A file tool's arguments are contents and paths, not destinations: only what the
            // operator named is met there.
            return self.configured(upstream, found).filter(|(e, _, _)| *e > Effect::Allow).map(|c| c.2);
        }
        let configured = self.configured(upstream, found).map(|c| c.2);
        if let Some(d) = configured.as_ref().filter(|d| d.effect == Effect::Deny) {
            return Some(d.clone());
        }
        // An allow that surely names the destination lifts the default (never a deny or ask).
        let lifted = self.rules.iter().any(|r| {
            r.effect == Effect::Allow
                && r.upstream.as_deref().is_none_or(|u| u == upstream)
                && r.target.matches(&found.what) == HostMatch::Yes
        });
        let default = if lifted { None } else { self.floor(upstream, found, reach, posture) };
        let asked = configured.filter(|d| d.effect == Effect::Ask);
        match (asked, default) {
            (Some(a), Some(d)) => Some(a.worse(d)),
            (a, d) => a.or(d),
        }
    }

    /// The strongest configured entry naming the destination: its effect (a URL no reader can
    /// read only possibly matches, which asks; a possible match allows nothing), how it
    /// matched, and the decision.
    fn configured(&self, upstream: &str, found: &Found) -> Option<(Effect, HostMatch, Decision)> {
        self.rules
            .iter()
            .filter(|r| r.upstream.as_deref().is_none_or(|u| u == upstream))
            .filter_map(|r| {
                let m = r.target.matches(&found.what);
                // Some reader surely goes there (the readings disagree): the entry's effect; no
                // reader finds a host at all: asked.
                let unread = matches!(&found.what, What::Url { reading: Reading::Unparsable(_), .. });
                let effect = match (m, r.effect) {
                    (HostMatch::No, _) | (HostMatch::Possibly, Effect::Allow) => return None,
                    (HostMatch::Possibly, _) if unread => Effect::Ask,
                    (_, e) => e,
                };
                Some((effect, m, r))
            })
            .max_by_key(|(e, _, r)| (*e, r.scope))
            .map(|(effect, m, r)| {
                let verb = match (effect, m) {
                    (Effect::Deny, _) => "is denied by",
                    (Effect::Ask, HostMatch::Possibly) => "may be named by, so it is asked under",
                    (Effect::Ask, _) => "needs approval by",
                    _ => "is allowed by",
                };
                let reason = format!("{} {verb} {}", describe(found), r.source);
                (
                    effect,
                    m,
                    Decision {
                        effect,
                        rule: r.source.clone(),
                        scope: r.scope,
                        origin: Origin::of(r.scope),
                        reason,
                        prefilter: None,
                    },
                )
            })
    }

    /// The built-in refusal of a special destination: metadata for every tool but a file
    /// tool, loopback, private and link-local for a tool with outward reach; none at yolo.
    fn floor(&self, upstream: &str, found: &Found, reach: &Reach, posture: Posture) -> Option<Decision> {
        if posture == Posture::Yolo {
            return None;
        }
        if let Some(refused) = unreadable(found, reach) {
            return Some(refused);
        }
        let hosts: Vec<&Host> = match &found.what {
            // A single label is a site-local name only where it is looked up: a scheme that
            // connects (`http://db/`) or an explicit port, not a bucket (`s3://bucket`).
            What::Url { reading, .. } => reading
                .destinations()
                .iter()
                .filter(|d| d.port.is_some() || !matches!(&d.host, Host::Domain(n) if !n.contains('.')))
                .map(|d| &d.host)
                .collect(),
            What::Host(h) | What::Email(h) => vec![h],
            What::Iban(_) => return None,
        };
        let (special, host) =
            hosts.into_iter().filter_map(|h| special::of(h).map(|s| (s, h))).max_by_key(|(s, _)| *s)?;
        let refused = match reach {
            Reach::Outward(_) => true,
            // A loose reading (a whole value `metadata`) is a word to a tool nothing marks.
            Reach::Unmarked => {
                special == Special::Metadata
                    && !(found.loose && matches!(found.what, What::Host(Host::Domain(_))))
            }
            Reach::Local => false,
        };
        if !refused {
            return None;
        }
        let allow = host.to_string();
        let allow = allow.trim_start_matches('[').trim_end_matches(']');
        let only_there = match self.upstreams.iter().any(|u| u == upstream) {
            true => format!(" (under upstreams.{upstream} to allow it only there)"),
            false => String::new(),
        };
        let reason = format!(
            "{} is {special}, and {} is never sent there by default; if it is meant, allow it with \
             `egress: {{allow: [\"{allow}\"]}}`{only_there}",
            describe(found),
            reach.describe(),
        );
        Some(Decision {
            effect: Effect::Deny,
            rule: format!("egress: {}", special.as_str()),
            scope: Scope::Builtin,
            origin: Origin::Floor,
            reason,
            prefilter: None,
        })
    }
}

/// A URL no reader understands, sent by a tool with outward reach: refused, since only a URL
/// read can be judged (urllib takes `http://127.0.0.1%3a8080/` to loopback; curl expands
/// `http://12[6-7].0.0.1/`). Positively: a URL passes the floor only through its readings.
fn unreadable(found: &Found, reach: &Reach) -> Option<Decision> {
    let What::Url { reading: Reading::Unparsable(_), .. } = &found.what else { return None };
    if !matches!(reach, Reach::Outward(_)) {
        return None;
    }
    let reason = format!(
        "{}, and {} is never sent to a URL whose destination cannot be read; write it plainly \
         (`scheme://host:port/path`)",
        describe(found),
        reach.describe(),
    );
    Some(Decision {
        effect: Effect::Deny,
        rule: UNREADABLE_RULE.to_owned(),
        scope: Scope::Builtin,
        origin: Origin::Floor,
        reason,
        prefilter: None,
    })
}

/// The rule a refusal of a URL no reader reads reports.
pub const UNREADABLE_RULE: &str = "egress: unreadable URL";

/// The destinations a reach itself names (a shell command's connections).
fn walk_reach(reach: &Reach, each: &mut dyn FnMut(Found) -> ControlFlow<()>) -> ControlFlow<()> {
    match reach {
        Reach::Outward(reach::Outward::Shell(dests)) => {
            for d in dests {
                each(d.clone())?;
            }
            ControlFlow::Continue(())
        }
        _ => ControlFlow::Continue(()),
    }
}

/// How a reason names a destination and where it was found.
fn describe(found: &Found) -> String {
    let at = match found.pointer.as_str() {
        "" => "the arguments".to_owned(),
        p if p.starts_with('(') => p.trim_matches(['(', ')']).to_owned(),
        p => format!("argument {p}"),
    };
    match &found.what {
        What::Url { text, reading } => {
            let shown: String = text.chars().take(120).collect();
            match reading.doubt() {
                Some(doubt) => format!("the URL {shown} in {at} ({doubt})"),
                None => format!("the URL {shown} in {at}"),
            }
        }
        What::Host(h) => format!("the host {h} in {at}"),
        What::Email(h) => format!("an e-mail address at {h} in {at}"),
        What::Iban(a) => {
            let tail = &a[a.len().saturating_sub(4)..];
            format!("the account {}…{tail} (IBAN) in {at}", &a[..4.min(a.len())])
        }
    }
}
