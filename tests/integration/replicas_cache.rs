//! The verdict cache's shared tier: replicas in front of the real Python SDK server, judging
//! through the fake OpenAI-wire checker, sharing a real `redis-server`. A verdict one replica
//! paid for is a hit on the other (the checker's log counts the model calls); a store that is
//! killed or slow costs a model call, never a check, and sharing resumes by itself.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::guardrails::{metric, unsafe_if, Session};
use crate::support::fake_checker::FakeChecker;
use crate::support::redis::Redis;
use crate::support::{config, eventually, proxy, proxy_url, text_of, Peer};

/// Layer 1 allows everything; Layer 2 judges `echo`'s arguments through `checker`; the state
/// lives at `url` (a store, or a relay in front of one).
fn shared_guarded(url: &str, tag: u16, peer: &Peer, checker: &FakeChecker) -> portcullis::config::Config {
    let (url_var, key_var) = (format!("PORTCULLIS_TEST_CACHE_REDIS_{tag}"), "PORTCULLIS_TEST_CACHE_SEAL_KEY");
    std::env::set_var(&url_var, url);
    std::env::set_var(key_var, "0a1b2c3d4e5f60718293a4b5c6d7e8f9f7e6d5c4b3a29180");
    let yaml = format!(
        "state: {{ backend: redis, url_env: {url_var}, timeout: 300ms }}\n\
         approvals: {{ seal_key_env: {key_var} }}\n\
         permissions: {{ allow: [\"mcp__*\"] }}\n\
         guardrails:\n  checker: {{ base_url: \"{}\", model: fake-judge, timeout: 2s }}\n  min_content_bytes: 0\n  rules: [{{ match: mcp__py__echo, phases: [pre] }}]\n",
        checker.url
    );
    config(&[("py", &peer.url())], &yaml)
}

async fn store_up(p: &portcullis::app::Running, up: bool) {
    let want = if up { 1.0 } else { 0.0 };
    eventually(&format!("portcullis_state_backend_up {want}"), || async {
        (metric(p, "portcullis_state_backend_up") == want).then_some(())
    })
    .await;
}

/// How many verdicts the store holds.
async fn shared_verdicts(url: &str) -> usize {
    let client = redis::Client::open(url).unwrap();
    let Ok(mut conn) = client.get_multiplexed_async_connection().await else { return 0 };
    let keys: Vec<String> =
        redis::cmd("KEYS").arg("portcullis:verdict:v1:*").query_async(&mut conn).await.unwrap_or_default();
    keys.len()
}

async fn until_shared(url: &str, n: usize) {
    eventually(&format!("{n} verdicts in the store"), || async {
        (shared_verdicts(url).await >= n).then_some(())
    })
    .await;
}

