//! Where a client goes when it follows a redirect: the `Location` resolved as the URL Standard
//! resolves it against the URL the client asked for (`url::Url::join`, what Node's `fetch` and
//! browsers do), so `\/host`, `/<TAB>/host` and `http:\\host` are the hosts they are.
//!
//! The client asked the proxy, whose address Layer 1 does not know, so the Location is resolved
//! against a stand-in for it under both schemes a client may use (a scheme-less `http:\\x` is
//! relative under `http:` and absolute under `https:`). A result on the stand-in stays where the
//! client already is; any other is a destination to judge; a Location that does not resolve is
//! refused, since a lenient client may still follow it.

use url::Url;

/// The stand-in for the URL the client asked (`.invalid` resolves nowhere: RFC 6761).
const BASES: [&str; 2] =
    ["http://portcullis-request.invalid/tool/call", "https://portcullis-request.invalid/tool/call"];

/// What following a `Location` does, under one of the schemes a client may have used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Follow {
    /// It stays on the origin the client asked.
    Stays,
    /// It leaves for this absolute URL (serialised by the standard).
    Leaves(String),
    /// The standard cannot resolve it (why).
    Unresolvable(String),
}

/// Every way following `location` may go.
pub(super) fn follow(location: &str) -> Vec<Follow> {
    BASES
        .iter()
        .map(|base| {
            let Ok(base) = Url::parse(base) else {
                return Follow::Unresolvable("the stand-in base does not parse".into());
            };
            match base.join(location) {
                Err(e) => Follow::Unresolvable(e.to_string()),
                Ok(to) if same_origin(&to, &base) => Follow::Stays,
                Ok(to) => Follow::Leaves(to.into()),
            }
        })
        .collect()
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme() && a.host() == b.host() && a.port_or_known_default() == b.port_or_known_default()
}

#[cfg(test)]
mod tests {
    use super::{follow, Follow};

    #[test]
    fn a_location_is_read_where_the_url_standard_takes_the_client() {
        let table: &[(&str, &str)] = &[
            ("/next", "stays"),
            ("next?x=1", "stays"),
            ("?page=2", "stays"),
            ("#top", "stays"),
            ("//docs.rs/x", "http://docs.rs/x"),
            ("\\/127.0.0.1:81/x", "http://127.0.0.1:81/x"),
            ("/\t/127.0.0.1:81/x", "http://127.0.0.1:81/x"),
            ("\\\\127.0.0.1:81\\x", "http://127.0.0.1:81/x"),
            ("http:\\\\127.0.0.1:81\\x", "http://127.0.0.1:81/x"),
            ("https://docs.rs/", "https://docs.rs/"),
            ("http://127.0.0.1%3a81/", "unresolvable"),
            ("http://[::1/", "unresolvable"),
        ];
        for (location, want) in table {
            let all = follow(location);
            let shown = match &all[0] {
                Follow::Stays => "stays".to_owned(),
                Follow::Leaves(u) => u.clone(),
                Follow::Unresolvable(_) => "unresolvable".to_owned(),
            };
            assert_eq!(shown, *want, "{location:?}: {all:?}");
        }
    }

    #[test]
    fn a_scheme_without_slashes_is_judged_under_the_other_scheme_too() {
        // Relative under `http:` (the same scheme), absolute under `https:`.
        for location in ["http:127.0.0.1:81/x", "HTTP:/127.0.0.1:81/x"] {
            let all = follow(location);
            assert_eq!(all[0], Follow::Stays, "{location}");
            assert_eq!(all[1], Follow::Leaves("http://127.0.0.1:81/x".into()), "{location}");
        }
    }
}
