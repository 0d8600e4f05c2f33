//! Egress (issue 27.1): destinations spelled so the proxy's two URL readers find no host, or the
//! scanner finds no URL, while a real fetcher (Python's urllib, curl, Node's fetch) connects.

use serde_json::json;
use tokio::process::Command;

use super::{parse, Target};
use crate::support::{post, proxy, proxy_url, py_client, text_of, Peer};

/// The Python peer as upstream `py`, its `web_post` (urllib) a sink, at the auto posture: the
/// floor allows everything, so only egress can refuse.
fn py_sink(peer: &Peer) -> portcullis::config::Config {
    parse(&format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0 }}\nposture: auto\n\
         upstreams:\n  py: {{ url: \"{}\" }}\negress: {{ sinks: [mcp__py__web_post] }}\n",
        peer.url()
    ))
}

/// Runs a real fetcher on `url`: `node` (WHATWG `fetch`), `curl` or `python` (urllib, which
/// follows redirects). Whether it connected is read from the target's log, not from here.
async fn fetch_with(fetcher: &str, url: &str) {
    let mut cmd = match fetcher {
        "node" => {
            let mut c = Command::new("node");
            c.args(["-e", "fetch(process.argv[1]).then(r => r.text()).catch(() => {})", url]);
            c
        }
        // A receiver that reads the value as a JSON document and fetches its `callback`.
        "json" => {
            let mut c = Command::new("python3");
            let script = "import json, sys, urllib.request\ntry: urllib.request.urlopen(json.loads(sys.argv[1])['callback'], timeout=5).read()\nexcept Exception: pass";
            c.args(["-c", script, url]);
            c
        }
        "curl" => {
            let mut c = Command::new("curl");
            c.args(["-s", "-o", "/dev/null", "--max-time", "5", url]);
            c
        }
        _ => {
            let mut c = Command::new("python3");
            let script = "import sys, urllib.request\ntry: urllib.request.urlopen(sys.argv[1], timeout=5).read()\nexcept Exception: pass";
            c.args(["-c", script, url]);
            c
        }
    };
    let status = cmd.kill_on_drop(true).status().await.unwrap_or_else(|e| panic!("{fetcher}: {e}"));
    assert!(status.success(), "{fetcher} {url}: {status}");
}

#[tokio::test]
async fn a_sink_is_never_sent_to_loopback_by_a_url_whose_port_is_percent_encoded() {
    let target = Target::start(None).await;
    let url = format!("http://127.0.0.1%3a{}/hook", target.port);

    // The premise: Python's urllib unquotes the host, colon included, and connects.
    fetch_with("python", &url).await;
    assert_eq!(target.seen().len(), 1, "urllib reaches {url}: {:?}", target.seen());

    let peer = Peer::python("legacy");
    let p = proxy(&py_sink(&peer)).await;
    let step = json!({"url": url, "body": "the build secrets"}).to_string();
    let out = py_client(&proxy_url(&p, "py"), "legacy", &["call", "web_post", &step]).await;
    assert_eq!(target.seen().len(), 1, "the sink posted to loopback through the proxy: {:?}", target.seen());
    assert!(text_of(&out[0]).contains("egress"), "{}", out[0]);
    assert!(peer.tools_run().is_empty(), "the refused call never ran: {:?}", peer.tools_run());
}

