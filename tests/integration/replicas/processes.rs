//! Replicas as separate processes: one killed while a call is parked, many under load, and a
//! store made slow by a relay in front of it.

use super::*;

/// A `portcullis serve` process (so it can be killed outright) with `yaml`; its agent and admin
/// addresses, read from its start-up line.
fn serve_process(dir: &std::path::Path, yaml: &str) -> (std::process::Child, String, String) {
    use std::io::BufRead;
    let config = dir.join(format!("replica-{}.yaml", rand_suffix()));
    std::fs::write(&config, yaml).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["serve", "--config"])
        .arg(&config)
        .env("PORTCULLIS_LOG", "warn")
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufReader::new(stderr).lines();
    let line = lines
        .find_map(|l| l.ok().filter(|l| l.starts_with("portcullis listening on")))
        .expect("serve prints where it listens");
    std::thread::spawn(move || for _ in lines {});
    // "portcullis listening on http://A (admin http://B)"
    let mut urls = line
        .split("http://")
        .skip(1)
        .map(|s| s.trim_end_matches(')').split_whitespace().next().unwrap().trim_end_matches(')').to_owned());
    (child, urls.next().unwrap(), urls.next().unwrap())
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new().build_hasher().finish()
}

#[tokio::test]
async fn a_replica_killed_while_a_call_is_parked_leaves_no_hang_and_no_ghost() {
    use crate::support::post;
    let redis = Redis::start();
    let tools = crate::http_tools::tool_server().await;
    let (_, b) = http_replicas(&redis, &tools.url, "").await;
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0, token_env: PORTCULLIS_TEST_ADMIN_TOKEN_REPLICAS }}\nupstreams:\n  web: {{ url: \"{}\" }}\n\
         state: {{ backend: redis, url_env: PORTCULLIS_TEST_REDIS_{}, timeout: 300ms }}\n\
         approvals: {{ channel: api, timeout: 60s, seal_key_env: PORTCULLIS_TEST_SEAL_KEY }}\n",
        tools.url, redis.port
    );
    let (mut a, addr, _) = serve_process(dir.path(), &yaml);
    let held = tokio::spawn(async move {
        post(&format!("http://{addr}/http/web/v1/subscribe"), &[("x-portcullis-session", "k-1")], "{}").await
    });
    let id = eventually("the ask listed at B", || async {
        parked(b.admin_addr).await["pending"][0]["id"].as_u64()
    })
    .await;
    a.kill().unwrap();
    a.wait().unwrap();
    // The agent's request ends (its connection went with the replica): an answer, not a hang.
    let ended = tokio::time::timeout(std::time::Duration::from_secs(30), held).await;
    assert!(ended.is_ok(), "the agent was left hanging");
    // B stops listing it once the replica's heartbeat lapses, and a decision is refused as gone.
    eventually("the dead replica's ask dropped from B's list", || async {
        (parked(b.admin_addr).await["pending"] == json!([])).then_some(())
    })
    .await;
    let (status, _, text) =
        post(&format!("http://{}/approvals/{id}", b.admin_addr), &[OPERATOR], r#"{"decision":"allow_once"}"#)
            .await;
    assert!(status == 410 || status == 404, "{status} {text}");
    assert!(tools.seen.lock().unwrap().is_empty(), "nothing ran");
    b.shutdown().await;
}

#[tokio::test]
async fn under_load_every_decision_lands_once_whichever_replica_takes_it() {
    use crate::support::post;
    let redis = Redis::start();
    let tools = crate::http_tools::tool_server().await;
    let (a, b) = http_replicas(&redis, &tools.url, "").await;
    const N: usize = 24;
    let mut calls = Vec::new();
    for n in 0..N {
        let addr = if n % 2 == 0 { a.addr } else { b.addr };
        calls.push(tokio::spawn(async move {
            let s = format!("load-{n}");
            let r = post(
                &format!("http://{addr}/http/web/v1/job"),
                &[("x-portcullis-session", &s)],
                format!(r#"{{"n":{n}}}"#),
            )
            .await;
            (n, r.0)
        }));
    }
    // Decide every ask as it shows up, at alternating replicas: allow when n is divisible by 3.
    let admins = [a.admin_addr, b.admin_addr];
    let mut decided = std::collections::BTreeSet::new();
    let mut turn = 0;
    let deadline = tokio::time::Instant::now() + crate::support::PATIENCE;
    while decided.len() < N {
        assert!(tokio::time::Instant::now() < deadline, "decided {} of {N}", decided.len());
        let listed = parked(admins[turn % 2]).await;
        for p in listed["pending"].as_array().cloned().unwrap_or_default() {
            let id = p["id"].as_u64().unwrap();
            if !decided.insert(id) {
                continue;
            }
            let n: u64 = serde_json::from_str::<serde_json::Value>(p["args"].as_str().unwrap()).unwrap()["n"]
                .as_u64()
                .unwrap();
            let decision = if n.is_multiple_of(3) { "allow_once" } else { "deny" };
            let (status, _, text) = post(
                &format!("http://{}/approvals/{id}", admins[turn % 2]),
                &[OPERATOR],
                format!(r#"{{"decision":"{decision}"}}"#),
            )
            .await;
            assert_eq!(status, 200, "{text}");
            turn += 1;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    for c in calls {
        let (n, status) = c.await.unwrap();
        assert_eq!(status, if n.is_multiple_of(3) { 200 } else { 403 }, "call {n}");
    }
    let mut ran: Vec<u64> = tools
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|(_, _, body)| serde_json::from_str::<serde_json::Value>(body).unwrap()["n"].as_u64().unwrap())
        .collect();
    ran.sort_unstable();
    assert_eq!(
        ran,
        (0..N as u64).filter(|n| n.is_multiple_of(3)).collect::<Vec<_>>(),
        "each allowed call ran once, nothing else ran"
    );
    a.shutdown().await;
    b.shutdown().await;
}

/// A TCP relay in front of `port` that holds every reply from the server for `delay` while
/// `slow` is set: Redis as a slow network makes it.
async fn slow_relay(
    port: u16,
    delay: std::time::Duration,
    slow: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((client, _)) = listener.accept().await else { return };
            let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else { continue };
            let (mut cr, mut cw) = client.into_split();
            let (mut sr, mut sw) = server.into_split();
            tokio::spawn(async move { tokio::io::copy(&mut cr, &mut sw).await });
            let slow = slow.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16 * 1024];
                loop {
                    let n = match sr.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    if slow.load(std::sync::atomic::Ordering::Relaxed) {
                        tokio::time::sleep(delay).await;
                    }
                    if cw.write_all(&buf[..n]).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    at
}

#[tokio::test]
async fn a_slow_store_costs_at_most_its_timeout_and_is_treated_as_down() {
    use crate::support::post;
    let redis = Redis::start();
    let slow = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let relay = slow_relay(redis.port, std::time::Duration::from_secs(2), slow.clone()).await;
    let tools = crate::http_tools::tool_server().await;
    // The replicas reach Redis through the relay.
    let through = Redis::at(relay);
    let (a, b) = http_replicas(&through, &tools.url, "permissions: { allow: [http__web__ok] }\n").await;
    slow.store(true, std::sync::atomic::Ordering::Relaxed);
    let started = tokio::time::Instant::now();
    let (status, _, body) = post(
        &format!("http://{}/http/web/v1/subscribe", a.addr),
        &[("x-portcullis-session", "slow-1")],
        "{}",
    )
    .await;
    let took = started.elapsed();
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("approval store is unreachable"), "{body}");
    assert!(
        took < std::time::Duration::from_secs(2),
        "bounded by state.timeout, not the store's delay: {took:?}"
    );
    let (status, _, body) =
        post(&format!("http://{}/http/web/ok", a.addr), &[("x-portcullis-session", "slow-1")], "{}").await;
    assert_eq!(status, 200, "{body}");
    slow.store(false, std::sync::atomic::Ordering::Relaxed);
    a.shutdown().await;
    b.shutdown().await;
}
