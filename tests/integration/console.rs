//! The operator console (`GET /console` on the admin listener) in a real browser: Debian's
//! headless Chromium, driven through Debian's ChromeDriver over WebDriver (plain HTTP JSON, sent
//! with hyper). An operator types the token, sees the parked call, clicks "Allow once", and the
//! agent's call completes with the tool's real answer; a flagged session is cleared the same way.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::LEGACY;
use crate::support::{get, post, proxy, proxy_url, rpc_body, text_of, Peer};

#[path = "console_browser.rs"]
mod browser;
#[path = "console_demo.rs"]
mod demo;
#[path = "console_table.rs"]
mod table;

pub(crate) use browser::{Browser, ELEMENT, PATIENCE};

async fn open(url: &str) -> String {
    crate::support::open_legacy_session(url).await
}

/// Starts a call in the background; its answer arrives when someone decides.
fn call(url: &str, session: &str, id: u64, tool: &str, args: Value) -> tokio::task::JoinHandle<Value> {
    call_as(url, session, id, tool, args, "Bearer console-test-agent")
}

/// [`call`] as another caller (`authorization`): streaks are kept per caller as well as session.
fn call_as(
    url: &str,
    session: &str,
    id: u64,
    tool: &str,
    args: Value,
    authorization: &str,
) -> tokio::task::JoinHandle<Value> {
    let (url, session, tool, auth) =
        (url.to_owned(), session.to_owned(), tool.to_owned(), authorization.to_owned());
    tokio::spawn(async move {
        let body =
            json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":args}});
        let h = [
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", LEGACY),
            ("authorization", auth.as_str()),
        ];
        rpc_body(&post(&url, &h, body.to_string()).await.2)
    })
}