#[tokio::test]
async fn a_url_without_two_slashes_after_its_scheme_still_names_its_destination() {
    let target = Target::start(None).await;
    let port = target.port;
    let spellings = [
        (format!("http:/127.0.0.1:{port}/one"), "curl"),
        (format!("http:/127.0.0.1:{port}/two"), "node"),
        (format!("http:127.0.0.1:{port}/three"), "node"),
        (format!("http:\\\\127.0.0.1:{port}\\four"), "node"),
        (format!("HTTP:\\/\\/127.0.0.1:{port}\\/five"), "node"),
        // A URL in a JSON document in the argument, its slashes escaped as JSON allows.
        (format!(r#"{{"callback":"http:\/\/127.0.0.1:{port}\/six"}}"#), "json"),
    ];
    // The premise: each fetcher connects with exactly these bytes.
    for (url, fetcher) in &spellings {
        let before = target.seen().len();
        fetch_with(fetcher, url).await;
        assert_eq!(target.seen().len(), before + 1, "{fetcher} reaches {url:?}: {:?}", target.seen());
    }

    // A webhook tool on a plain HTTP upstream, marked a sink: its argument must meet egress.
    let tool = Target::start(None).await;
    let p = proxy(&parse(&format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0 }}\nposture: auto\n\
         upstreams:\n  hooks: {{ url: \"{}\", egress: {{ sinks: [\"http__hooks__*\"] }} }}\n",
        tool.base()
    )))
    .await;
    let send = format!("http://{}/http/hooks/send", p.addr);
    // The control: the same destination with `//` is refused.
    let (status, _, body) =
        post(&send, &[], json!({"webhook": format!("http://127.0.0.1:{port}/x")}).to_string()).await;
    assert_eq!(status, 403, "{body}");
    let mut forwarded = Vec::new();
    for (url, fetcher) in &spellings {
        let (status, _, _) = post(&send, &[], json!({"webhook": url}).to_string()).await;
        if status != 403 {
            forwarded.push(format!("{url} ({fetcher} connects)"));
        }
    }
    assert!(forwarded.is_empty(), "reached the sink: {forwarded:#?}");
    assert!(tool.seen().is_empty(), "no refused call reached the tool: {:?}", tool.seen());
}

#[tokio::test]
async fn every_redirect_a_real_client_follows_off_the_upstream_is_judged() {
    let target = Target::start(None).await;
    let port = target.port;
    let locations = [
        (format!("http://127.0.0.1%3a{port}/percent"), "python"),
        (format!("/\t/127.0.0.1:{port}/tab"), "python"),
        (format!("/\t/127.0.0.1:{port}/tab-node"), "node"),
        (format!("\\/127.0.0.1:{port}/backslash-slash"), "node"),
        (format!("http:\\\\127.0.0.1:{port}\\no-slashes"), "node"),
    ];
    // The control: the plain spelling of the same place is withheld.
    let mut all = vec![(format!("http://127.0.0.1:{port}/plain"), "python")];
    all.extend(locations.iter().cloned());
    let mut relayed = Vec::new();
    for (i, (location, fetcher)) in all.iter().enumerate() {
        let web = Target::start(Some(location.clone())).await;
        // The premise: the fetcher follows the upstream's redirect to the target.
        let before = target.seen().len();
        fetch_with(fetcher, &format!("{}/redirect", web.base())).await;
        assert_eq!(target.seen().len(), before + 1, "{fetcher} follows {location:?}: {:?}", target.seen());

        let p = proxy(&parse(&format!(
            "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0 }}\nposture: auto\n\
             upstreams:\n  web: {{ url: \"{}\" }}\n",
            web.base()
        )))
        .await;
        let (status, headers, body) = post(&format!("http://{}/http/web/redirect", p.addr), &[], "{}").await;
        if i == 0 {
            assert!(status == 403 && headers.get("location").is_none(), "the control: {status} {body}");
        } else if status != 403 || headers.get("location").is_some() {
            relayed.push(location.clone());
        }
    }
    assert!(relayed.is_empty(), "relayed to the agent, which follows them to loopback: {relayed:?}");
}

#[tokio::test]
async fn loopback_spelled_every_way_a_reader_knows_never_reaches_a_sink() {
    let target = Target::start(None).await;
    let port = target.port;
    let urls = [
        format!("HtTp://127.1:{port}/a"),
        format!("http://0x7f.0.0.1:{port}/b"),
        format!("http://2130706433:{port}/c"),
        format!("http://0177.0.0.1:{port}/d"),
        format!("http://[::ffff:127.0.0.1]:{port}/e"),
        format!("http://127.0.0.1.:{port}/f"),
        format!("http://%31%32%37.0.0.1:{port}/g"),
        format!("http://127。0。0。1:{port}/h"),
        format!("http://docs.rs@127.0.0.1:{port}/i"),
        format!("http://LOCALHOST:{port}/j"),
        format!("http://127.0.0.1:{port}\\@docs.rs/k"),
        format!("http://127.0.0.1%2e:{port}/l"),
        format!(" http://127.0.0.1:{port}/m"),
    ];
    // The premise: urllib connects to most of these (it is what web_post runs).
    for url in &urls {
        fetch_with("python", url).await;
    }
    let reached = target.seen().len();
    assert!(reached >= 8, "urllib reaches loopback through most spellings: {:?}", target.seen());

    let peer = Peer::python("legacy");
    let p = proxy(&py_sink(&peer)).await;
    let args: Vec<String> = urls.iter().map(|u| json!({"url": u, "body": "x"}).to_string()).collect();
    // And a URL in a JSON document in the body (a webhook whose payload names a callback).
    let nested = json!({"url": "https://hooks.example/x",
        "body": json!({"callback": format!("http://127.0.0.1:{port}/n")}).to_string()})
    .to_string();
    let mut steps: Vec<&str> = Vec::new();
    for a in args.iter().chain([&nested]) {
        steps.extend(["call", "web_post", a]);
    }
    let out = py_client(&proxy_url(&p, "py"), "legacy", &steps).await;
    for (i, step) in out.iter().enumerate() {
        assert!(text_of(step).contains("egress: loopback"), "step {i}: {step}");
    }
    assert!(peer.tools_run().is_empty(), "{:?}", peer.tools_run());
    assert_eq!(target.seen().len(), reached, "nothing reached loopback through the proxy");
}

/// Claude Code's `Bash` through the standalone hook at the auto posture: only egress refuses.
async fn bash_at_auto(command: &str) -> serde_json::Value {
    let policy = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(policy.path(), "posture: auto\n").unwrap();
    let stdin = json!({"hook_event_name": "PreToolUse", "session_id": "e-1", "cwd": "/tmp",
        "tool_name": "Bash", "tool_input": {"command": command}})
    .to_string();
    let args = ["pre", "--config", policy.path().to_str().unwrap()];
    crate::hook::hook(&args, stdin.as_bytes(), &[("PORTCULLIS_SANDBOX", "1"), ("SHELL", "/bin/bash")]).await.0
}

#[tokio::test]
async fn curl_reaching_loopback_through_globs_or_connection_overrides_is_refused() {
    let target = Target::start(None).await;
    let port = target.port;
    let lines = [
        format!("curl -s 'http://12[6-7].0.0.1:{port}/glob-range'"),
        format!("curl -s 'http://127.0.0.{{1}}:{port}/glob-set'"),
        format!("curl -s --connect-to ::127.0.0.1:{port} http://docs.rs/connect-to"),
        format!("curl -s --resolve docs.rs:{port}:127.0.0.1 http://docs.rs:{port}/resolve"),
    ];
    let control = bash_at_auto(&format!("curl -s http://127.0.0.1:{port}/plain")).await;
    assert_eq!(control["hookSpecificOutput"]["permissionDecision"], "deny", "{control}");
    for line in &lines {
        // The premise: real bash and curl reach the target with this exact line.
        let before = target.seen().len();
        let st = Command::new("bash").args(["-c", line.as_str()]).kill_on_drop(true).status().await.unwrap();
        assert!(target.seen().len() > before, "{line} ({st}) reaches loopback: {:?}", target.seen());
    }
    let mut allowed = Vec::new();
    for line in &lines {
        let answer = bash_at_auto(line).await;
        if answer["hookSpecificOutput"]["permissionDecision"] != "deny" {
            allowed.push(line.clone());
        }
    }
    assert!(allowed.is_empty(), "allowed, and curl reaches loopback: {allowed:#?}");
}

#[tokio::test]
async fn a_line_that_connects_to_loopback_by_a_bare_host_is_refused_whatever_the_program() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(stream);
        }
    });
    let lines = [
        format!("redis-cli -h 127.0.0.1 -p {port} ping"),
        format!("psql -h 127.0.0.1 -p {port} -c 'select 1'"),
        format!("ssh -o BatchMode=yes -o ConnectTimeout=3 -p {port} 127.0.0.1 true"),
        format!("openssl s_client -connect 127.0.0.1:{port} </dev/null"),
        format!(r#"perl -MIO::Socket::INET -e 'IO::Socket::INET->new("127.0.0.1:{port}")'"#),
    ];
    let control = bash_at_auto(&format!("curl -s http://127.0.0.1:{port}/")).await;
    assert_eq!(control["hookSpecificOutput"]["permissionDecision"], "deny", "{control}");
    let mut allowed = Vec::new();
    for line in &lines {
        // The premise: the program really connects.
        let before = accepted.load(std::sync::atomic::Ordering::SeqCst);
        let timed = format!("timeout 10 {line}");
        let _ = Command::new("bash").args(["-c", timed.as_str()]).kill_on_drop(true).output().await.unwrap();
        let after = accepted.load(std::sync::atomic::Ordering::SeqCst);
        assert!(after > before, "{line} connects");
        let answer = bash_at_auto(line).await;
        if answer["hookSpecificOutput"]["permissionDecision"] != "deny" {
            allowed.push(line.clone());
        }
    }
    assert!(allowed.is_empty(), "allowed, and each connects to loopback: {allowed:#?}");
}

