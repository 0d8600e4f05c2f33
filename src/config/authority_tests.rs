//! `authority:` compiles to an evaluator, and every way it can be wrong is a start refused.

use std::io::Write;

use super::*;
use crate::config::{Config, Layer};
use crate::rules::Scope;

const AGENTS: &str = "agents: { dev: { token_env: UNREAD_AUTHORITY_DEV } }\n";

fn policy_file(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

fn problems(yaml: &str) -> String {
    match Config::parse(yaml, "test") {
        Ok(_) => String::new(),
        Err(e) => e.to_string(),
    }
}

fn cedar_yaml(file: &tempfile::NamedTempFile) -> String {
    format!("{AGENTS}authority: {{ evaluator: cedar, policy: {:?} }}\n", file.path())
}

#[test]
fn the_shipped_schema_parses_without_warnings() {
    let (_, warnings) = Schema::from_cedarschema_str(SCHEMA).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(warnings.count(), 0);
}

#[test]
fn the_evaluator_is_local_unless_the_operator_says_otherwise() {
    let c = Config::parse("", "test").unwrap();
    assert!(matches!(c.policy.authority, Evaluator::Local));
    let c = Config::parse("authority: { evaluator: noop }\n", "test").unwrap();
    assert!(matches!(c.policy.authority, Evaluator::Noop));
}

#[test]
fn every_malformed_section_is_a_problem() {
    for (yaml, says) in [
        ("authority: { evaluator: opa }\n", "not an evaluator"),
        ("authority: { evaluator: local, policy: x.cedar }\n", "only evaluator: cedar reads a policy"),
        (
            "authority: { evaluator: noop, allow_anonymous: true }\n",
            "only evaluator: cedar reads allow_anonymous",
        ),
        ("authority: { evalutor: cedar }\n", "unknown field"),
        (&format!("{AGENTS}authority: {{ evaluator: cedar }}\n"), "needs a policy file"),
        (
            &format!("{AGENTS}authority: {{ evaluator: cedar, policy: /nonexistent/p.cedar }}\n"),
            "/nonexistent/p.cedar",
        ),
    ] {
        let got = problems(yaml);
        assert!(got.contains(says), "{yaml}: {got}");
    }
}

#[test]
fn cedar_is_refused_while_anonymous_callers_are_let_in_unless_the_operator_says_so() {
    let f = policy_file("forbid (principal, action, resource) when { context.depth > 3 };\n");
    let open = format!("authority: {{ evaluator: cedar, policy: {:?} }}\n", f.path());
    assert!(problems(&open).contains("without a credential"), "{}", problems(&open));
    let said = format!("authority: {{ evaluator: cedar, policy: {:?}, allow_anonymous: true }}\n", f.path());
    let c = Config::parse(&said, "test").unwrap_or_else(|e| panic!("{e}"));
    let Evaluator::Cedar(p) = c.policy.authority else { panic!("not cedar") };
    assert_eq!(p.callers, Callers::AnonymousToo);
    let verified = Config::parse(&cedar_yaml(&f), "test").unwrap_or_else(|e| panic!("{e}"));
    let Evaluator::Cedar(p) = verified.policy.authority else { panic!("not cedar") };
    assert_eq!(p.callers, Callers::Verified);
}

#[test]
fn a_policy_that_does_not_parse_or_fails_the_schema_refuses_the_start() {
    for (text, says) in [
        ("forbid (principal, action, resource) when { context.depth > };", "unexpected"),
        ("forbid (principal, action, resource) when { context.bogus };", "bogus"),
        ("forbid (principal, action == Portcullis::Action::\"delete\", resource);", "delete"),
        ("forbid (principal == Portcullis::User::\"x\", action, resource);", "Portcullis::User"),
        ("forbid (principal, action, resource) when { context.path > 3 };", "path"),
        ("permit (principal == ?principal, action, resource);", "templates"),
        ("@id(\"a\") forbid (principal, action, resource);\n@id(\"a\") forbid (principal, action, resource);", "a"),
    ] {
        let f = policy_file(text);
        let got = problems(&cedar_yaml(&f));
        assert!(got.contains("authority.policy") && got.contains(says), "{text}: {got}");
    }
}

#[test]
fn accesses_below_context_args_are_left_to_the_call_and_policies_keep_their_ids() {
    let f = policy_file(
        "@id(\"many-replicas\")\nforbid (principal, action, resource) when { context.args.replicas > 10 };\n\
         forbid (principal, action, resource) when { context[\"args\"][\"mode\"] == \"x\" };\n\
         @id(\"guarded\") forbid (principal, action, resource) when { context.args has n && context.args.n > 1 };\n\
         forbid (principal, action == Portcullis::Action::\"read\", resource)\n  when { context.path like \"/srv/secret/*\" };\n",
    );
    let c = Config::parse(&cedar_yaml(&f), "test").unwrap_or_else(|e| panic!("{e}"));
    let Evaluator::Cedar(p) = c.policy.authority else { panic!("not cedar") };
    let mut ids: Vec<String> = p.policies.policies().map(|p| p.id().to_string()).collect();
    ids.sort();
    assert_eq!(ids, ["guarded", "many-replicas", "policy1", "policy3"]);
    assert!(c.warnings.is_empty(), "a guarded argument condition is not called impossible: {:?}", c.warnings);
}

#[test]
fn a_permissions_file_cannot_choose_the_evaluator() {
    let layer = Layer {
        scope: Scope::Cli,
        name: "project.yaml".into(),
        text: "authority: { evaluator: noop }\n".into(),
    };
    let got = Config::parse_layered("", "test", &[layer]).map(|_| ()).unwrap_err().to_string();
    assert!(got.contains("project.yaml") && got.contains("authority"), "{got}");
}
