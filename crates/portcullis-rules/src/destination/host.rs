//! Hosts as a resolver reads them: inet_aton numbers, bracketed IPv6, IDNA names.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// Where a connection goes, canonical: two spellings of one host are one value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// A DNS name: ASCII (IDNA, punycode), lower-case, no trailing dot, letters, digits, `-`
    /// and `_` in labels of 1 to 63 bytes.
    Domain(String),
    V4(Ipv4Addr),
    V6(Ipv6Addr),
}

/// How an IPv6 address carries an IPv4 one (see [`Host::embedded_v4`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Embedding {
    /// `::ffff:a.b.c.d`: a dual-stack socket connects to the IPv4 address itself.
    Mapped,
    /// `::a.b.c.d` (IPv4-compatible, deprecated), `64:ff9b::a.b.c.d` (NAT64, RFC 6052) and
    /// `2002:aabb:ccdd::/48` (6to4, RFC 3056): a translator or relay on the path may carry the
    /// connection to the IPv4 address.
    Translated,
}

impl Host {
    /// A host name as curl and `getaddrinfo` read it: an IPv4 number in any inet_aton spelling
    /// (`2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1`, one trailing dot allowed), else an
    /// IDNA domain name. Bracketed IPv6 is the caller's (it comes before the port split).
    pub fn from_name(text: &str) -> Result<Host, String> {
        match numeric_v4(text) {
            Some(a) => Ok(Host::V4(a)),
            None => domain(text),
        }
    }

    /// The inside of `[…]`: an IPv6 address, with an optional zone (`%eth0`, which picks an
    /// interface, not a host, so it is dropped).
    pub fn from_bracketed(inner: &str) -> Result<Host, String> {
        let (addr, zone) = match inner.split_once('%') {
            Some((addr, zone)) => (addr, Some(zone)),
            None => (inner, None),
        };
        if zone.is_some_and(str::is_empty) {
            return Err(format!("[{inner}]: empty IPv6 zone"));
        }
        addr.parse().map(Host::V6).map_err(|_| format!("[{inner}] is not an IPv6 address"))
    }

    /// The IPv4 address an IPv6 host also reaches, and how.
    pub fn embedded_v4(&self) -> Option<(Ipv4Addr, Embedding)> {
        let Host::V6(a) = self else { return None };
        if let Some(v4) = a.to_ipv4_mapped() {
            return Some((v4, Embedding::Mapped));
        }
        let s = a.segments();
        let low = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
        match s {
            // `::` and `::1` are IPv6's own unspecified and loopback addresses.
            [0, 0, 0, 0, 0, 0, 0, 0 | 1] => None,
            [0, 0, 0, 0, 0, 0, hi, lo] | [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => {
                Some((low(hi, lo), Embedding::Translated))
            }
            [0x2002, hi, lo, ..] => Some((low(hi, lo), Embedding::Translated)),
            _ => None,
        }
    }
}

/// As a URL writes it: a name, dotted IPv4, or bracketed IPv6.
impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Domain(d) => f.write_str(d),
            Host::V4(a) => write!(f, "{a}"),
            Host::V6(a) => write!(f, "[{a}]"),
        }
    }
}

/// inet_aton's reading (as curl's own normaliser does it): one to four parts, each decimal,
/// `0x` hex or `0` octal; all but the last at most 255, the last filling the remaining bytes.
fn numeric_v4(text: &str) -> Option<Ipv4Addr> {
    let text = text.strip_suffix('.').unwrap_or(text);
    let parts: Vec<u32> = text.split('.').map(number).collect::<Option<_>>()?;
    let (&last, init) = parts.split_last()?;
    if init.len() > 3 || init.iter().any(|&p| p > 0xff) {
        return None;
    }
    let bits = 32 - 8 * init.len() as u32;
    if bits < 32 && last >> bits != 0 {
        return None;
    }
    let high = init.iter().enumerate().fold(0u32, |acc, (i, &p)| acc | p << (24 - 8 * i as u32));
    Some(Ipv4Addr::from(high | last))
}

/// One inet_aton part. `0x` alone is 0, as inet_aton reads it (curl calls it a name, which
/// `getaddrinfo` then reads as 0 anyway).
fn number(part: &str) -> Option<u32> {
    let (digits, radix) = match part.get(..2) {
        Some("0x" | "0X") => (&part[2..], 16),
        _ if part.len() > 1 && part.starts_with('0') => (&part[1..], 8),
        _ => (part, 10),
    };
    if digits.is_empty() {
        return (radix == 16).then_some(0);
    }
    if !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u32::from_str_radix(digits, radix).ok()
}

/// A DNS name through IDNA (UTS 46, as WHATWG and libidn2 map it: case folded, `。` to `.`,
/// punycode), then proven a name a resolver looks up: ASCII labels of letters, digits, `-`, `_`.
fn domain(text: &str) -> Result<Host, String> {
    let ascii = idna::domain_to_ascii_cow(text.as_bytes(), idna::AsciiDenyList::URL)
        .map_err(|_| format!("{text:?} is not a valid host name (IDNA)"))?;
    let name = ascii.strip_suffix('.').unwrap_or(&ascii);
    let label_ok = |l: &str| {
        (1..=63).contains(&l.len())
            && l.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
    };
    if name.len() > 253 || !name.split('.').all(label_ok) {
        return Err(format!("{text:?} is not a host name a resolver looks up"));
    }
    Ok(Host::Domain(name.to_owned()))
}