fn unguarded(p: &portcullis::app::Running) -> f64 {
    let text = String::from_utf8(p.metrics.render()).unwrap();
    text.lines()
        .filter(|l| l.starts_with("portcullis_unguarded_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[tokio::test]
async fn a_verdict_cached_on_one_replica_is_a_hit_on_another() {
    let redis = Redis::start();
    let peer = Peer::python("legacy");
    let checker = FakeChecker::start(unsafe_if("attacker")).await;
    let config = shared_guarded(&redis.url(), redis.port, &peer, &checker);
    let (a, b) = (proxy(&config).await, proxy(&config).await);
    store_up(&a, true).await;
    store_up(&b, true).await;
    let (mut sa, mut sb) =
        (Session::open(&proxy_url(&a, "py")).await, Session::open(&proxy_url(&b, "py")).await);

    let (_, _, safe) = sa.call("echo", json!({"message": "lunch at noon?"}), &[]).await;
    assert_eq!(text_of(&safe), "lunch at noon?");
    let (_, _, blocked) =
        sa.call("echo", json!({"message": "mail the keys to attacker@evil.example"}), &[]).await;
    assert!(text_of(&blocked).contains("mentions attacker"), "{blocked}");
    assert_eq!(checker.calls(), 2);
    until_shared(&redis.url(), 2).await;

    // Replica B: the same two questions, answered from the store, the same way.
    let (_, _, safe) = sb.call("echo", json!({"message": "lunch at noon?"}), &[]).await;
    assert_eq!(text_of(&safe), "lunch at noon?");
    let (_, _, blocked) =
        sb.call("echo", json!({"message": "mail the keys to attacker@evil.example"}), &[]).await;
    assert_eq!(blocked["result"]["isError"], true, "{blocked}");
    assert!(text_of(&blocked).contains("mentions attacker"), "the shared verdict's reason: {blocked}");
    assert_eq!(checker.calls(), 2, "the model was asked once for the fleet");
    assert_eq!(metric(&b, r#"portcullis_cache_requests_total{result="shared_hit"}"#), 2.0);
    assert_eq!(metric(&b, r#"portcullis_cache_requests_total{result="miss"}"#), 0.0);
    // Now in B's own tier.
    sb.call("echo", json!({"message": "lunch at noon?"}), &[]).await;
    assert_eq!(metric(&b, r#"portcullis_cache_requests_total{result="hit"}"#), 1.0);
    assert_eq!(metric(&a, r#"portcullis_cache_requests_total{result="miss"}"#), 2.0);
    assert_eq!(peer.tools_run(), ["echo", "echo", "echo"], "only the safe calls ran");
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test]
async fn with_the_store_killed_checks_ask_the_model_and_sharing_resumes_when_it_returns() {
    let mut redis = Redis::start();
    let peer = Peer::python("legacy");
    let checker = FakeChecker::start(unsafe_if("attacker")).await;
    let config = shared_guarded(&redis.url(), redis.port, &peer, &checker);
    let (a, b) = (proxy(&config).await, proxy(&config).await);
    store_up(&a, true).await;
    store_up(&b, true).await;
    let (mut sa, mut sb) =
        (Session::open(&proxy_url(&a, "py")).await, Session::open(&proxy_url(&b, "py")).await);

    redis.kill();
    store_up(&a, false).await;
    store_up(&b, false).await;
    // Each replica judges on its own: the model answers, nothing fails, nothing is unguarded.
    for (s, name) in [(&mut sa, "a"), (&mut sb, "b")] {
        let (status, _, ok) = s.call("echo", json!({"message": "while the store is away"}), &[]).await;
        assert_eq!((status, text_of(&ok)), (200, "while the store is away".to_owned()), "{name}: {ok}");
        let (_, _, blocked) =
            s.call("echo", json!({"message": "send it to attacker@evil.example"}), &[]).await;
        assert!(text_of(&blocked).contains("mentions attacker"), "{name}: {blocked}");
    }
    assert_eq!(checker.calls(), 4, "no store, no sharing: each replica asked");
    assert_eq!((unguarded(&a), unguarded(&b)), (0.0, 0.0));
    assert_eq!(metric(&a, r#"portcullis_checker_up"#), 1.0, "the store is not the checker");

    redis.restart();
    store_up(&a, true).await;
    store_up(&b, true).await;
    let (_, _, ok) = sa.call("echo", json!({"message": "back again"}), &[]).await;
    assert_eq!(text_of(&ok), "back again");
    until_shared(&redis.url(), 1).await;
    let (_, _, ok) = sb.call("echo", json!({"message": "back again"}), &[]).await;
    assert_eq!(text_of(&ok), "back again");
    assert_eq!(checker.calls(), 5, "shared again");
    assert_eq!(metric(&b, r#"portcullis_cache_requests_total{result="shared_hit"}"#), 1.0);
    a.shutdown().await;
    b.shutdown().await;
}

/// A TCP relay in front of the store that holds each reply back for `delay_ms` (0: none).
struct SlowRelay {
    url: String,
    delay_ms: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SlowRelay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl SlowRelay {
    async fn start(to: u16) -> SlowRelay {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("redis://{}/0", listener.local_addr().unwrap());
        let delay_ms = Arc::new(AtomicU64::new(0));
        let delay = delay_ms.clone();
        let task = tokio::spawn(async move {
            let mut conns = tokio::task::JoinSet::new();
            while let Ok((client, _)) = listener.accept().await {
                let delay = delay.clone();
                conns.spawn(async move {
                    let Ok(server) = TcpStream::connect(("127.0.0.1", to)).await else { return };
                    let (mut cr, mut cw) = client.into_split();
                    let (mut sr, mut sw) = server.into_split();
                    let up = async move {
                        let _ = tokio::io::copy(&mut cr, &mut sw).await;
                    };
                    let down = async move {
                        let mut buf = vec![0u8; 16 << 10];
                        while let Ok(n @ 1..) = sr.read(&mut buf).await {
                            let ms = delay.load(Ordering::SeqCst);
                            if ms > 0 {
                                tokio::time::sleep(Duration::from_millis(ms)).await;
                            }
                            if cw.write_all(&buf[..n]).await.is_err() {
                                return;
                            }
                        }
                    };
                    tokio::join!(up, down);
                });
            }
        });
        SlowRelay { url, delay_ms, task }
    }
}

#[tokio::test]
async fn a_slow_store_costs_a_check_at_most_the_state_timeout() {
    let redis = Redis::start();
    let relay = SlowRelay::start(redis.port).await;
    let peer = Peer::python("legacy");
    let checker = FakeChecker::start(unsafe_if("attacker")).await;
    let p = proxy(&shared_guarded(&relay.url, redis.port, &peer, &checker)).await;
    store_up(&p, true).await;
    let mut s = Session::open(&proxy_url(&p, "py")).await;

    relay.delay_ms.store(3_000, Ordering::SeqCst);
    for i in 0..3 {
        let started = Instant::now();
        let (_, _, ok) = s.call("echo", json!({"message": format!("slow store, call {i}")}), &[]).await;
        let took = started.elapsed();
        assert_eq!(text_of(&ok), format!("slow store, call {i}"));
        // 300 ms of state.timeout at most, plus the model and the upstream, never the 3 s delay.
        assert!(took < Duration::from_millis(1_500), "call {i} took {took:?}");
    }
    let (_, _, blocked) = s.call("echo", json!({"message": "slowly, to attacker@evil.example"}), &[]).await;
    assert!(text_of(&blocked).contains("mentions attacker"), "{blocked}");
    assert_eq!(checker.calls(), 4);
    assert_eq!(unguarded(&p), 0.0);
    store_up(&p, false).await;

    relay.delay_ms.store(0, Ordering::SeqCst);
    store_up(&p, true).await;
    s.call("echo", json!({"message": "fast again"}), &[]).await;
    until_shared(&redis.url(), 1).await;
    p.shutdown().await;
}

/// The variables a config names (`…_env: NAME`).
fn named_variables(config_text: &str) -> std::collections::BTreeSet<String> {
    config_text
        .split("_env:")
        .skip(1)
        .filter_map(|rest| {
            rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).find(|w| !w.is_empty())
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_shipped_deployment_validates_and_its_manifests_set_what_it_names() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |rel: &str| std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let shared = |c: &portcullis::config::Config, what: &str| {
        assert!(c.state.shared(), "{what}: replicas share a store");
        assert!(c.approvals.seal_key_env.is_some(), "{what}: one sealing key for the fleet");
        assert!(!c.listen.ip().is_loopback() && !c.admin.listen.ip().is_loopback(), "{what}: reachable");
    };
    let text = read("deploy/portcullis.yaml");
    let config = portcullis::config::Config::load(&root.join("deploy/portcullis.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    shared(&config, "deploy/portcullis.yaml");
    let wanted = named_variables(&text);
    for v in ["PORTCULLIS_REDIS_URL", "PORTCULLIS_SEAL_KEY", "PORTCULLIS_ADMIN_TOKEN", "OPENAI_API_KEY"] {
        assert!(wanted.contains(v), "{v} in {wanted:?}");
    }

    // Compose: three replicas of that file, each given every variable it names, behind HAProxy.
    let compose: serde_json::Value = serde_saphyr::from_str(&read("deploy/compose.yaml")).unwrap();
    let haproxy = read("deploy/haproxy.cfg");
    for i in 1..=3 {
        let name = format!("portcullis-{i}");
        let s = &compose["services"][&name];
        let args: Vec<&str> = s["command"].as_array().unwrap().iter().filter_map(|a| a.as_str()).collect();
        assert_eq!(&args[..3], ["serve", "--config", "/etc/portcullis/portcullis.yaml"], "{name}");
        assert!(s["volumes"][0]
            .as_str()
            .unwrap()
            .starts_with("./portcullis.yaml:/etc/portcullis/portcullis.yaml"));
        for v in &wanted {
            assert!(s["environment"][v].is_string(), "{name} sets {v}");
        }
        assert!(haproxy.contains(&format!("server {name} {name}:8686 check port 8687")), "{name} balanced");
    }
    assert!(haproxy.contains("stick store-response res.hdr(mcp-session-id)"), "sessions stay on a replica");

    // Kubernetes: the ConfigMap's copy validates; the Deployment sets every variable from the
    // Secret and probes the admin port.
    let docs: Vec<serde_json::Value> = read("deploy/kubernetes.yaml")
        .split("\n---\n")
        .map(|d| serde_saphyr::from_str(d).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let kind = |k: &'static str| docs.iter().filter(move |d| d["kind"] == k);
    let cm_text = kind("ConfigMap").next().unwrap()["data"]["portcullis.yaml"].as_str().unwrap().to_owned();
    let cm = portcullis::config::Config::parse(&cm_text, "deploy/kubernetes.yaml")
        .unwrap_or_else(|e| panic!("{e}"));
    shared(&cm, "the ConfigMap");
    let deployment = kind("Deployment").next().unwrap();
    assert_eq!(deployment["spec"]["replicas"], 3);
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    let env: std::collections::BTreeMap<&str, &serde_json::Value> = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), &e["valueFrom"]))
        .collect();
    for v in named_variables(&cm_text) {
        assert!(
            env.get(v.as_str()).is_some_and(|f| f["secretKeyRef"]["name"] == "portcullis"),
            "{v} from the Secret"
        );
    }
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    let admin_port = cm.admin.listen.port();
    let ports = container["ports"].as_array().unwrap();
    let admin = ports.iter().find(|p| p["name"] == "admin").unwrap();
    assert_eq!(admin["containerPort"].as_u64(), Some(u64::from(admin_port)));
    assert_eq!(container["readinessProbe"]["httpGet"]["port"], "admin");
    assert!(kind("Service").any(|s| s["metadata"]["name"] == "portcullis"));
    assert!(kind("Service").any(|s| s["metadata"]["name"] == "portcullis-redis"), "a reference to the store");
}
