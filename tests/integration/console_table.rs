//! The console an operator works in, in headless Chromium set to another time zone: the
//! decisions table filled by real calls (the Python SDK client through the proxy to a Python SDK
//! server and to server-everything), its filters, search and detail view, local times, the
//! checker named when it is `checker: local`, a flagged caller's address and user agent, and a
//! pending ask's countdown. Saves the screenshot the integrator reviews to `target/console.png`.

use std::time::Instant;

use http::Method;
use serde_json::json;

use super::{admin_get, open, Browser, ELEMENT, PATIENCE};
use crate::support::{post, proxy, proxy_url, py_client, rpc_body, text_of, Peer, LEGACY};

/// The browser's zone: UTC+05:30 all year, so a time shown in UTC (or in the test host's zone)
/// cannot pass for it.
const ZONE: &str = "Asia/Kolkata";
const ZONE_OFFSET_S: u64 = 5 * 3600 + 30 * 60;

/// `HH:MM:SS` of Unix milliseconds `ms` in [`ZONE`].
fn clock_in_zone(ms: u64) -> String {
    let s = (ms / 1000 + ZONE_OFFSET_S) % 86_400;
    format!("{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

/// The seconds a countdown ("times out in 4m 59s", "times out in 42s") says are left.
fn seconds_left(text: &str) -> Option<u64> {
    let rest = text.strip_prefix("times out in ")?;
    let mut total = 0;
    for part in rest.split_whitespace() {
        let (n, unit) = part.split_at(part.len().checked_sub(1)?);
        let n: u64 = n.parse().ok()?;
        total += match unit {
            "h" => n * 3600,
            "m" => n * 60,
            "s" => n,
            _ => return None,
        };
    }
    Some(total)
}

#[test]
fn a_countdown_is_read_back_in_seconds() {
    assert_eq!(seconds_left("times out in 4m 59s"), Some(299));
    assert_eq!(seconds_left("times out in 42s"), Some(42));
    assert_eq!(seconds_left("timing out now"), None);
    assert_eq!(clock_in_zone(0), "05:30:00");
}

/// The visible rows' cells of class `column`.
async fn column(b: &Browser, column: &str) -> Vec<String> {
    let v = b
        .js(
            "return Array.from(document.querySelectorAll('#decisions tr.decision td.' + arguments[0])) \
             .map(function (td) { return td.textContent; });",
            json!([column]),
        )
        .await;
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()).collect()
}

/// Picks `value` in the filter `select` with a real click on its option.
async fn pick(b: &Browser, select: &str, value: &str) {
    b.click(&b.find(&format!("{select} option[value=\"{value}\"]")).await).await;
}

#[tokio::test]
async fn the_console_tables_real_decisions_in_local_time_filters_them_and_counts_down_an_ask() {
    let token_env = "PORTCULLIS_TEST_ADMIN_TOKEN_CONSOLE_TABLE";
    let token = "console-table-operator-7f3a90c1";
    std::env::set_var(token_env, token);
    let (py, ev) = (Peer::python("legacy"), Peer::everything());
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\nupstreams:\n  py: {{ url: \"{}\" }}\n  ev: {{ url: \"{}\" }}\n\
         permissions: {{ allow: [mcp__py__echo, mcp__ev__echo, mcp__ev__get-sum], deny: [mcp__py__add] }}\n\
         approvals: {{ channel: api, timeout: 300s }}\naudit: {{ to: off, recent: 100 }}\nguardrails: {{ checker: local }}\n",
        py.url(),
        ev.url()
    );
    let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
    let (py_url, ev_url, admin) =
        (proxy_url(&p, "py"), proxy_url(&p, "ev"), format!("http://{}", p.admin_addr));

    // Real traffic from the Python SDK client: allowed and denied calls on two upstreams, then a
    // session refused three times in a row, which flags it and the address it calls from.
    let out = py_client(
        &py_url,
        "legacy",
        &["call", "echo", r#"{"message":"from the table test"}"#, "call", "add", r#"{"a":1,"b":2}"#],
    )
    .await;
    assert_eq!(text_of(&out[0]), "from the table test", "{out:?}");
    assert!(text_of(&out[1]).contains("portcullis denied"), "{out:?}");
    let out = py_client(
        &ev_url,
        "legacy",
        &["call", "echo", r#"{"message":"hi ev"}"#, "call", "get-sum", r#"{"a":2,"b":3}"#],
    )
    .await;
    assert!(text_of(&out[0]).contains("hi ev"), "{out:?}");
    let add = r#"{"a":4,"b":5}"#;
    let out =
        py_client(&py_url, "legacy", &["call", "add", add, "call", "add", add, "call", "add", add]).await;
    assert!(out.iter().all(|o| text_of(o).contains("portcullis denied")), "{out:?}");
    let (_, status) = admin_get(&admin, "/status", token).await;
    assert_eq!(status["checker"]["kind"], "local", "{status}");
    let address = status["flagged_sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["caller"]["kind"] == "address")
        .unwrap_or_else(|| panic!("the address is flagged: {status}"))
        .clone();
    let user_agent =
        address["caller"]["user_agent"].as_str().expect("the client sent a User-Agent").to_owned();
    assert!(!user_agent.is_empty() && address["caller"]["address"] == "127.0.0.1", "{address}");

    // A call with no rule: the floor asks an operator, who has five minutes.
    let session = open(&py_url).await;
    let parked = {
        let (url, session) = (py_url.clone(), session.clone());
        tokio::spawn(async move {
            let body = json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_note","arguments":{"path":"n","text":"hello"}}});
            let h = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", LEGACY)];
            rpc_body(&post(&url, &h, body.to_string()).await.2)
        })
    };
    let start = Instant::now();
    let ask = loop {
        let (_, list) = admin_get(&admin, "/approvals", token).await;
        if let Some(a) = list["pending"].as_array().and_then(|l| l.first()) {
            break a.clone();
        }
        assert!(start.elapsed() < PATIENCE, "never parked: {list}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let deadline = ask["deadline"].as_u64().expect("GET /approvals gives each ask a deadline");
    assert_eq!(deadline, ask["since"].as_u64().unwrap() + 300, "{ask}");
    let (_, decisions) = admin_get(&admin, "/decisions", token).await;
    let decisions = decisions["decisions"].as_array().unwrap().clone();
    assert!(decisions.len() >= 8, "{decisions:?}");

    let b = Browser::start_with(&[("TZ", ZONE)]).await;
    b.window(1400, 1750).await;
    b.goto(&format!("{admin}/console")).await;
    b.type_into(&b.find("#token").await, token).await;
    b.click(&b.find("#connect").await).await;

    // Every audited decision is a row, newest first, its time the browser's local time.
    let rows = b
        .wait_for(
            "the decisions table",
            "return document.querySelectorAll('#decisions tr.decision').length;",
            json!([]),
            |v| v.as_u64().is_some_and(|n| n as usize >= decisions.len()),
        )
        .await;
    let total = rows.as_u64().unwrap() as usize;
    let tools = column(&b, "tool").await;
    for tool in ["mcp__py__echo", "mcp__py__add", "mcp__ev__echo", "mcp__ev__get-sum"] {
        assert!(tools.iter().any(|t| t == tool), "no row for {tool}: {tools:?}");
    }
    let first = b
        .js(
            "var td = document.querySelector('#decisions tr.decision td.time'); \
             return {text: td.textContent, title: td.title, ms: Number(td.dataset.ms), zone: document.getElementById('zone').textContent};",
            json!([]),
        )
        .await;
    let ms = first["ms"].as_u64().unwrap();
    assert_eq!(Some(ms), decisions[0]["ts"].as_u64(), "the newest decision is on top");
    assert!(first["text"].as_str().unwrap().ends_with(&clock_in_zone(ms)), "{first} in {ZONE}");
    assert!(first["title"].as_str().unwrap().ends_with("UTC+05:30"), "{first}");
    // (ICU may name the zone by an older alias, Asia/Calcutta: the offset is what must hold.)
    assert!(first["zone"].as_str().unwrap().contains("(UTC+05:30)"), "{first}");

    // Filters hide rows: one upstream, then one outcome, then a search.
    pick(&b, "#f-upstream", "=ev").await;
    let upstreams = column(&b, "upstream").await;
    let ev_rows = decisions.iter().filter(|d| d["upstream"] == "ev").count();
    assert!(!upstreams.is_empty() && upstreams.len() < total, "{upstreams:?}");
    assert!(upstreams.iter().all(|u| u == "ev") && upstreams.len() == ev_rows, "{upstreams:?}");
    pick(&b, "#f-upstream", "").await;
    pick(&b, "#f-outcome", "=denied").await;
    let outcomes = column(&b, "outcome").await;
    let denied = decisions.iter().filter(|d| d["outcome"] == "denied").count();
    assert!(
        denied >= 4 && outcomes.len() == denied && outcomes.iter().all(|o| o == "denied"),
        "{outcomes:?}"
    );
    pick(&b, "#f-outcome", "").await;
    // No agents are configured: "(none)" keeps every row, as "all" does.
    pick(&b, "#f-agent", "!").await;
    assert_eq!(column(&b, "agent").await.len(), total);
    pick(&b, "#f-agent", "").await;
    let search = b.find("#f-search").await;
    b.type_into(&search, "get-sum").await;
    // Every field is searched: each of get-sum's decisions (before the call and on its result).
    let found = decisions.iter().filter(|d| d.to_string().to_lowercase().contains("get-sum")).count();
    let tools = column(&b, "tool").await;
    assert!(found > 0 && tools.len() == found && tools.iter().all(|t| t == "mcp__ev__get-sum"), "{tools:?}");
    let shown = b.js("return document.getElementById('decisions-shown').textContent;", json!([])).await;
    assert_eq!(shown, json!(format!("showing {found} of {total}")));
    b.cmd(Method::POST, &format!("/element/{search}/clear"), Some(json!({}))).await;
    b.wait_for(
        "every row back",
        "return document.querySelectorAll('#decisions tr.decision').length;",
        json!([]),
        |v| v.as_u64() == Some(total as u64),
    )
    .await;

    // A row opens the whole decision: `GET /decisions/{id}` when the record has an id the API
    // knows, else the record itself; by click, and by keyboard.
    let denied = b
        .js(
            "return Array.from(document.querySelectorAll('#decisions tr.decision')).find(function (r) { \
               return r.querySelector('td.tool').textContent === 'mcp__py__add'; });",
            json!([]),
        )
        .await;
    b.click(denied[ELEMENT].as_str().unwrap()).await;
    let detail = b
        .wait_for(
            "the decision's detail",
            "var d = document.getElementById('detail'); var s = document.getElementById('detail-source').textContent; \
             return d.hidden || s.indexOf('Loading') === 0 ? null : {body: document.getElementById('detail-body').textContent, source: s};",
            json!([]),
            |v| v.is_object(),
        )
        .await;
    assert!(detail["body"].as_str().unwrap().contains("mcp__py__add"), "{detail}");
    assert!(
        detail["source"].as_str().unwrap().contains("/decisions/")
            || detail["source"].as_str().unwrap().contains("no id"),
        "{detail}"
    );
    b.js(
        "Array.from(document.querySelectorAll('#decisions tr.decision')).find(function (r) { \
           return r.querySelector('td.tool').textContent === 'mcp__ev__echo'; }).focus();",
        json!([]),
    )
    .await;
    b.press("\u{E007}").await;
    b.wait_for(
        "Enter on a row to open it",
        "return document.getElementById('detail-title').textContent;",
        json!([]),
        |v| v.as_str().is_some_and(|t| t.ends_with("mcp__ev__echo")),
    )
    .await;

    // The checker is named: the local detectors, not "none".
    let checker = b
        .wait_for(
            "the checker named",
            "var c = document.querySelector('#checker .checker-kind'); return c ? c.textContent : null;",
            json!([]),
            |v| v.is_string(),
        )
        .await;
    assert!(checker.as_str().unwrap().contains("local detectors"), "{checker}");

    // The flagged address says who it is: address, user agent, first seen (local time).
    let key = address["session"].as_str().unwrap();
    let who = b
        .wait_for(
            "the flagged address explained",
            "var k = arguments[0]; var c = Array.from(document.querySelectorAll('.flagged')).find(function (c) { return c.dataset.session === k; }); \
             var w = c && c.querySelector('.who'); return w ? {text: w.textContent, seen: w.querySelector('.first-seen').textContent} : null;",
            json!([key]),
            |v| v.is_object(),
        )
        .await;
    let text = who["text"].as_str().unwrap();
    assert!(text.contains("127.0.0.1") && text.contains(&user_agent), "{who}");
    let first_seen = address["caller"]["first_seen"].as_u64().unwrap() * 1000;
    assert!(
        who["seen"].as_str().unwrap().contains(&format!("{} UTC+05:30", clock_in_zone(first_seen))),
        "{who}"
    );

    // The pending ask counts down to its deadline.
    let card = format!(".approval[data-id=\"{}\"]", ask["id"]);
    let read =
        format!("var c = document.querySelector('{card} .countdown'); return c ? c.textContent : null;");
    let before =
        b.wait_for("the countdown", &read, json!([]), |v| v.as_str().and_then(seconds_left).is_some()).await;
    let before = seconds_left(before.as_str().unwrap()).unwrap();
    assert!((240..=300).contains(&before), "{before}s left of 300");
    let after = b
        .wait_for("the countdown to go down", &read, json!([]), |v| {
            v.as_str().and_then(seconds_left).is_some_and(|s| s < before)
        })
        .await;
    assert!(seconds_left(after.as_str().unwrap()).unwrap() + 5 > before, "{after}");

    let shot = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/console.png");
    b.screenshot(&shot).await;
    println!("console screenshot: {}", shot.display());

    // "Allow always…" with no rule file (`--permission-config`): the API's refusal is shown and
    // the other buttons still work.
    let always_answer = async |b: &Browser| {
        b.click(&b.find(&format!("{card} button.allow-always")).await).await;
        b.wait_for(
            "allow always to answer",
            "if (document.getElementById('always-dialog').open) { return 'dialog'; } \
             var m = document.querySelector('#approvals-msg.always-refused'); return m ? m.textContent : null;",
            json!([]),
            |v| v.is_string(),
        )
        .await
    };
    let refused = always_answer(&b).await;
    assert!(refused.as_str().unwrap().contains("HTTP 409"), "{refused}");
    // With a rule file: the rule and its diff in a dialog. A teammate's edit lands while it is
    // open, so the confirm (which sends the preview's base) is refused and nothing is written
    // (red team R8-3); a second look, confirmed, writes the rule and allows the call.
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.yaml");
    std::fs::write(&rules, "permissions:\n  allow: []\n").unwrap();
    p.shared.approvals.set_rule_file(rules.clone());
    let dialog = async |b: &Browser| {
        b.click(&b.find(&format!("{card} button.allow-always")).await).await;
        b.wait_for(
            "the allow-always dialog",
            "return document.getElementById('always-dialog').open ? 'dialog' : null;",
            json!([]),
            |v| v.is_string(),
        )
        .await
    };
    assert_eq!(dialog(&b).await, "dialog");
    let edited = "# a teammate's comment\npermissions:\n  allow:\n    - mcp__py__echo\n";
    std::fs::write(&rules, edited).unwrap();
    b.click(&b.find("#always-confirm").await).await;
    let stale = b
        .wait_for(
            "the stale confirm to be refused",
            "var m = document.getElementById('approvals-msg'); return m.textContent.indexOf('HTTP 409') >= 0 ? m.textContent : null;",
            json!([]),
            |v| v.is_string(),
        )
        .await;
    assert!(stale.as_str().unwrap().contains("changed since the preview"), "{stale}");
    assert_eq!(std::fs::read_to_string(&rules).unwrap(), edited, "nothing written");
    assert_eq!(dialog(&b).await, "dialog");
    b.click(&b.find("#always-confirm").await).await;
    let msg = tokio::time::timeout(PATIENCE, parked).await.expect("released").unwrap();
    assert_eq!(text_of(&msg), "wrote 5 bytes to n", "{msg}");
    let written = std::fs::read_to_string(&rules).unwrap();
    assert!(
        written.starts_with("# a teammate's comment\n") && written.contains("mcp__py__write_note("),
        "the rule appended to the edited file, its comment kept:\n{written}"
    );
    b.quit().await;
    p.shutdown().await;
}

#[tokio::test]
async fn status_names_the_checker_as_none_the_local_detectors_or_the_model_after_them() {
    use crate::support::fake_checker::{FakeChecker, Reply};
    let token_env = "PORTCULLIS_TEST_ADMIN_TOKEN_CONSOLE_CHECKER";
    let token = "console-checker-operator-0b8e2d77";
    std::env::set_var(token_env, token);
    let fake = FakeChecker::replying(Reply::Safe).await;
    let model = format!(
        "guardrails: {{ checker: {{ base_url: \"{}\", model: fake-judge, timeout: 2s }} }}\n",
        fake.url
    );
    for (extra, kind, name) in [
        ("", "none", None),
        ("guardrails: { checker: local }\n", "local", None),
        (model.as_str(), "model", Some("fake-judge")),
    ] {
        let yaml = format!(
            "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: {token_env} }}\nupstreams:\n  py: {{ url: \"http://127.0.0.1:9/mcp\" }}\n{extra}"
        );
        let p = proxy(&portcullis::config::Config::parse(&yaml, "test").unwrap()).await;
        let (status, s) = admin_get(&format!("http://{}", p.admin_addr), "/status", token).await;
        let checker = &s["checker"];
        assert_eq!((status, checker["kind"].as_str()), (200, Some(kind)), "{s}");
        assert_eq!(checker["model"].as_str(), name, "{s}");
        // The detectors run first whatever judges after them; with no checker there are none.
        let detectors = checker["detectors"].as_array().map(Vec::len).unwrap_or(0);
        assert_eq!(detectors > 0, kind != "none", "{s}");
        p.shutdown().await;
    }
}
