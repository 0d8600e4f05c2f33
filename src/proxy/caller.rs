//! Who is calling, in which session and mode, read from the request once: the agent, the
//! principal the breakers and budgets count, the session key (bound to the caller when the
//! caller picked the id), the `Portcullis-Mode` header.

use std::sync::Arc;

use super::Req;
use crate::mcp::era::HEADER_SESSION;
use crate::runtime::Shared;

/// The header an agent may send to name its session where the protocol has none (the modern
/// era, plain HTTP tools): waivers and the repeated-denial breaker are kept per session.
pub const HEADER_AGENT_SESSION: &str = "x-portcullis-session";

/// The headers read from every request, as names made at compile time: a lookup by text parses
/// the name first, which cost more than the lookup.
pub(super) static SESSION: http::HeaderName = http::HeaderName::from_static(HEADER_SESSION);
static AGENT_SESSION: http::HeaderName = http::HeaderName::from_static(HEADER_AGENT_SESSION);
static MODE: http::HeaderName = http::HeaderName::from_static(crate::call::MODE_HEADER);

/// The mode the request's `Portcullis-Mode` header names (plan, or act when absent or other).
pub(super) fn mode_of(req: &Req) -> crate::call::Mode {
    crate::call::Mode::parse(req.headers().get(&MODE).and_then(|v| v.to_str().ok()))
}

/// The authenticated agent, if agents are configured.
pub(super) fn agent_of(req: &Req) -> Option<Arc<crate::identity::Agent>> {
    req.extensions().get::<Arc<crate::identity::Agent>>().cloned()
}

/// Who is calling: the authenticated agent (`agent:ID`); else the `Authorization` header when
/// there is one, with the address it came from (`peer:IP/authorization:VALUE`: the breaker
/// digests it and counts the address too, and no header can spell an agent's principal), else the
/// connection's peer address (`peer:IP`, no port: one caller may open many connections).
/// Noted, with its user agent, for the operator's console ([`crate::approval::callers`]).
pub(super) fn principal_of(req: &Req, shared: &Shared) -> Option<String> {
    let principal = principal_named(req)?;
    let ua = req.headers().get(http::header::USER_AGENT).map(http::HeaderValue::as_bytes);
    shared.approvals.callers.note(&principal, ua);
    Some(principal)
}

pub(super) fn principal_named(req: &Req) -> Option<String> {
    if let Some(a) = req.extensions().get::<Arc<crate::identity::Agent>>() {
        return Some(crate::call::joined(&["agent:", &*a.id]));
    }
    if let Some(auth) = req.headers().get(http::header::AUTHORIZATION).and_then(|v| v.to_str().ok()) {
        // Not verified by anyone here: the caller's to change at will, so it is kept with the
        // address it comes from, which the repeated-denial breaker also counts.
        return Some(match req.extensions().get::<super::listener::Peer>() {
            Some(p) => format!("peer:{}/authorization:{auth}", p.0.ip()),
            None => format!("authorization:{auth}"),
        });
    }
    req.extensions().get::<super::listener::Peer>().map(|p| peer_principal(p.0.ip()))
}

/// `peer:IP`. An IPv4 address is spelled by hand: `format!` through `Display` was a tenth of
/// what reading the caller costs.
fn peer_principal(ip: std::net::IpAddr) -> String {
    let std::net::IpAddr::V4(v4) = ip else { return format!("peer:{ip}") };
    let mut s = String::with_capacity("peer:255.255.255.255".len());
    s.push_str("peer:");
    for (i, octet) in v4.octets().into_iter().enumerate() {
        if i > 0 {
            s.push('.');
        }
        if octet >= 100 {
            s.push(char::from(b'0' + octet / 100));
        }
        if octet >= 10 {
            s.push(char::from(b'0' + octet / 10 % 10));
        }
        s.push(char::from(b'0' + octet % 10));
    }
    s
}

/// True when the request's `Mcp-Session-Id` names an upstream session another agent (or an
/// anonymous caller, or an agent when this one is anonymous) opened: the upstream would take it as
/// that caller's, so it is answered as an unknown session.
pub(super) fn opened_by_another(req: &Req, shared: &Shared) -> bool {
    let Some(id) = req.headers().get(&SESSION).and_then(|v| v.to_str().ok()) else { return false };
    let key = crate::session::key(id, req.extensions().get::<Arc<crate::identity::Agent>>().map(|a| &**a));
    shared.sessions.foreign(&key)
}

/// The legacy `Mcp-Session-Id`, else the agent's own session header, scoped by the agent
/// ([`crate::session::key`]).
///
/// An id an anonymous caller chooses (`x-portcullis-session`: often predictable) is bound to the
/// caller: kept as `~{digest}/{id}`, the digest of its `Authorization` header, else of its
/// address, so another caller spelling the same id reaches nothing of it (waivers, flags,
/// negotiated state). An upstream's `Mcp-Session-Id` is unguessable and kept as sent; one that
/// starts with `~` is escaped with another, so it never spells a bound key (whose second
/// character is a hex digit).
pub(crate) fn session_of(req: &Req) -> Option<String> {
    match req.extensions().get::<SessionKey>() {
        Some(SessionKey(key)) => key.clone(),
        None => session_key(req),
    }
}

/// The request's session key, as the pre gate first computed it ([`session_of`]).
#[derive(Clone)]
pub(super) struct SessionKey(pub(super) Option<String>);

pub(super) fn session_key(req: &Req) -> Option<String> {
    let h = req.headers();
    let agent = req.extensions().get::<Arc<crate::identity::Agent>>().map(|a| &**a);
    if let Some(id) = h.get(&SESSION).and_then(|v| v.to_str().ok()) {
        return Some(match (agent, id.starts_with('~')) {
            (None, true) => crate::session::key(&format!("~{id}"), None),
            _ => crate::session::key(id, agent),
        });
    }
    let id = h.get(&AGENT_SESSION).and_then(|v| v.to_str().ok())?;
    Some(match agent {
        Some(_) => crate::session::key(id, agent),
        None => crate::session::key(&bound(id, principal_named(req).as_deref()), None),
    })
}

/// An anonymous caller's own session id, bound to it: `~`, eight bytes of the digest of its
/// principal in hex, `/`, the id.
pub(super) fn bound(id: &str, principal: Option<&str>) -> String {
    let d = crate::call::principal_digest(principal.unwrap_or(""));
    let mut key = String::with_capacity(18 + id.len());
    key.push_str(&crate::call::hex_key("~", &d, 8));
    key.push('/');
    key.push_str(id);
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_principal_is_spelled_as_display_spells_the_address() {
        let mut ips: Vec<std::net::IpAddr> =
            ["0.0.0.0", "127.0.0.1", "10.9.99.100", "255.255.255.255", "::1", "::ffff:1.2.3.4"]
                .iter()
                .map(|s| s.parse().unwrap())
                .collect();
        ips.extend((0..=255u8).map(|o| std::net::IpAddr::from([o, 255 - o, o / 3, 7])));
        for ip in ips {
            assert_eq!(peer_principal(ip), format!("peer:{ip}"), "{ip:?}");
        }
    }
}
