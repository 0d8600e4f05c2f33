//! `secrets:` compiled: problems reported at once, URL prefixes matched as the fetcher reads URLs.

use super::*;

fn env(var: &str) -> Option<OsString> {
    match var {
        "GH_TOKEN" => Some("ghp_0123456789abcdef".into()),
        "OTHER" => Some("ghp_0123456789abcdef".into()),
        "SHORT" => Some("1234567".into()),
        _ => None,
    }
}

fn raw(name: &str, var: &str, to: &[&str]) -> Raw {
    Raw { name: name.into(), env: var.into(), to: to.iter().map(|s| s.to_string()).collect() }
}

#[test]
fn every_problem_is_reported_with_its_path_and_never_the_value() {
    let mut p = Problems::default();
    let s = compile(
        vec![
            raw("github", "GH_TOKEN", &["mcp__github__*", "https://api.github.com/"]),
            raw("github", "UNSET_VAR", &[]),
            raw("Bad Name", "SHORT", &[]),
            raw("dup", "OTHER", &["https://x.example/a/../b", " "]),
        ],
        BTreeMap::new(),
        &env,
        &mut p,
    );
    let got: Vec<String> = p.problems.iter().map(|x| format!("{}: {}", x.path, x.message)).collect();
    assert_eq!(
        got,
        [
            "secrets[1].name: \"github\" is named twice",
            "secrets[1].env: the environment variable UNSET_VAR is unset",
            "secrets[2].name: \"Bad Name\" is not a name (a-z, 0-9, _ and -)",
            "secrets[2].env: the value of SHORT is shorter than 8 bytes",
            "secrets[3].env: holds the same value as secret \"github\"",
            "secrets[3].to[0]: \"https://x.example/a/../b\": its path is not plain (dot segments, escapes, backslashes)",
            "secrets[3].to[1]: \" \": neither a tool glob nor a URL",
        ]
    );
    assert!(!got.iter().any(|l| l.contains("ghp_")), "no problem names a value");
    assert!(!format!("{s:?}").contains("ghp_"), "Debug never shows a value: {s:?}");
}

#[test]
fn a_url_prefix_admits_urls_by_scheme_host_port_and_whole_segments() {
    let p = UrlPrefix::parse("https://api.github.com/repos/").unwrap();
    let table = [
        ("https://api.github.com/repos/x/y", true),
        ("https://API.GitHub.com:443/repos/x", true),
        ("https://api.github.com/repos/", true),
        ("https://api.github.com/repos", false),
        ("https://api.github.com/user", false),
        ("http://api.github.com/repos/x", false),
        ("https://api.github.com:8443/repos/x", false),
        ("https://api.github.com.evil.example/repos/x", false),
        ("https://evil.example/https://api.github.com/repos/", false),
        ("https://evil.example\\@api.github.com/repos/x", false),
        ("https://api.github.com@evil.example/repos/x", false),
        ("https://api.github.com/repos/../user", false),
        ("https://api.github.com/repos/%2e%2e/user", false),
        ("https://api.github.com/repos%2f..%2fuser", false),
        ("api.github.com/repos/x", false),
        ("not a url", false),
    ];
    for (url, want) in table {
        assert_eq!(p.admits(url), want, "{url}");
    }
    let segment = UrlPrefix::parse("https://api.github.com/repos").unwrap();
    assert!(segment.admits("https://api.github.com/repos/x"));
    assert!(segment.admits("https://api.github.com/repos"));
    assert!(!segment.admits("https://api.github.com/reposx"), "a prefix ends at a segment");
    let ip = UrlPrefix::parse("http://127.0.0.1:8080/").unwrap();
    assert!(ip.admits("http://2130706433:8080/api"), "the host is compared as the fetcher connects");
}