/// `GET {admin}{path}` with the token, as JSON.
async fn admin_get(admin: &str, path: &str, token: &str) -> (u16, Value) {
    let bearer = format!("Bearer {token}");
    let (status, _, body) = get(&format!("{admin}{path}"), &[("authorization", &bearer)]).await;
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

#[tokio::test]
async fn an_operator_allows_a_parked_call_from_the_console_in_headless_chromium() {
    let token_env = "PORTCULLIS_TEST_ADMIN_TOKEN_CONSOLE";
    let token = "console-operator-token-9d2c41";
    std::env::set_var(token_env, token);
    let peer = Peer::python("legacy");
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\nupstreams:\n  py: {{ url: \"{}\" }}\n\
         permissions: {{ ask: [mcp__py__echo], deny: [mcp__py__add] }}\napprovals: {{ channel: api, timeout: 60s }}\naudit: {{ to: off, recent: 50 }}\n",
        peer.url()
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let (url, admin) = (proxy_url(&p, "py"), format!("http://{}", p.admin_addr));

    // The page: served without the token (a browser cannot send one on navigation) and holding
    // nothing worth one — no data, no token, nothing loaded from anywhere else.
    let (status, headers, page) = get(&format!("{admin}/console"), &[]).await;
    assert_eq!(status, 200);
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    assert!(header("content-type").starts_with("text/html"), "{headers:?}");
    let csp = header("content-security-policy");
    for part in ["default-src 'none'", "script-src 'sha256-", "style-src 'sha256-", "connect-src 'self'"] {
        assert!(csp.contains(part), "CSP lacks {part}: {csp}");
    }
    assert!(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"), "{csp}");
    assert_eq!(header("x-frame-options"), "DENY");
    assert_eq!(header("cache-control"), "no-store");
    assert!(!page.contains(token), "the page holds no token");
    let lower = page.to_ascii_lowercase();
    for external in ["src=", "href=", "http:", "https:", "url(", "@import"] {
        assert!(!lower.contains(external), "the page refers to something external ({external})");
    }

    // Without the token the admin API refuses.
    for path in ["/approvals", "/status"] {
        assert_eq!(get(&format!("{admin}{path}"), &[]).await.0, 401, "{path}");
        assert_eq!(admin_get(&admin, path, "not-the-token").await.0, 401, "{path}");
    }

    // A session refused three times in a row (add is denied) is flagged, and so is its caller (a
    // different agent from the one whose calls are parked below).
    let hammering = open(&url).await;
    for id in 1..=3 {
        let msg = call_as(&url, &hammering, id, "add", json!({"a": 1, "b": 2}), "Bearer hammering-agent")
            .await
            .unwrap();
        assert!(text_of(&msg).contains("portcullis denied"), "{msg}");
    }
    let (_, s) = admin_get(&admin, "/status", token).await;
    let flagged: Vec<&str> =
        s["flagged_sessions"].as_array().unwrap().iter().filter_map(|f| f["session"].as_str()).collect();
    assert!(flagged.contains(&hammering.as_str()), "{s}");
    // The caller is flagged too, and so is the address its unverified token came from.
    assert_eq!(flagged.iter().filter(|f| f.starts_with("caller:")).count(), 2, "{s}");
    assert_eq!(flagged.len(), 3, "{s}");

    // write_note has no allow rule: the built-in floor asks and the call is parked. Its arguments
    // carry markup, as an attacker's would.
    let session = open(&url).await;
    let markup = "<img src=x onerror=document.title='pwned'><b>bold</b>";
    let parked = call(&url, &session, 1, "write_note", json!({"path": "a", "text": markup}));
    // echo is asked by a configured rule: it can be allowed once, never for the session.
    let asked = call(&url, &session, 2, "echo", json!({"message": "configured"}));
    let start = Instant::now();
    let (id, echo_id) = loop {
        let (_, list) = admin_get(&admin, "/approvals", token).await;
        let of = |tool: &str| {
            let ends = |a: &&Value| a["tool"].as_str().is_some_and(|t| t.ends_with(tool));
            list["pending"].as_array()?.iter().find(ends)?["id"].as_u64()
        };
        if let (Some(a), Some(b)) = (of("__write_note"), of("__echo")) {
            break (a, b);
        }
        assert!(start.elapsed() < PATIENCE, "the calls were never parked: {list}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(peer.tools_run().is_empty(), "nothing runs while it waits");

    let b = Browser::start().await;
    b.goto(&format!("{admin}/console")).await;
    let field = b.find("#token").await;
    b.type_into(&field, token).await;
    b.click(&b.find("#connect").await).await;

    let card = format!(".approval[data-id=\"{id}\"]");
    let shown = b
        .wait_for(
            "the parked call in the console",
            "var c = document.querySelector(arguments[0]); return c ? c.innerText : null;",
            json!([card]),
            |v| v.is_string(),
        )
        .await;
    let shown = shown.as_str().unwrap();
    for part in ["write_note", "floor", session.as_str(), markup, "Allow once", "Allow for session", "Deny"] {
        assert!(shown.contains(part), "the card lacks {part:?}:\n{shown}");
    }
    // The arguments were shown as text, never parsed as markup.
    let dom = b
        .js(
            "return {imgs: document.getElementsByTagName('img').length, bolds: document.getElementsByTagName('b').length, \
             title: document.title, url: location.href, html: document.documentElement.outerHTML, \
             stored: sessionStorage.getItem('portcullis.admin.token'), \
             resources: performance.getEntriesByType('resource').map(function (e) { return e.name; })};",
            json!([]),
        )
        .await;
    assert_eq!(dom["imgs"], 0, "markup in arguments became elements");
    assert_eq!(dom["bolds"], 0, "markup in arguments became elements");
    assert_eq!(dom["title"], "portcullis console");
    // The token is in this tab's session storage, not in the address or the document.
    assert_eq!(dom["stored"], token);
    assert!(!dom["url"].as_str().unwrap().contains(token), "{}", dom["url"]);
    assert!(!dom["html"].as_str().unwrap().contains(token), "the document holds the token");
    // Everything the page fetched came from the admin listener itself.
    let resources = dom["resources"].as_array().unwrap();
    assert!(!resources.is_empty(), "the page polls the admin API");
    for r in resources {
        assert!(r.as_str().unwrap().starts_with(&format!("{admin}/")), "external resource {r}");
    }

    // A reload keeps the token (session storage) and shows the same call again.
    b.refresh().await;
    b.wait_for(
        "the parked call after a reload",
        "return !!document.querySelector(arguments[0]);",
        json!([card]),
        |v| v == &json!(true),
    )
    .await;

    // The caller's card says what its key is: here a credential, which is never shown.
    b.wait_for(
        "the flagged caller described",
        "var c = Array.from(document.querySelectorAll('.flagged')) \
         .find(function (c) { return c.dataset.session.indexOf('caller:') === 0; }); \
         var w = c && c.querySelector('.who'); return w ? w.textContent : null;",
        json!([]),
        |v| {
            v.as_str()
                .is_some_and(|t| t.contains("Authorization credential") && !t.contains("hammering-agent"))
        },
    )
    .await;
    // The flagged session, its caller and its address are listed; "Clear" clears each at the API.
    let cards = [
        ("the flagged session", hammering.as_str()),
        ("the flagged caller", "caller:"),
        ("the flagged address", "caller:"),
    ];
    for (what, prefix) in cards {
        let clear = b
            .wait_for(
                what,
                "var s = arguments[0]; var c = Array.from(document.querySelectorAll('.flagged')) \
                 .find(function (c) { return c.dataset.session.indexOf(s) === 0 \
                   && !c.querySelector('button.clear').disabled; }); \
                 return c ? c.querySelector('button.clear') : null;",
                json!([prefix]),
                |v| v.get(ELEMENT).is_some(),
            )
            .await;
        b.click(clear[ELEMENT].as_str().unwrap()).await;
    }
    let start = Instant::now();
    loop {
        let (_, s) = admin_get(&admin, "/status", token).await;
        if s["flagged_sessions"].as_array().is_some_and(|a| a.is_empty()) {
            break;
        }
        assert!(start.elapsed() < PATIENCE, "the session was never cleared: {s}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // "Allow once": the parked call goes to the upstream and the agent gets its real answer.
    b.click(&b.find(&format!("{card} button.allow-once")).await).await;
    let msg = tokio::time::timeout(PATIENCE, parked).await.expect("the call was released").unwrap();
    assert_eq!(text_of(&msg), format!("wrote {} bytes to a", markup.len()), "{msg}");
    assert_eq!(peer.tools_run(), ["write_note"]);
    b.wait_for(
        "the decided call to leave the console",
        "return !document.querySelector(arguments[0]) && document.getElementById('approvals-msg').innerText;",
        json!([card]),
        |v| v.as_str().is_some_and(|t| t.contains(&format!("call {id}: allow once"))),
    )
    .await;

    // The configured ask offers no "Allow for session"; "Deny" refuses it and the tool never runs.
    let echo_card = format!(".approval[data-id=\"{echo_id}\"]");
    let offered = b
        .js(
            "var c = document.querySelector(arguments[0]); return c && {text: c.innerText, \
             session: !!c.querySelector('button.allow-session')};",
            json!([echo_card]),
        )
        .await;
    assert_eq!(offered["session"], false, "{offered}");
    assert!(offered["text"].as_str().unwrap().contains("configured ask: allow once only"), "{offered}");
    b.click(&b.find(&format!("{echo_card} button.deny")).await).await;
    let msg = tokio::time::timeout(PATIENCE, asked).await.expect("the call was answered").unwrap();
    assert_eq!(msg["result"]["isError"], true, "{msg}");
    assert!(text_of(&msg).contains("An operator denied it"), "{msg}");
    assert_eq!(peer.tools_run(), ["write_note"], "the denied call never ran");
    assert!(peer.calls_received().iter().all(|t| t == "write_note"), "no refused call reached the upstream");
    b.wait_for(
        "an empty console",
        "return document.querySelectorAll('.approval, .flagged').length === 0 && \
         document.getElementById('approvals-empty').innerText;",
        json!([]),
        |v| v.as_str().is_some_and(|t| t.contains("No call is waiting")),
    )
    .await;

    // Recent decisions: this proxy keeps the audit log's latest entries (`audit: { to: off, recent }`).
    let (status, decisions) = admin_get(&admin, "/decisions", token).await;
    {
        assert_eq!(status, 200, "{decisions}");
        assert!(decisions["decisions"].as_array().is_some_and(|d| !d.is_empty()), "{decisions}");
        b.wait_for(
            "the audited decisions in the console",
            "return document.querySelectorAll('.decision').length;",
            json!([]),
            |v| v.as_u64().is_some_and(|n| n > 0),
        )
        .await;
    }
    let metrics = String::from_utf8(p.metrics.render()).unwrap();
    assert!(metrics.contains(r#"portcullis_approvals_total{decision="allow_once"} 1"#), "{metrics}");
    assert!(metrics.contains(r#"portcullis_approvals_total{decision="deny"} 1"#), "{metrics}");
    b.quit().await;
}

#[tokio::test]
async fn without_an_admin_token_the_console_is_not_served() {
    let p = proxy(&crate::support::config(&[], "")).await;
    let (status, _, body) = get(&format!("http://{}/console", p.admin_addr), &[]).await;
    assert_eq!(status, 404);
    assert!(body.contains("admin.token_env"), "{body}");
}
