//! What one `egress:` entry names: a host or domain (and its subdomains), an address range, a
//! category of special destinations, e-mail domains, or IBAN-like accounts.

use std::net::IpAddr;

use super::iban;
use super::scan::What;
use super::special::{self, Special};
use crate::destination::{DomainPattern, Embedding, Host, HostMatch, Reading};

/// One entry, compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `docs.rs` (and its subdomains), `*.docs.rs`, an address in any spelling: hosts, URLs and
    /// the domains e-mail is delivered to.
    Host(DomainPattern),
    /// `10.0.0.0/8`, `fd00::/8`.
    Cidr { net: IpAddr, bits: u8 },
    /// `loopback`, `private`, `link-local`, `metadata`.
    Special(Special),
    /// `email` (any address) or `email:DOMAIN` (addresses at a domain and its subdomains).
    Email(Option<DomainPattern>),
    /// `iban` (any account) or `iban:ACCOUNT` (one account, spaces ignored).
    Iban(Option<String>),
}

impl Target {
    pub fn parse(text: &str) -> Result<Target, String> {
        let text = text.trim();
        if let Some(s) = Special::parse(text) {
            return Ok(Target::Special(s));
        }
        match text.split_once(':') {
            _ if text == "email" => return Ok(Target::Email(None)),
            _ if text == "iban" => return Ok(Target::Iban(None)),
            Some(("email", domain)) => return DomainPattern::parse(domain).map(|p| Target::Email(Some(p))),
            Some(("iban", account)) => {
                let account: String =
                    account.chars().filter(|c| *c != ' ').collect::<String>().to_uppercase();
                return match iban::valid(account.as_bytes()) {
                    true => Ok(Target::Iban(Some(account))),
                    false => Err(format!("{account:?} is not an IBAN (its checksum fails)")),
                };
            }
            _ => {}
        }
        if let Some((net, bits)) = text.split_once('/') {
            let net: IpAddr = net
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse()
                .map_err(|_| format!("{text:?}: {net:?} is not an IP address"))?;
            let max = if net.is_ipv4() { 32 } else { 128 };
            let bits: u8 = bits
                .parse()
                .ok()
                .filter(|b| *b <= max)
                .ok_or_else(|| format!("{text:?}: the prefix length must be 0 to {max}"))?;
            return Ok(Target::Cidr { net, bits });
        }
        if text.contains("://") || text.contains('@') {
            return Err(format!("{text:?}: name a host (docs.rs), a range (10.0.0.0/8), a category (loopback, private, link-local, metadata), email:DOMAIN or iban"));
        }
        DomainPattern::parse(text).map(Target::Host)
    }

    /// Whether this entry names the destination found.
    pub fn matches(&self, what: &What) -> HostMatch {
        match (self, what) {
            (Target::Iban(None), What::Iban(_)) => HostMatch::Yes,
            (Target::Iban(Some(a)), What::Iban(b)) => yes(a == b),
            (Target::Iban(_), _) | (_, What::Iban(_)) => HostMatch::No,
            (Target::Email(None), What::Email(_)) => HostMatch::Yes,
            (Target::Email(Some(p)), What::Email(h)) => p.matches_host(h),
            (Target::Email(_), _) => HostMatch::No,
            (Target::Host(p), What::Url { reading, .. }) => p.matches(reading),
            (_, What::Url { reading, .. }) => over_reading(reading, |h| self.matches_host(h)),
            (_, What::Host(h) | What::Email(h)) => self.matches_host(h),
        }
    }

    fn matches_host(&self, host: &Host) -> HostMatch {
        match self {
            Target::Host(p) => p.matches_host(host),
            Target::Special(s) => yes(special::of(host) == Some(*s)),
            Target::Cidr { net, bits } => match (net, host) {
                (IpAddr::V4(n), Host::V4(a)) => {
                    yes(within(n.to_bits().into(), a.to_bits().into(), *bits, 32))
                }
                (IpAddr::V6(n), Host::V6(a)) => yes(within(n.to_bits(), a.to_bits(), *bits, 128)),
                (IpAddr::V4(n), Host::V6(_)) => match host.embedded_v4() {
                    Some((a, how)) if within(n.to_bits().into(), a.to_bits().into(), *bits, 32) => {
                        match how {
                            Embedding::Mapped => HostMatch::Yes,
                            Embedding::Translated => HostMatch::Possibly,
                        }
                    }
                    _ => HostMatch::No,
                },
                _ => HostMatch::No,
            },
            Target::Email(_) | Target::Iban(_) => HostMatch::No,
        }
    }
}

/// One reading: its answer; readings that disagree: yes when all match, possibly when some
/// may; no reading: possibly (enough for a deny or an ask, never for an allow).
fn over_reading(reading: &Reading, each: impl Fn(&Host) -> HostMatch) -> HostMatch {
    let all: Vec<HostMatch> = reading.destinations().iter().map(|d| each(&d.host)).collect();
    match reading {
        Reading::One(_) => all[0],
        _ if !all.is_empty() && all.iter().all(|m| *m == HostMatch::Yes) => HostMatch::Yes,
        Reading::Ambiguous(_) if all.iter().all(|m| *m == HostMatch::No) => HostMatch::No,
        _ => HostMatch::Possibly,
    }
}

fn within(net: u128, addr: u128, bits: u8, width: u8) -> bool {
    let shift = u32::from(width - bits);
    bits == 0 || (net >> shift) == (addr >> shift)
}

fn yes(b: bool) -> HostMatch {
    if b {
        HostMatch::Yes
    } else {
        HostMatch::No
    }
}
