//! `secrets:` against real peers: a Python SDK server that shows its token in a result, and a
//! plain HTTP tool server; the agent sees sentinels, allowed destinations get the value.

use base64::Engine;

use crate::support::*;

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

#[tokio::test]
async fn the_agent_sees_a_sentinel_and_only_the_allowed_tool_receives_the_value() {
    let token = "ghp_Integr4tionT0ken9xQ";
    std::env::set_var("PORTCULLIS_IT_SECRET_GH", token);
    let peer = Peer::start("python3", &["secret_server.py", "--token-env", "PORTCULLIS_IT_SECRET_GH"]);
    let secrets = "secrets: [{ name: github, env: PORTCULLIS_IT_SECRET_GH, to: [\"mcp__gh__use_token\"] }]\n";
    let p = proxy(&config(&[("gh", &peer.url())], &format!("{ALLOW_ALL}{secrets}"))).await;
    let leaked = format!(r#"{{"text":"x {token}"}}"#);
    let out = py_client(
        &proxy_url(&p, "gh"),
        "legacy",
        &[
            "call",
            "whoami",
            "{}",
            "call",
            "use_token",
            r#"{"auth":"Bearer portcullis:secret:github"}"#,
            "call",
            "note",
            r#"{"text":"portcullis:secret:github"}"#,
            "call",
            "note",
            &leaked,
        ],
    )
    .await;
    let all = serde_json::to_string(&out).unwrap();
    assert!(!all.contains(token), "the agent never sees the value: {all}");
    assert!(!all.contains(&b64(token)[..16]), "nor its base64: {all}");
    let shown = text_of(&out[0]);
    assert!(shown.starts_with("logged in as octocat with portcullis:secret:github "), "{shown}");
    assert_eq!(text_of(&out[1]), "used", "{:?}", out[1]);
    for refused in &out[2..4] {
        assert_eq!(refused["result"]["isError"], true, "{refused}");
        let why = text_of(refused);
        assert!(why.contains("github") && why.contains("mcp__gh__note"), "{why}");
    }
    let received: Vec<serde_json::Value> =
        peer.journal().into_iter().filter(|l| l["tool"] == "use_token" || l["tool"] == "note").collect();
    assert_eq!(received.len(), 1, "the refused calls never reached the upstream: {received:?}");
    assert_eq!(received[0]["args"]["auth"], format!("Bearer {token}"), "the upstream got the value");
}

#[tokio::test]
async fn a_plain_http_tool_under_the_to_url_gets_the_value_and_another_host_is_refused() {
    let value = "svc-T0ken-4-http-tools";
    std::env::set_var("PORTCULLIS_IT_SECRET_SVC", value);
    let allowed = crate::http_tools::tool_server().await;
    let other = crate::http_tools::tool_server().await;
    let extra = format!(
        "{ALLOW_ALL}secrets: [{{ name: svc, env: PORTCULLIS_IT_SECRET_SVC, to: [\"{}/v1/\"] }}]\n",
        allowed.url
    );
    let p = proxy(&config(&[("svc", &allowed.url), ("other", &other.url)], &extra)).await;
    let base = format!("http://{}/http", p.addr);
    let sentinel = r#"{"auth":"portcullis:secret:svc"}"#;

    let (status, _, body) = post(&format!("{base}/svc/v1/issues"), &[], sentinel).await;
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains(value), "the echoed value comes back as its sentinel: {body}");
    assert!(body.contains("portcullis:secret:svc"), "{body}");
    let seen = allowed.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].2, format!(r#"{{"auth":"{value}"}}"#), "the upstream got the value in valid JSON");

    for (url, args) in [
        (format!("{base}/svc/v2/issues"), sentinel.to_owned()),
        (format!("{base}/other/v1/issues"), sentinel.to_owned()),
        (format!("{base}/svc/v1/issues"), format!(r#"{{"auth":"{value}"}}"#)),
    ] {
        let (status, _, body) = post(&url, &[], &args).await;
        assert_eq!(status, 403, "{url} {args}: {body}");
        assert!(body.contains("svc") && !body.contains(value), "{body}");
    }
    assert_eq!(allowed.seen.lock().unwrap().len(), 1, "no refused call reached the allowed host");
    assert!(other.seen.lock().unwrap().is_empty(), "nothing reached the other host");
}

#[tokio::test]
async fn the_checker_reads_the_sentinel_in_both_phases_and_never_the_value() {
    use crate::support::fake_checker::{FakeChecker, Reply};
    let token = "ghp_Ch3ckerNeverSeesIt7";
    std::env::set_var("PORTCULLIS_IT_SECRET_CHECKED", token);
    let peer = Peer::start("python3", &["secret_server.py", "--token-env", "PORTCULLIS_IT_SECRET_CHECKED"]);
    let fake = FakeChecker::replying(Reply::Safe).await;
    let yaml = format!(
        "{ALLOW_ALL}secrets: [{{ name: github, env: PORTCULLIS_IT_SECRET_CHECKED, to: [\"mcp__gh__use_token\"] }}]\n\
         guardrails:\n  checker: {{ base_url: \"{}\", model: fake-judge, timeout: 5s }}\n  min_content_bytes: 0\n  \
         rules: [{{ match: \"mcp__gh__*\", phases: [pre, post] }}]\n",
        fake.url
    );
    let p = proxy(&config(&[("gh", &peer.url())], &yaml)).await;
    let out = py_client(
        &proxy_url(&p, "gh"),
        "legacy",
        &["call", "whoami", "{}", "call", "use_token", r#"{"auth":"portcullis:secret:github"}"#],
    )
    .await;
    assert!(text_of(&out[0]).contains("portcullis:secret:github"), "{:?}", out[0]);
    assert_eq!(text_of(&out[1]), "used", "{:?}", out[1]);
    let seen: Vec<String> = fake.requests().iter().map(|r| r.data().to_owned()).collect();
    assert!(seen.len() >= 3, "whoami's result, use_token's arguments and result were checked: {seen:?}");
    assert!(seen.iter().all(|d| !d.contains(token)), "{seen:?}");
    assert!(seen.iter().filter(|d| d.contains("portcullis:secret:github")).count() >= 2, "{seen:?}");
    let used = peer.journal().into_iter().find(|l| l["tool"] == "use_token").expect("use_token ran");
    assert_eq!(used["args"]["auth"], token, "the value went in after the check");
}

#[tokio::test]
async fn over_wrap_the_agent_sees_the_sentinel_and_the_stdio_server_gets_the_value() {
    let token = "ghp_Stdi0WrapT0kenQ9x";
    let dir = tempfile::tempdir().unwrap();
    let (cfg, journal, token_file) =
        (dir.path().join("portcullis.yaml"), dir.path().join("journal.jsonl"), dir.path().join("token"));
    std::fs::write(&token_file, token).unwrap();
    std::fs::write(
        &cfg,
        "permissions: { allow: [\"mcp__*\"] }\n\
         secrets: [{ name: github, env: PORTCULLIS_IT_SECRET_STDIO, to: [\"mcp__gh__use_token\"] }]\n",
    )
    .unwrap();
    let server = peers_dir().join("secret_server.py");
    let var = format!("PORTCULLIS_IT_SECRET_STDIO={token}");
    // The SDK's stdio client passes the child only a few variables: `env` sets the proxy's.
    let argv = serde_json::to_string(&[
        "env",
        &var,
        env!("CARGO_BIN_EXE_portcullis"),
        "wrap",
        "--config",
        cfg.to_str().unwrap(),
        "--name",
        "gh",
        "--",
        "python3",
        server.to_str().unwrap(),
        "--stdio",
        "--token-file",
        token_file.to_str().unwrap(),
        "--journal",
        journal.to_str().unwrap(),
    ])
    .unwrap();
    let out = py_client_stdio(
        &argv,
        &[
            "call",
            "whoami",
            "{}",
            "call",
            "use_token",
            r#"{"auth":"portcullis:secret:github"}"#,
            "call",
            "note",
            r#"{"text":"portcullis:secret:github"}"#,
        ],
    )
    .await;
    assert_eq!(out.len(), 3, "{out:?}");
    let all = serde_json::to_string(&out).unwrap();
    assert!(!all.contains(token), "{all}");
    assert!(text_of(&out[0]).contains("with portcullis:secret:github"), "{}", out[0]);
    assert_eq!(text_of(&out[1]), "used", "{}", out[1]);
    assert_eq!(out[2]["result"]["isError"], true, "{}", out[2]);
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&journal)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|l: &serde_json::Value| l["tool"] != "whoami")
        .collect();
    assert_eq!(lines.len(), 1, "the refused note never reached the server: {lines:?}");
    assert_eq!(lines[0]["args"]["auth"], token);
}
