//! Destinations no tool with outward reach is sent by default: cloud metadata, loopback,
//! private and link-local addresses, read from the canonical [`Host`] (every spelling of an
//! address is one value there, and IPv6 forms that carry an IPv4 address are judged as it).

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

use crate::destination::Host;

/// Why a destination is refused without configuration. Ordered by gravity (`Private` lowest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Special {
    /// RFC 1918, RFC 6598 shared space, IPv6 unique-local, and the names that only resolve
    /// inside a site (`.internal`, `.local`, `.home.arpa`, a single label).
    Private,
    /// 169.254/16 and fe80::/10: the link the host sits on.
    LinkLocal,
    /// 127/8, `::1`, `0.0.0.0` and `::` (which connect to the host itself), `localhost`.
    Loopback,
    /// A cloud's instance metadata service: credentials of the machine the tool runs on.
    Metadata,
}

impl Special {
    /// The word an `egress:` rule names it by, and the rule a built-in refusal reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Special::Private => "private",
            Special::LinkLocal => "link-local",
            Special::Loopback => "loopback",
            Special::Metadata => "metadata",
        }
    }

    pub fn parse(word: &str) -> Option<Special> {
        Some(match word {
            "private" => Special::Private,
            "link-local" => Special::LinkLocal,
            "loopback" => Special::Loopback,
            "metadata" => Special::Metadata,
            _ => return None,
        })
    }
}

impl fmt::Display for Special {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Special::Private => "a private-network address",
            Special::LinkLocal => "a link-local address",
            Special::Loopback => "this machine (loopback)",
            Special::Metadata => "a cloud metadata endpoint",
        })
    }
}

/// Metadata services by address: AWS/GCP/Azure/OpenStack/DigitalOcean (169.254.169.254), AWS
/// ECS task metadata (169.254.170.2), EKS pod identity (169.254.170.23), Alibaba
/// (100.100.100.200), Azure's wire server (168.63.129.16), Oracle (192.0.0.192).
const METADATA_V4: &[[u8; 4]] = &[
    [169, 254, 169, 254],
    [169, 254, 170, 2],
    [169, 254, 170, 23],
    [100, 100, 100, 200],
    [168, 63, 129, 16],
    [192, 0, 0, 192],
];

/// AWS's IPv6 instance metadata (fd00:ec2::254) and EKS pod identity (fd00:ec2::23).
const METADATA_V6: &[Ipv6Addr] =
    &[Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254), Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23)];

/// Metadata services by name (canonical: lower case, no trailing dot). `metadata` and
/// `instance-data` are single labels the clouds' resolvers complete (GCE's search path holds
/// `google.internal`; EC2's `ec2.internal`).
const METADATA_NAMES: &[&str] = &[
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.tencentyun.com",
];

/// Suffixes that only resolve inside a site: `.internal` (ICANN's private-use TLD), `.local`
/// (mDNS, RFC 6762), `.home.arpa` (RFC 8375), `.intranet`/`.corp`/`.lan` are not reserved and
/// resolve publicly if registered, so they are not here.
const SITE_SUFFIXES: &[&str] = &["internal", "local", "home.arpa"];

/// The special category of `host`, if any: the gravest that applies.
pub fn of(host: &Host) -> Option<Special> {
    match host {
        Host::V4(a) => of_v4(*a),
        Host::V6(a) => {
            let own = of_v6(*a);
            // An IPv6 form carrying an IPv4 address reaches it (directly or through a
            // translator): judged as the worse of the two.
            let carried = host.embedded_v4().and_then(|(v4, _)| of_v4(v4));
            own.max(carried)
        }
        Host::Domain(name) => of_name(name),
    }
}

/// Whether a single ASCII label (no dot), read as a host, is graver than private: exactly
/// `of(&Host::Domain(label.to_ascii_lowercase())) > Some(Special::Private)`, without the
/// allocation (the scan's pre-filter asks it of every key and single-word value).
pub(super) fn grave_label(label: &str) -> bool {
    METADATA_NAMES.iter().any(|n| n.eq_ignore_ascii_case(label)) || label.eq_ignore_ascii_case("localhost")
}

fn of_v4(a: Ipv4Addr) -> Option<Special> {
    let o = a.octets();
    if METADATA_V4.contains(&o) {
        Some(Special::Metadata)
    } else if a.is_loopback() || a.is_unspecified() {
        Some(Special::Loopback)
    } else if a.is_link_local() {
        Some(Special::LinkLocal)
    } else if a.is_private() || (o[0] == 100 && (64..128).contains(&o[1])) {
        Some(Special::Private)
    } else {
        None
    }
}

fn of_v6(a: Ipv6Addr) -> Option<Special> {
    let s = a.segments();
    if METADATA_V6.contains(&a) {
        Some(Special::Metadata)
    } else if a.is_loopback() || a.is_unspecified() {
        Some(Special::Loopback)
    } else if s[0] & 0xffc0 == 0xfe80 {
        Some(Special::LinkLocal)
    } else if s[0] & 0xfe00 == 0xfc00 || s[0] & 0xffc0 == 0xfec0 {
        // Unique-local fc00::/7, and the deprecated site-local fec0::/10 some stacks still route.
        Some(Special::Private)
    } else {
        None
    }
}

fn of_name(name: &str) -> Option<Special> {
    let under = |suffix: &str| name == suffix || name.strip_suffix(suffix).is_some_and(|h| h.ends_with('.'));
    if METADATA_NAMES.contains(&name) {
        Some(Special::Metadata)
    } else if under("localhost") {
        // RFC 6761: `localhost` and every name under it resolve to loopback (curl, glibc, browsers).
        Some(Special::Loopback)
    } else if SITE_SUFFIXES.iter().any(|s| under(s)) || !name.contains('.') {
        Some(Special::Private)
    } else {
        None
    }
}
