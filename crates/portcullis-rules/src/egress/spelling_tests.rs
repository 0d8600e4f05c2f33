//! Round 5, as a class: every spelling a real fetcher reads as a URL (no `//`, backslashes,
//! JSON escapes, a percent-encoded port, curl globs) is judged for a tool with outward reach,
//! and a redirect is judged where the URL Standard sends the client.

use serde_json::json;

use super::*;

fn sink() -> Reach {
    Reach::Outward(Outward::Sink("hooks".into()))
}

fn refused(args: serde_json::Value) -> Option<Decision> {
    Egress::default().decide("up", &args, &sink(), Posture::Auto)
}

#[test]
fn loopback_in_every_url_spelling_a_fetcher_reads_is_refused_to_a_sink() {
    let spellings = [
        "http://127.0.0.1:8080/plain",
        "http:/127.0.0.1:8080/one-slash",
        "http:127.0.0.1:8080/no-slash",
        r"http:\\127.0.0.1:8080\backslashes",
        r"HTTP:\/\/127.0.0.1:8080\/escaped",
        r#"{"callback":"http:\/\/127.0.0.1:8080\/json"}"#,
        r#"{"callback":"\u0068ttp://127.0.0.1:8080/unicode"}"#,
        "see ws:/127.0.0.1:8080/ here",
        "gopher:/127.0.0.1:6379/_PING",
        "gopher://127.0.0.1:6379/_PING",
        "url=http:127.0.0.1/",
        "http_proxy=127.0.0.1:3128",
        r#"IO::Socket::INET->new("127.0.0.1:6379")"#,
    ];
    for s in spellings {
        let d = refused(json!({ "body": s }));
        assert!(d.as_ref().is_some_and(|d| d.effect == Effect::Deny), "{s}: {d:?}");
    }
}

#[test]
fn a_url_no_reader_reads_is_refused_to_outward_tools_only() {
    let unreadable = [
        "http://127.0.0.1%3a8080/hook",
        "http://12[6-7].0.0.1:8080/",
        "http://127.0.0.{1}:8080/",
        "http://docs.rs../",
        "https://",
    ];
    for url in unreadable {
        let d = refused(json!({ "url": url })).unwrap_or_else(|| panic!("{url}: passed"));
        assert_eq!(d.rule, UNREADABLE_RULE, "{url}: {}", d.reason);
        let unmarked =
            Egress::default().decide("up", &json!({ "url": url }), &Reach::Unmarked, Posture::Auto);
        assert_eq!(unmarked, None, "{url}: an unmarked tool is refused only metadata");
    }
    for fine in
        ["https://docs.rs/x", "mailto:me@docs.rs", "C:\\Users\\me", "ratio 10:30", "http: is a scheme"]
    {
        assert_eq!(refused(json!({ "body": fine })), None, "{fine}");
    }
}

#[test]
fn a_redirect_is_judged_where_the_url_standard_sends_the_client() {
    let e = Egress::default();
    let off = [
        "http://127.0.0.1:81/x",
        "\\/127.0.0.1:81/x",
        "/\t/127.0.0.1:81/x",
        "http:\\\\127.0.0.1:81\\x",
        "http:127.0.0.1:81/x",
        "//[::1]:81/",
        "http://127.0.0.1%3a81/",
        "http://docs.rs\\@127.0.0.1:81/",
    ];
    for location in off {
        let d = e.decide_redirect("up", location, Posture::Auto);
        assert!(d.as_ref().is_some_and(|d| d.effect == Effect::Deny), "{location:?}: {d:?}");
    }
    for stays in ["/next", "?page=2", "next/page", "https://docs.rs/"] {
        assert_eq!(e.decide_redirect("up", stays, Posture::Auto), None, "{stays:?}");
    }
}