#[tokio::test]
async fn every_way_curl_or_wget_is_sent_to_loopback_besides_its_url_is_refused() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(stream);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    std::fs::write(&cfg, format!("url = \"http://127.0.0.1:{port}/from-config\"\n")).unwrap();
    let urls = dir.path().join("urls");
    std::fs::write(&urls, format!("http://127.0.0.1:{port}/from-list\n")).unwrap();
    let (cfg, urls) = (cfg.display(), urls.display());
    let lines = [
        format!("curl -s --max-time 3 --proxy 127.0.0.1:{port} http://docs.rs/"),
        format!("curl -s --max-time 3 --socks5 localhost:{port} http://docs.rs/"),
        format!("curl -s --max-time 3 --socks5-hostname 127.0.0.1:{port} http://docs.rs/"),
        format!("curl -s --max-time 3 --doh-url https://127.0.0.1:{port}/dns-query http://docs.rs/"),
        format!("http_proxy=http://127.0.0.1:{port} curl -s --max-time 3 http://docs.rs/"),
        format!("http_proxy=127.0.0.1:{port} curl -s --max-time 3 http://docs.rs/"),
        format!("curl -s --max-time 3 -K {cfg}"),
        format!("wget -q -T 3 -t 1 -O /dev/null -i {urls}"),
    ];
    let mut allowed = Vec::new();
    for line in &lines {
        // The premise: real bash and curl or wget connect to the listener with this exact line.
        let before = accepted.load(std::sync::atomic::Ordering::SeqCst);
        // (Each line bounds its own time: a `timeout` prefix would make `http_proxy=` a program.)
        let _ = Command::new("bash").args(["-c", line.as_str()]).kill_on_drop(true).output().await.unwrap();
        assert!(accepted.load(std::sync::atomic::Ordering::SeqCst) > before, "{line} connects");
        let answer = bash_at_auto(line).await;
        if answer["hookSpecificOutput"]["permissionDecision"] != "deny" {
            allowed.push(line.clone());
        }
    }
    assert!(allowed.is_empty(), "allowed, and each connects to loopback: {allowed:#?}");
}
