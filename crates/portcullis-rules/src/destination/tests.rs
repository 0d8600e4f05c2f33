//! Readings of hostile and ordinary URLs, `domain:` patterns on them, and the engine's use.

use std::net::Ipv4Addr;

use proptest::prelude::*;

use super::*;

/// A reading in one line: `scheme://host:port`, `either A | B`, or `none`.
fn show(r: &Reading) -> String {
    match r {
        Reading::One(d) => d.to_string(),
        Reading::Ambiguous(ds) => {
            format!("either {}", ds.iter().map(Destination::to_string).collect::<Vec<_>>().join(" | "))
        }
        Reading::Unparsable(_) => "none".into(),
    }
}

#[test]
fn every_spelling_reads_as_the_host_each_fetcher_connects_to() {
    let table = [
        // IPv4 numbers, as inet_aton, curl and the URL Standard read them.
        ("http://2130706433:8080/", "http://127.0.0.1:8080"),
        ("http://0x7f000001/", "http://127.0.0.1:80"),
        ("http://0X7F.0.0.1/", "http://127.0.0.1:80"),
        ("http://127.1/", "http://127.0.0.1:80"),
        ("http://0177.0.0.1/", "http://127.0.0.1:80"),
        ("http://0177.1/", "http://127.0.0.1:80"),
        ("http://127.0.0.1./", "http://127.0.0.1:80"),
        ("http://0x/", "http://0.0.0.0:80"),
        ("http://%31%32%37.0.0.1/", "http://127.0.0.1:80"),
        // Numbers one reader refuses and the other resolves as a name.
        ("http://08/", "either http://08:80"),
        ("http://256.0.0.1/", "either http://256.0.0.1:80"),
        ("http://1.2.3.4.5/", "either http://1.2.3.4.5:80"),
        // IPv6, mapped IPv4, zones, encoded brackets.
        ("http://[::ffff:a9fe:a9fe]/", "http://[::ffff:169.254.169.254]:80"),
        ("http://[::1]:8080/", "http://[::1]:8080"),
        ("http://[fe80::1%25eth0]/", "either http://[fe80::1]:80"),
        ("http://%5B%3A%3A1%5D/", "either http://[::1]:80"),
        // Names: case, trailing dot, percent-encoding, IDNA.
        ("HTTPS://DOCS.RS./x", "https://docs.rs:443"),
        ("http://docs%2Ers/", "http://docs.rs:80"),
        ("https://evil\u{3002}example/", "https://evil.example:443"),
        ("https://B\u{fc}cher.de/", "https://xn--bcher-kva.de:443"),
        ("https://xn--bcher-kva.de/", "https://xn--bcher-kva.de:443"),
        ("https://docs.rs.evil.example/", "https://docs.rs.evil.example:443"),
        ("http://docs.rs../", "none"),
        // Userinfo and where the authority ends.
        (r"https://evil.example\@docs.rs/", "either https://evil.example:443 | https://docs.rs:443"),
        (r"http://evil.example\docs.rs/", "either http://evil.example:80"),
        ("http://user:pass@docs.rs/", "http://docs.rs:80"),
        ("http://docs.rs@evil.example/", "http://evil.example:80"),
        ("http://docs.rs:80@evil.example/", "http://evil.example:80"),
        ("http://a@docs.rs@evil.example/", "http://evil.example:80"),
        ("http://docs.rs#@evil.example/", "http://docs.rs:80"),
        ("http://docs.rs?@evil.example/", "http://docs.rs:80"),
        // Slashes, schemes, whitespace.
        ("http:/docs.rs/", "http://docs.rs:80"),
        ("http:docs.rs", "either http://docs.rs:80"),
        ("http:////docs.rs/", "either http://docs.rs:80"),
        ("http://docs.r\ts/", "either http://docs.rs:80"),
        ("  https://docs.rs/\n", "https://docs.rs:443"),
        ("https://docs.rs/a path?q=x y", "https://docs.rs:443"),
        ("ws://docs.rs", "ws://docs.rs:80"),
        ("gopher://EXAMPLE.com/", "gopher://example.com"),
        ("http://docs.rs:/", "http://docs.rs:80"),
        ("http://docs.rs:99999/", "none"),
        // No scheme: as curl guesses it.
        ("docs.rs", "http://docs.rs:80"),
        ("docs.rs:8443/x", "http://docs.rs:8443"),
        ("localhost:8080", "http://localhost:8080"),
        ("ftp.example.com/x", "ftp://ftp.example.com:21"),
        ("mailto:a@b.example", "http://b.example:80"),
        // Nothing to connect to.
        ("file:///etc/passwd", "none"),
        ("not a url", "none"),
        ("javascript:alert(1)", "none"),
        ("", "none"),
    ];
    let mut wrong = Vec::new();
    for (url, want) in table {
        let got = show(&read_url(url));
        if got != want {
            wrong.push(format!("{url:?}: got {got}, want {want}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn patterns_compile_to_one_canonical_spelling_or_are_refused() {
    let ok = [
        ("docs.rs", "docs.rs"),
        (" DOCS.RS. ", "docs.rs"),
        ("*.docs.rs", "*.docs.rs"),
        ("b\u{fc}cher.de", "xn--bcher-kva.de"),
        ("evil\u{3002}example", "evil.example"),
        ("127.0.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("[::1]", "[::1]"),
        ("::1", "[::1]"),
        ("[::ffff:127.0.0.1]", "127.0.0.1"),
    ];
    for (text, want) in ok {
        let p = DomainPattern::parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        assert_eq!(p.to_string(), want, "{text:?}");
    }
    let bad = [
        "",
        "*",
        "*.",
        "*.127.0.0.1",
        "*.[::1]",
        "do*cs.rs",
        "docs.rs/x",
        "docs.rs:443",
        "a@b",
        "docs rs",
        "a..b",
        "https://docs.rs",
        "[fe80::1%eth0]",
        "[::1",
        "docs%2Ers",
    ];
    for text in bad {
        assert!(DomainPattern::parse(text).is_err(), "{text:?} should be refused");
    }
}

#[test]
fn patterns_match_every_reading_and_doubt_only_what_is_doubtful() {
    use HostMatch::{No, Possibly, Yes};
    let table = [
        ("127.0.0.1", "http://2130706433:8080/", Yes),
        ("127.0.0.1", "http://0x7f000001/", Yes),
        ("127.0.0.1", "http://127.1/", Yes),
        ("127.0.0.1", "http://0177.0.0.1/", Yes),
        ("127.0.0.1", "http://[::ffff:7f00:1]/", Yes),
        ("127.0.0.1", "http://localhost:8080/", Possibly),
        ("127.0.0.1", "http://127.0.0.2/", No),
        ("127.0.0.1", "http://[::1]/", No),
        ("169.254.169.254", "http://[::ffff:a9fe:a9fe]/", Yes),
        ("169.254.169.254", "http://[64:ff9b::a9fe:a9fe]/", Possibly),
        ("169.254.169.254", "http://[2002:a9fe:a9fe::1]/", Possibly),
        ("169.254.169.254", "http://[::a9fe:a9fe]/", Possibly),
        ("::1", "http://[0:0::1]/", Yes),
        ("::1", "http://127.0.0.1/", No),
        ("docs.rs", "https://docs.rs/x", Yes),
        ("docs.rs", "https://api.docs.rs/x", Yes),
        ("docs.rs", "https://DOCS.RS./", Yes),
        ("docs.rs", "https://docs%2Ers/", Yes),
        ("docs.rs", "https://docs.rs.evil.example/", No),
        ("docs.rs", "https://notdocs.rs/", No),
        ("docs.rs", "https://evil.example/?docs.rs", No),
        ("docs.rs", r"https://evil.example\@docs.rs/", Possibly),
        ("evil.example", r"https://evil.example\@docs.rs/", Possibly),
        ("docs.rs", r"https://a.docs.rs\@docs.rs/", Yes),
        ("evil.example", "https://evil\u{3002}example/", Yes),
        ("b\u{fc}cher.de", "https://xn--bcher-kva.de/", Yes),
        ("*.docs.rs", "https://docs.rs/", No),
        ("*.docs.rs", "https://a.docs.rs/", Yes),
        ("docs.rs", "not a url", Possibly),
        ("docs.rs", "http:////docs.rs/", Yes),
        ("evil.example", "http:////docs.rs/", Possibly),
    ];
    for (pattern, url, want) in table {
        let p = DomainPattern::parse(pattern).unwrap();
        assert_eq!(p.matches(&read_url(url)), want, "{pattern} on {url:?}");
    }
}

/// One spelling of each inet_aton part: decimal, `0x` hex (either case, padded) or `0` octal.
fn spell(value: u32, style: u8) -> String {
    match style % 5 {
        0 => format!("{value}"),
        1 => format!("0x{value:x}"),
        2 => format!("0X{value:08X}"),
        3 => format!("0{value:o}"),
        _ => format!("000{value:o}"),
    }
}

/// `addr` split into `parts` inet_aton parts, the last filling the remaining bytes.
fn spelled(addr: Ipv4Addr, parts: usize, styles: &[u8], dot: bool) -> String {
    let o = addr.octets();
    let mut values: Vec<u32> = o[..parts - 1].iter().map(|&b| u32::from(b)).collect();
    values.push(o[parts - 1..].iter().fold(0, |acc, &b| acc << 8 | u32::from(b)));
    let text: Vec<String> = values.iter().zip(styles).map(|(&v, &s)| spell(v, s)).collect();
    format!("{}{}", text.join("."), if dot { "." } else { "" })
}

proptest! {
    #[test]
    fn any_spelling_of_an_ipv4_address_reads_as_that_address(
        addr in any::<u32>().prop_map(Ipv4Addr::from),
        parts in 1usize..=4,
        styles in proptest::collection::vec(any::<u8>(), 4),
        dot in any::<bool>(),
    ) {
        let host = spelled(addr, parts, &styles, dot);
        let want = Destination { scheme: "http".into(), host: Host::V4(addr), port: Some(80) };
        prop_assert_eq!(read_url(&format!("http://{host}/")), Reading::One(want), "{}", host);
        let pattern = DomainPattern::parse(&host).unwrap();
        prop_assert_eq!(pattern.to_string(), addr.to_string());
    }

    #[test]
    fn no_input_panics(text in any::<String>()) {
        let reading = read_url(&text);
        let _ = reading.doubt();
        if let Ok(p) = DomainPattern::parse(&text) {
            let _ = p.matches(&reading);
        }
    }

    #[test]
    fn a_host_every_fetcher_agrees_on_matches_its_own_pattern(
        text in r"([a-zA-Z]{1,5}:/{0,4})?([a-z0-9.%@:\\]{0,12}@)?([a-zA-Z0-9.%\[\]:\\]{1,20})(:[0-9]{0,5})?([/?#\\][a-z@.]{0,10})?",
    ) {
        if let Reading::One(d) = read_url(&text) {
            let p = DomainPattern::parse(&d.host.to_string()).unwrap();
            prop_assert_eq!(p.matches(&read_url(&text)), HostMatch::Yes, "{}", text);
        }
    }
}

#[test]
fn destinations_lists_what_each_reading_connects_to() {
    assert_eq!(read_url("https://docs.rs/").destinations().len(), 1);
    let hosts: Vec<String> = read_url(r"https://evil.example\@docs.rs/")
        .destinations()
        .iter()
        .map(|d| d.host.to_string())
        .collect();
    assert_eq!(hosts, ["evil.example", "docs.rs"]);
    assert!(read_url("file:///etc/passwd").destinations().is_empty());
}
