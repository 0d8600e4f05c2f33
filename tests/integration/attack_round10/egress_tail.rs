//! A host followed by `#…` or `?…` with no scheme and no port: curl and wget (which guess
//! `http://`), and every tool that builds `http://{host}/…` (Python's urllib, Node's WHATWG URL
//! and fetch), end the host there and connect to it. The egress scan ends a bare host only at
//! `/` (the whole value) or trims a trailing `?` (a word), so `169.254.169.254#x` is read as no
//! destination at all — and `egress::quiet` agrees with it, the pre-filter being held to the scan.

use serde_json::json;

use crate::support::{config, proxy, proxy_url, py_client, text_of, Peer};

/// Spellings whose host every reader below takes for a refused destination.
const SPELLINGS: &[(&str, &str)] = &[
    ("169.254.169.254#x", "metadata"),
    ("169.254.169.254?x", "metadata"),
    ("0xa9fea9fe#", "metadata"),
    ("metadata.google.internal#x", "metadata"),
    ("metadata#x", "metadata"),
    ("127.0.0.1#x", "loopback"),
    ("localhost?x", "loopback"),
];

/// The host each executor reads in `http://{s}/`: Node's WHATWG URL, Python's urlsplit, and curl's
/// own reading of the bare word (`url_effective` is printed whether or not it connects).
async fn readings(s: &str) -> Vec<String> {
    let run = |program: &str, args: Vec<String>| {
        let out = std::process::Command::new(program).args(&args).output().expect("runs");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let url = format!("http://{s}/");
    vec![
        run("node", vec!["-e".into(), "console.log(new URL(process.argv[1]).hostname)".into(), url.clone()]),
        run(
            "python3",
            vec![
                "-c".into(),
                "import sys, urllib.parse; print(urllib.parse.urlsplit(sys.argv[1]).hostname)".into(),
                url,
            ],
        ),
    ]
}

fn expected_hosts(class: &str) -> &'static [&'static str] {
    match class {
        "metadata" => &["169.254.169.254", "0xa9fea9fe", "metadata.google.internal", "metadata"],
        _ => &["127.0.0.1", "localhost"],
    }
}

#[tokio::test]
async fn the_executors_read_a_host_before_a_fragment_or_a_query() {
    // The premise of the finding, held to real readers: every spelling names the host before
    // its `#` or `?` (WHATWG also turns 0xa9fea9fe into 169.254.169.254).
    for (s, class) in SPELLINGS {
        for host in readings(s).await {
            let known = expected_hosts(class).contains(&host.as_str()) || host == "169.254.169.254";
            assert!(known, "{s}: read as {host:?}");
        }
    }
    let curl = std::process::Command::new("curl")
        .args(["-s", "-o", "/dev/null", "--max-time", "5", "-w", "%{url_effective}", "127.0.0.1#x"])
        .output()
        .expect("curl runs");
    assert_eq!(
        String::from_utf8_lossy(&curl.stdout),
        "http://127.0.0.1/#x",
        "curl guesses http and ends the host at #"
    );
}

/// The Python peer twice: `sh`, whose `echo` is a shell tool (its message the command line), and
/// `py`, whose `echo` is a plain tool; auto posture, curl allowed, so only egress can refuse.
fn rig(peer: &Peer) -> portcullis::config::Config {
    config(
        &[("sh", &peer.url()), ("py", &peer.url())],
        "posture: auto\npermissions: { allow: [\"mcp__*\", \"Shell(curl:*)\"] }\n\
         tools: [ { match: mcp__sh__echo, kind: shell, command: /message } ]\n",
    )
}

#[tokio::test]
async fn a_bare_special_host_is_refused_to_curl_and_as_a_whole_value() {
    // What held: the same hosts without the tail.
    let peer = Peer::python("legacy");
    let p = proxy(&rig(&peer)).await;
    let mut steps: Vec<String> = Vec::new();
    for host in ["169.254.169.254", "metadata.google.internal", "127.0.0.1", "localhost"] {
        steps.extend([
            "call".into(),
            "echo".into(),
            json!({ "message": format!("curl -s {host}") }).to_string(),
        ]);
    }
    let args: Vec<&str> = steps.iter().map(String::as_str).collect();
    let out = py_client(&proxy_url(&p, "sh"), "legacy", &args).await;
    for line in &out {
        assert_eq!(line["result"]["isError"], true, "{line}");
        assert!(text_of(line).contains("egress:"), "{line}");
    }
    // A plain tool's argument: metadata in an unmistakable spelling (a loose one, such as a
    // single label, counts only for a tool with outward reach).
    for whole in ["169.254.169.254", "metadata.google.internal"] {
        let arg = json!({ "message": whole }).to_string();
        let out = py_client(&proxy_url(&p, "py"), "legacy", &["call", "echo", &arg]).await;
        assert!(text_of(&out[0]).contains("egress: metadata"), "{}", out[0]);
    }
    assert!(peer.tools_run().is_empty(), "{:?}", peer.tools_run());
    p.shutdown().await;
}

#[tokio::test]
async fn a_special_host_followed_by_a_fragment_or_query_is_refused_to_curl_and_as_a_whole_value() {
    let peer = Peer::python("legacy");
    let p = proxy(&rig(&peer)).await;
    let mut forwarded = Vec::new();
    for (s, class) in SPELLINGS {
        let line = json!({ "message": format!("curl -s {s}") }).to_string();
        let out = py_client(&proxy_url(&p, "sh"), "legacy", &["call", "echo", &line]).await;
        if !text_of(&out[0]).contains(&format!("egress: {class}")) {
            forwarded.push(format!("curl -s {s}"));
        }
        // A plain tool is refused metadata in any argument (loopback only with outward reach)
        // in an unmistakable spelling (a dotted quad, a name with a top-level domain).
        if *class == "metadata" && s.contains('.') {
            let whole = json!({ "message": s }).to_string();
            let out = py_client(&proxy_url(&p, "py"), "legacy", &["call", "echo", &whole]).await;
            if !text_of(&out[0]).contains("egress: metadata") {
                forwarded.push(format!("{{\"message\": {s:?}}}"));
            }
        }
    }
    assert!(
        forwarded.is_empty(),
        "forwarded to the tool: {forwarded:?}; the tool ran {:?}",
        peer.tools_run()
    );
    assert!(peer.tools_run().is_empty(), "{:?}", peer.tools_run());
    p.shutdown().await;
}
