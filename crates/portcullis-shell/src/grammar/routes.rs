//! curl's connection overrides: the address `--resolve` and `--connect-to` send a connection
//! to, cut from the option's value so the effect model reports it as a destination.
//!
//! `--resolve [+]HOST:PORT:ADDR[,ADDR]…` (a leading `-` removes an entry and connects nowhere);
//! `--connect-to HOST1:PORT1:HOST2:PORT2` (an empty HOST2 keeps the URL's host). Any host part
//! may be a bracketed IPv6 address. A value that does not have this shape is not read.

/// The connection of a command that reads where it connects from a file (`curl -K cfg`,
/// `wget -i urls`): a destination nobody can read from the words, which egress refuses to a
/// command with outward reach.
pub const DESTINATIONS_IN_A_FILE: &str = "(destinations read from a file)";

/// Where one override sends connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route<'a> {
    /// The addresses or `host:port` connections go to.
    To(&'a str),
    /// No new destination (an entry removed, or only the port changed).
    Nowhere,
}

/// The addresses of a `--resolve` value.
pub(crate) fn resolve(value: &str) -> Option<Route<'_>> {
    if value.starts_with('-') {
        return Some(Route::Nowhere);
    }
    let value = value.strip_prefix('+').unwrap_or(value);
    let (_host, rest) = host_part(value)?;
    let (_port, addresses) = rest.split_once(':')?;
    (!addresses.is_empty()).then_some(Route::To(addresses))
}

/// The `HOST2:PORT2` of a `--connect-to` value.
pub(crate) fn connect_to(value: &str) -> Option<Route<'_>> {
    let (_host, rest) = host_part(value)?;
    let (_port, target) = rest.split_once(':')?;
    match target.starts_with(':') {
        true => Some(Route::Nowhere),
        false if target.is_empty() => None,
        false => Some(Route::To(target)),
    }
}

/// A host (bracketed IPv6 included) and what follows the `:` after it.
fn host_part(value: &str) -> Option<(&str, &str)> {
    if value.starts_with('[') {
        let close = value.find(']')?;
        let rest = value[close + 1..].strip_prefix(':')?;
        return Some((&value[..=close], rest));
    }
    value.split_once(':')
}

#[cfg(test)]
mod tests {
    use super::{connect_to, resolve, Route};

    #[test]
    fn a_resolve_value_sends_its_host_to_the_addresses_it_lists() {
        let table: &[(&str, Option<Route<'_>>)] = &[
            ("docs.rs:443:127.0.0.1", Some(Route::To("127.0.0.1"))),
            ("+docs.rs:443:127.0.0.1,10.0.0.1", Some(Route::To("127.0.0.1,10.0.0.1"))),
            ("*:80:[::1]", Some(Route::To("[::1]"))),
            ("[::2]:80:[::1]", Some(Route::To("[::1]"))),
            ("-docs.rs:443", Some(Route::Nowhere)),
            ("docs.rs:443:", None),
            ("docs.rs:443", None),
            ("[::1:80:x", None),
        ];
        for (value, want) in table {
            assert_eq!(resolve(value), *want, "{value}");
        }
    }

    #[test]
    fn a_connect_to_value_sends_the_connection_to_its_second_host() {
        let table: &[(&str, Option<Route<'_>>)] = &[
            ("::127.0.0.1:8080", Some(Route::To("127.0.0.1:8080"))),
            ("docs.rs:443:localhost:8080", Some(Route::To("localhost:8080"))),
            ("[::2]:443:[::1]:80", Some(Route::To("[::1]:80"))),
            ("docs.rs:443::8443", Some(Route::Nowhere)),
            ("docs.rs:443:", None),
            ("docs.rs", None),
        ];
        for (value, want) in table {
            assert_eq!(connect_to(value), *want, "{value}");
        }
    }
}
