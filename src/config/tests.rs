use super::*;

#[test]
fn every_file_under_config_loads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("config");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            Config::load(&path).unwrap_or_else(|e| panic!("{e}"));
            seen += 1;
        }
    }
    assert!(seen >= 1, "config/ holds at least the embedded default");
    let c = Config::embedded();
    assert!(c.listen.ip().is_loopback() && c.admin.listen.ip().is_loopback());
}

#[test]
fn every_problem_is_reported_at_once() {
    let text = r#"
listen: nowhere
bogus: 1
admin: { listen: 127.0.0.1:1, colour: red }
upstreams:
  good: { url: "http://127.0.0.1:1/mcp" }
  bad: { url: "ftp://x" }
  "a__b": { url: "http://127.0.0.1:1" }
  worse: { uri: "http://x" }
  local: { stdio: [cat] }
limits: { max_body: 4 lightyears, idle_timeout: 10 }
redact: [""]
"#;
    let err = Config::parse(text, "t").unwrap_err();
    let paths: Vec<&str> = err.problems.iter().map(|p| p.path.as_str()).collect();
    for want in [
        "bogus",
        "listen",
        "admin",
        "upstreams.bad.url",
        "upstreams.a__b",
        "upstreams.worse",
        "upstreams.local",
        "limits.max_body",
        "limits.idle_timeout",
        "redact[0]",
    ] {
        assert!(paths.contains(&want), "missing {want} in {err}");
    }
}

#[test]
fn guardrail_problems_are_all_reported() {
    let text = r#"
guardrails:
  checker: { base_url: "ftp://x", model: "", api_key_env: "not a var", timeout: 10 }
  default_mode: loud
  on_checker_down: sometimes
  rules:
    - { match: "mcp__*__x", phases: [during] }
    - { match: mcp__a__b, mode: shout, rubric: nonexistent }
    - { match: mcp__a__c, colour: red }
"#;
    let err = Config::parse(text, "t").unwrap_err();
    let paths: Vec<&str> = err.problems.iter().map(|p| p.path.as_str()).collect();
    for want in [
        "guardrails.checker.base_url",
        "guardrails.checker.model",
        "guardrails.checker.api_key_env",
        "guardrails.checker.timeout",
        "guardrails.default_mode",
        "guardrails.on_checker_down",
        "guardrails.rules[0].match",
        "guardrails.rules[0].phases",
        "guardrails.rules[1].mode",
        "guardrails.rules[1].rubric",
        "guardrails.rules[2]",
    ] {
        assert!(paths.contains(&want), "missing {want} in {err}");
    }
    let err = Config::parse("guardrails: { rules: [] }\n", "t").unwrap_err();
    assert_eq!(err.problems[0].path, "guardrails.checker", "a checker must be named");
    let c = Config::parse("guardrails: { checker: local }\n", "t").unwrap();
    assert_eq!(c.policy.guardrails.unwrap().rules.0.len(), 3, "the default rule set");
}

#[test]
fn an_empty_file_is_the_defaults() {
    let c = Config::parse("", "t").unwrap();
    assert_eq!(c.listen, "127.0.0.1:8686".parse().unwrap());
    assert!(c.upstreams.is_empty());
}

#[test]
fn duplicate_yaml_keys_are_an_error() {
    assert!(Config::parse("listen: 127.0.0.1:1\nlisten: 0.0.0.0:1\n", "t").is_err());
}
