//! Origins and resource URLs compared the way an MCP client compares them (the TypeScript
//! SDK's `checkResourceAllowed`), with one allowance: loopback names are one host. An upstream
//! configured as `http://127.0.0.1:3001/mcp` that calls itself `http://localhost:3001/mcp` in its
//! metadata is the same server; nothing outside the machine can answer for either name.

use http::Uri;

/// Whether `host` names this machine's loopback interface.
pub fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn port(u: &Uri) -> Option<u16> {
    u.port_u16().or(match u.scheme_str() {
        Some("http") => Some(80),
        Some("https") => Some(443),
        _ => None,
    })
}

/// Same scheme, same port, same host (or both loopback).
pub fn same_origin(a: &Uri, b: &Uri) -> bool {
    let (Some(ha), Some(hb)) = (a.host(), b.host()) else { return false };
    a.scheme_str().is_some()
        && a.scheme_str() == b.scheme_str()
        && port(a) == port(b)
        && (ha.eq_ignore_ascii_case(hb) || (is_loopback(ha) && is_loopback(hb)))
}

/// Whether metadata naming `resource` may describe `url`: the same origin, and `url`'s path at
/// or below `resource`'s (segment-wise: `/api` covers `/api/x`, not `/api2`).
pub fn resource_covers(resource: &Uri, url: &Uri) -> bool {
    let slash = |p: &str| if p.ends_with('/') { p.to_owned() } else { format!("{p}/") };
    same_origin(resource, url) && slash(url.path()).starts_with(&slash(resource.path()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Uri {
        s.parse().unwrap()
    }

    #[test]
    fn a_resource_covers_its_own_url_and_paths_below_it() {
        for (resource, url, want) in [
            ("http://127.0.0.1:9/mcp", "http://127.0.0.1:9/mcp", true),
            ("http://localhost:9/mcp", "http://127.0.0.1:9/mcp", true),
            ("http://localhost:9", "http://127.0.0.1:9/mcp", true),
            ("http://[::1]:9/", "http://localhost:9/mcp", true),
            ("https://fs.example/mcp/", "https://fs.example/mcp", true),
            ("https://fs.example:443/mcp", "https://fs.example/mcp", true),
            ("https://evil.example.com/mcp", "http://127.0.0.1:9/mcp", false),
            ("http://127.0.0.1:9/mcp", "http://127.0.0.1:10/mcp", false),
            ("https://127.0.0.1:9/mcp", "http://127.0.0.1:9/mcp", false),
            ("http://127.0.0.1:9/mc", "http://127.0.0.1:9/mcp", false),
            ("http://127.0.0.1:9/mcp/x", "http://127.0.0.1:9/mcp", false),
            ("http://10.0.0.1:9/mcp", "http://127.0.0.1:9/mcp", false),
        ] {
            assert_eq!(resource_covers(&u(resource), &u(url)), want, "{resource} for {url}");
        }
    }
}
