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
