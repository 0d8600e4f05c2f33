//! Destinations the user's own task names: the one excuse a flow has besides an egress `allow`.
//!
//! The task is read only from a channel the agent does not control (the hook's
//! `UserPromptSubmit`, `POST /sessions/{id}/task`: [`crate::call::ToolCall::user_task`]); the
//! task the agent writes (`_meta["portcullis/task"]`, `Portcullis-Task`) is never read here — a
//! hijacked agent would write the attacker's address into it. Of a free-text task only the
//! recipient positions of its requests are read ([`super::asks`]: "never send to eve@…" names
//! nobody); a front's `sends_to` list is read whole.
//!
//! What "names" means, positively:
//! - a **mailbox**: an address written whole (`sarah.connor@gmail.com`); a call's
//!   e-mail destination is named only when the argument string holding it is nothing but named
//!   mailboxes (a recipient, or a list split by `,`, `;` or spaces). A domain never names the
//!   mailboxes at it: `gmail.com` holds everybody's.
//! - a **host**: a URL's host or a bare host in the task (`files.client.example`), that host
//!   only (not its subdomains, not its parent), for a URL or bare host in the call whose every
//!   reading goes there;
//! - an **account**: an IBAN written in the task, the same account.
//!
//! Both sides are read by the one scanner egress reads arguments with
//! ([`crate::rules::egress::scan`]): a host is its canonical form as the receiving program
//! reads it (IDNA, so `Client.EXAMPLE` and fullwidth letters are `client.example`), a local
//! part is compared up to ASCII case, and a local part that is not ASCII names nothing. The
//! flow index's look-alike fold ([`crate::flows::fold`]) is deliberately not applied: there a false
//! match refuses, here it would excuse, and a look-alike host (Cyrillic `с` in `сlient.example`)
//! is another destination.

use std::ops::ControlFlow;

use crate::rules::destination::Host;
use crate::rules::egress::scan::{self, Found, What};

/// Mailboxes, hosts and accounts kept from one task (a task is at most 2 KiB).
const KEPT: usize = 64;

/// What the user's task names as destinations.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Named {
    /// Local part (ASCII lower case) and host.
    mailboxes: Vec<(String, Host)>,
    hosts: Vec<Host>,
    accounts: Vec<String>,
}

/// The characters of a local part as the egress scanner reads one (RFC 5322's atext and `.`).
fn local_ok(local: &str) -> bool {
    !local.is_empty()
        && local.len() <= 64
        && local.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-/=?^_`{|}~.".contains(&b))
}

/// Every destination the egress scanner reads in `text`, loose readings left out.
fn destinations(text: &str) -> Vec<What> {
    let mut all = Vec::new();
    let _ = scan::text(text, &String::new, &mut |f: Found| {
        if !f.loose && all.len() < KEPT {
            all.push(f.what);
        }
        ControlFlow::<()>::Continue(())
    });
    all
}

/// `token` as one mailbox: an ASCII local part, `@`, and what the scanner reads as the host
/// an address at it is delivered to, the token holding nothing else.
fn mailbox(token: &str) -> Option<(String, Host)> {
    let (local, _) = token.rsplit_once('@')?;
    if !local_ok(local) {
        return None;
    }
    match destinations(token).as_slice() {
        [What::Email(host)] => Some((local.to_ascii_lowercase(), host.clone())),
        _ => None,
    }
}

impl Named {
    /// What the user's free-text `task` asks to send to: the destinations in the recipient
    /// positions of its requests ([`super::asks`]), never one it only mentions.
    pub fn of(task: &str) -> Named {
        let mut named = Named::default();
        for run in super::asks::recipients(task) {
            named.read(&run);
        }
        named
    }

    /// The destinations a trusted front lists as where the user asks to send (`sends_to`),
    /// each read whole as the scanner reads it.
    pub fn listed<'a>(items: impl IntoIterator<Item = &'a str>) -> Named {
        let mut named = Named::default();
        for item in items {
            named.read(item);
        }
        named
    }

    /// Every destination in `text`, added.
    fn read(&mut self, text: &str) {
        let named = self;
        for what in destinations(text) {
            match what {
                What::Url { reading, .. } => {
                    for d in reading.destinations() {
                        named.host(d.host.clone());
                    }
                }
                What::Host(h) => named.host(h),
                What::Iban(a) if named.accounts.len() < KEPT && !named.accounts.contains(&a) => {
                    named.accounts.push(a)
                }
                What::Iban(_) | What::Email(_) => {}
            }
        }
        let words = text.split(|c: char| c.is_whitespace() || "\"'`,;:()<>[]{}|".contains(c));
        for word in words.filter(|w| w.contains('@')) {
            let word = word.trim_end_matches(['.', '!', '?']);
            if let Some(m) = mailbox(word) {
                if named.mailboxes.len() < KEPT && !named.mailboxes.contains(&m) {
                    named.mailboxes.push(m);
                }
            }
        }
    }

    /// Every destination `text` writes, asked for or not (what a later prompt that mentions a
    /// destination without asking for it withdraws).
    pub fn mentioned(text: &str) -> Named {
        let mut named = Named::default();
        named.read(text);
        named
    }

    /// Takes out every destination `other` holds.
    pub fn remove(&mut self, other: &Named) {
        self.mailboxes.retain(|m| !other.mailboxes.contains(m));
        self.hosts.retain(|h| !other.hosts.contains(h));
        self.accounts.retain(|a| !other.accounts.contains(a));
    }

    /// Both lists together (each still bounded).
    pub fn merge(&mut self, other: &Named) {
        for m in &other.mailboxes {
            if self.mailboxes.len() < KEPT && !self.mailboxes.contains(m) {
                self.mailboxes.push(m.clone());
            }
        }
        for h in &other.hosts {
            self.host(h.clone());
        }
        for a in &other.accounts {
            if self.accounts.len() < KEPT && !self.accounts.contains(a) {
                self.accounts.push(a.clone());
            }
        }
    }

    fn host(&mut self, h: Host) {
        if self.hosts.len() < KEPT && !self.hosts.contains(&h) {
            self.hosts.push(h);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.mailboxes.is_empty() && self.hosts.is_empty() && self.accounts.is_empty()
    }

    /// Whether `found`, found in the argument string `within`, is a destination the task names.
    pub fn names(&self, found: &Found, within: &str) -> bool {
        match &found.what {
            What::Url { reading, .. } => {
                let ds = reading.destinations();
                !ds.is_empty() && ds.iter().all(|d| self.hosts.contains(&d.host))
            }
            What::Host(h) => self.hosts.contains(h),
            What::Iban(a) => self.accounts.contains(a),
            What::Email(_) => self.only_mailboxes(within),
        }
    }

    /// Whether `address` (one mailbox, as written) is a named mailbox.
    pub fn names_mailbox(&self, address: &str) -> bool {
        mailbox(address).is_some_and(|m| self.mailboxes.contains(&m))
    }

    /// `within` is a list of named mailboxes and nothing else.
    fn only_mailboxes(&self, within: &str) -> bool {
        let mut tokens =
            within.split(|c: char| c.is_whitespace() || c == ',' || c == ';').filter(|t| !t.is_empty());
        let mut any = false;
        let all = tokens.all(|t| {
            any = true;
            mailbox(t).is_some_and(|m| self.mailboxes.contains(&m))
        });
        any && all
    }
}

#[cfg(test)]
#[path = "named_tests.rs"]
mod tests;
