use crate::checker::FailureMode;
use crate::config::Config;
use std::time::Duration;

#[test]
fn the_off_switch_keys_default_safe_and_bad_values_are_reported() {
    let c = Config::parse("guardrails: { checker: local }\n", "t").unwrap();
    let g = c.policy.guardrails.unwrap();
    assert_eq!(g.on_malformed, FailureMode::Closed, "a malformed verdict is not a pass by default");
    assert_eq!((g.queue_timeout, g.model_windows), (Duration::from_secs(5), 4));
    let yaml = "guardrails: { checker: local, on_malformed: open, queue_timeout: 250ms, model_windows: 2 }\n";
    let g = Config::parse(yaml, "t").unwrap().policy.guardrails.unwrap();
    assert_eq!(
        (g.on_malformed, g.queue_timeout, g.model_windows),
        (FailureMode::Open, Duration::from_millis(250), 2)
    );
    let bad = "guardrails: { checker: local, on_malformed: maybe, queue_timeout: 5, model_windows: 0 }\n";
    let err = Config::parse(bad, "t").unwrap_err().to_string();
    for key in ["guardrails.on_malformed", "guardrails.queue_timeout", "guardrails.model_windows"] {
        assert!(err.contains(key), "{key} reported: {err}");
    }
}

#[test]
fn the_probe_is_off_however_yaml_spells_it() {
    let probe = |v: &str| {
        Config::parse(
                &format!("guardrails: {{ checker: {{ base_url: \"http://127.0.0.1:1/v1\", model: m, probe: {v} }} }}\n"),
                "t",
            )
            .map(|c| c.policy.guardrails.unwrap().probe)
            .map_err(|e| e.to_string())
    };
    assert_eq!(probe("off"), Ok(None));
    assert_eq!(probe("\"off\""), Ok(None));
    assert_eq!(probe("5s"), Ok(Some(Duration::from_secs(5))));
    assert!(probe("on").unwrap_err().contains("guardrails.checker.probe"));
    assert!(probe("10ms").unwrap_err().contains("at least 100ms"));
}

#[test]
fn a_context_window_shrinks_the_windows_or_is_too_small() {
    let c = Config::parse(
        "guardrails: { checker: { base_url: \"http://127.0.0.1:1/v1\", model: m, context_tokens: 4096 } }\n",
        "t",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let g = c.policy.guardrails.unwrap();
    assert!(g.max_content_bytes < 8 * 1024 && g.max_content_bytes > 2 * 1024, "{}", g.max_content_bytes);
    assert!(c.warnings.iter().any(|w| w.path == "guardrails.checker.context_tokens"));
    let err = Config::parse(
        "guardrails: { checker: { base_url: \"http://127.0.0.1:1/v1\", model: m, context_tokens: 600 } }\n",
        "t",
    )
    .unwrap_err();
    assert_eq!(err.problems[0].path, "guardrails.checker.context_tokens", "{err}");
}