#[test]
fn a_shell_line_that_connects_where_its_words_cannot_say_is_refused() {
    let kinds = crate::kinds::ToolKinds::new([("sh".to_owned(), crate::kinds::KindSpec::bash("/command"))]);
    let e = Egress::default();
    let refused = [
        "curl -K /tmp/cfg https://docs.rs/",
        "wget -i /tmp/urls",
        "curl -s --connect-to ::127.0.0.1:8080 http://docs.rs/",
        "curl -s --resolve docs.rs:443:127.0.0.1 https://docs.rs/",
        "curl -s --socks5 localhost:1080 https://docs.rs/",
        "curl -s 'http://12[6-7].0.0.1:8080/'",
        "redis-cli -h localhost -p 6379 ping",
        "psql -h 10.0.0.5 -c 'select 1'",
        "openssl s_client -connect 127.0.0.1:443",
        "ssh -p 2222 127.0.0.1 true",
        r#"perl -MIO::Socket::INET -e 'IO::Socket::INET->new("127.0.0.1:6379")'"#,
    ];
    for line in refused {
        let args = json!({ "command": line });
        let reach = Reach::of(&kinds, &e, "up", "sh", &args, None);
        let d = e.decide("up", &args, &reach, Posture::Auto);
        assert!(d.as_ref().is_some_and(|d| d.effect == Effect::Deny), "{line}: {reach:?} {d:?}");
    }
    for line in
        ["curl -s https://docs.rs/", "redis-cli -h cache.example.com ping", "perl -e 'print 1'", "ls -la"]
    {
        let args = json!({ "command": line });
        let reach = Reach::of(&kinds, &e, "up", "sh", &args, None);
        assert_eq!(e.decide("up", &args, &reach, Posture::Auto), None, "{line}");
    }
}

/// Red team round 10: spellings the receiving programs read as destinations (R10-5 a host
/// before `#`/`?`, R10-7 a URL with tab/CR/LF inside, R10-8 an IBAN as payment libraries read
/// it, R10-9 an address as RFC 5322 and Python's `email` read it).
#[test]
fn spellings_the_receiving_programs_read_are_destinations() {
    use super::scan::{read, Found, What};
    use std::ops::ControlFlow;
    let found = |s: &str| {
        let mut out: Vec<What> = Vec::new();
        let _ = read::<()>(s, &String::new, &mut |f: Found| {
            out.push(f.what);
            ControlFlow::Continue(())
        });
        out
    };
    let host = |w: &What| match w {
        What::Host(h) | What::Email(h) => h.to_string(),
        What::Url { reading, .. } => {
            reading.destinations().first().map(|d| d.host.to_string()).unwrap_or_default()
        }
        What::Iban(a) => a.clone(),
    };
    let cases: &[(&str, &str)] = &[
        ("169.254.169.254#x", "169.254.169.254"),
        ("169.254.169.254?x", "169.254.169.254"),
        ("metadata.google.internal#x", "metadata.google.internal"),
        ("localhost?x", "localhost"),
        ("127.0.0.1\\x", "127.0.0.1"),
        ("http://1\t69.254.169.254/", "169.254.169.254"),
        ("https://api.github.com\n.attacker.example/", "api.github.com.attacker.example"),
        ("de89370400440532013000", "DE89370400440532013000"),
        ("pay to de89 3704 0044 0532 0130 00 today", "DE89370400440532013000"),
        ("DE89-3704-0044-0532-0130-00", "DE89370400440532013000"),
        ("DE89.3704.0044.0532.0130.00", "DE89370400440532013000"),
        ("DE 89 3704 0044 0532 0130 00", "DE89370400440532013000"),
        ("\"bob\"@attacker.example", "attacker.example"),
        ("\"b o b\"@attacker.example", "attacker.example"),
        ("bob(c)@attacker.example", "attacker.example"),
        ("bob@(c)attacker.example", "attacker.example"),
        ("bob @ attacker.example", "attacker.example"),
        ("To: Bob <bob (work) @ attacker.example>", "attacker.example"),
        ("\u{1f}169.254.169.254", "169.254.169.254"),
        ("\u{1e}metadata.google.internal", "metadata.google.internal"),
        ("\u{1c}localhost\u{1d}", "localhost"),
        ("//127.0.0.1:81/rel", "127.0.0.1"),
        ("/\\127.0.0.1:81/x", "127.0.0.1"),
        ("\\\\169.254.169.254\\x", "169.254.169.254"),
        ("//metadata/computeMetadata", "metadata"),
        ("see //evil.example/x now", "evil.example"),
        ("eve@eve\u{3002}example", "eve.example"),
        ("eve@eve\u{ff0e}example", "eve.example"),
        ("jos\u{e9}@eve.example", "eve.example"),
    ];
    for (s, want) in cases {
        let got: Vec<String> = found(s).iter().map(host).collect();
        assert!(got.iter().any(|h| h == want), "{s:?}: {got:?}");
    }
    // What stays no destination: ordinary words, an @ with nothing a local part ends with.
    for s in [
        "meet @ 5pm",
        "the quick brown fox",
        "@ home",
        "email me at home",
        "DE 12 apples",
        "ls //usr/bin",
        "// a comment",
    ] {
        assert!(found(s).is_empty(), "{s:?}: {:?}", found(s));
    }
}
