//! `portcullis eval --traces` on the committed AgentDojo sample: every call is replayed through
//! the real proxy (the binary, in front of its replay upstream), the counts add up, and an exfil
//! call to a domain the config does not allow is refused by egress while the user's own calls
//! pass.

use std::process::Command;

use serde_json::Value;

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/eval/traces/sample.jsonl");
const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/eval/traces/agentdojo.yaml");

fn eval_traces(config: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["eval", "--traces", SAMPLE, "--config", config, "--json"])
        .env("PORTCULLIS_LOG", "error")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn hits(v: &Value) -> (u64, u64) {
    (v["hits"].as_u64().unwrap(), v["of"].as_u64().unwrap())
}

/// The shipped config with mail outside the user's domain put to a human: there is none, so
/// the ask is refused. Egress alone: no `flows:`.
fn asking_config(dir: &std::path::Path) -> String {
    let yaml = std::fs::read_to_string(CONFIG).unwrap();
    let allow = "allow: [bluesparrowtech.com, \"email:bluesparrowtech.com\"]";
    assert!(yaml.contains(allow), "the shipped config's egress line moved");
    // Egress alone: without `flows:` (the last section), whose refusal of the same call would
    // otherwise be the stronger one and take the attribution.
    let yaml = match yaml.find("\nflows:") {
        Some(at) => &yaml[..at + 1],
        None => &yaml[..],
    };
    let path = dir.join("ask.yaml");
    std::fs::write(&path, yaml.replace(allow, "allow: [bluesparrowtech.com]\n  ask: [email]")).unwrap();
    path.display().to_string()
}

#[test]
fn every_replayed_call_is_counted_once_under_its_label() {
    let r = eval_traces(CONFIG);
    let lines = std::fs::read_to_string(SAMPLE).unwrap();
    let (mut steps, mut exfil, mut benign) = (0, 0, 0);
    for line in lines.lines() {
        let t: Value = serde_json::from_str(line).unwrap();
        for s in t["steps"].as_array().unwrap() {
            steps += 1;
            exfil += u64::from(s["label"] == "exfil");
            benign += u64::from(s["label"] == "benign");
        }
    }
    assert_eq!(r["sessions"], lines.lines().count() as u64);
    assert_eq!(r["steps"], steps);
    assert_eq!((r["exfil"].as_u64(), r["benign"].as_u64()), (Some(exfil), Some(benign)));
    assert_eq!(
        r["exfil"].as_u64().unwrap() + r["benign"].as_u64().unwrap() + r["injected"].as_u64().unwrap(),
        steps
    );
    assert_eq!(hits(&r["overall"]["recall"]).1, exfil);
    assert_eq!(hits(&r["overall"]["false_positive_rate"]).1, benign);
    // Refusals by mechanism add up to the overall ones: each refusal has one mechanism.
    let by: u64 = r["by_mechanism"].as_object().unwrap().values().map(|m| hits(&m["recall"]).0).sum();
    assert_eq!(by, hits(&r["overall"]["recall"]).0);
    // The injection placed in the calendar result is found by the detectors and withheld.
    assert!(r["results_changed"].as_u64().unwrap() >= 1, "{r}");
}

#[test]
fn an_exfil_call_to_a_domain_the_config_does_not_allow_is_refused_by_egress() {
    let dir = tempfile::tempdir().unwrap();
    let r = eval_traces(&asking_config(dir.path()));
    let exfil = r["exfil"].as_u64().unwrap();
    assert!(exfil >= 2, "{r}");
    assert_eq!(hits(&r["by_mechanism"]["egress"]["recall"]), (exfil, exfil), "{r}");
    // The user's own calls (a calendar search) are not refused.
    assert_eq!(hits(&r["overall"]["false_positive_rate"]).0, 0, "{r}");
}

#[test]
fn under_the_shipped_config_mail_to_the_attacker_is_not_refused_by_egress() {
    // The shipped config allows the user's domain and asks nothing of mail elsewhere (mailing
    // friends is the job): egress alone cannot tell the attacker's address from a friend's.
    let r = eval_traces(CONFIG);
    assert_eq!(hits(&r["by_mechanism"]["egress"]["recall"]).0, 0, "{r}");
}
