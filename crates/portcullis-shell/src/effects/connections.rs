//! Words that may name a host, for a command no grammar read: a program not known not to
//! connect, given an IP literal, `localhost`, `host:port` or a URL (`redis-cli -h 127.0.0.1`,
//! `openssl s_client -connect h:443`, a perl socket in `-e`), is judged as connecting to it, so
//! the egress floor holds for it as for curl. What the host is, the rules read; this only says
//! which words to hand them.
//!
//! The shapes are broad on purpose (an IPv4 number in any inet_aton spelling, `0x7f000001`):
//! a word wrongly handed over costs a reading, one missed is a connection nobody judged. A
//! decimal like `10.5` reads as 10.0.0.5, so an unread command given one meets the floor.

/// Whether `word` holds something a program may connect to.
pub(super) fn may_name_host(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    if lower.contains("localhost") || lower.contains(":/") || lower.contains(":\\") {
        return true;
    }
    lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || ".:[]%_-".contains(c)))
        .any(|token| token_names_host(token.trim_matches(['.', '-', '_']).trim_end_matches(':')))
}

/// One run of host characters: `a.b.c.d[:port]` in any number base, `[v6]`, a bare IPv6
/// address, `name:port`, or a long number (`2130706433` is 127.0.0.1).
fn token_names_host(t: &str) -> bool {
    if t.is_empty() {
        return false;
    }
    if t.starts_with('[') || t.matches(':').count() >= 2 {
        return t.bytes().any(|b| b.is_ascii_hexdigit()) && t.contains(':');
    }
    let (name, port) = match t.rsplit_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (t, None),
    };
    if port.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) && !name.is_empty() {
        return true;
    }
    let numeric = |p: &str| {
        !p.is_empty()
            && p.as_bytes()[0].is_ascii_digit()
            && (p.bytes().all(|b| b.is_ascii_digit())
                || p.strip_prefix("0x").is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit())))
    };
    let parts: Vec<&str> = name.split('.').collect();
    match parts.len() {
        1 => name.starts_with("0x") && numeric(name) || (name.len() >= 8 && numeric(name)),
        2..=4 => parts.iter().all(|p| numeric(p)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::may_name_host;

    #[test]
    fn words_that_name_a_host_in_any_spelling_are_handed_over_and_plain_words_are_not() {
        let hosts = [
            "127.0.0.1",
            "127.1",
            "0x7f.0.0.1",
            "0x7f000001",
            "2130706433",
            "localhost",
            "LOCALHOST:6379",
            "127.0.0.1:6379",
            "db.internal:5432",
            "[::1]",
            "::1",
            "fe80::1",
            "http://x/",
            "http:\\\\x",
            r#"IO::Socket::INET->new("127.0.0.1:6379")"#,
            "postgres://u@10.0.0.5/db",
            "--host=10.0.0.5",
        ];
        for w in hosts {
            assert!(may_name_host(w), "{w}");
        }
        let words =
            ["ping", "-p", "select 1", "README.md", "v1", "true", "-c", "1", "a-b_c", "x.y", "12:", ""];
        for w in words {
            assert!(!may_name_host(w), "{w}");
        }
    }
}
