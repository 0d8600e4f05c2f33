//! Rule examples: whether a rule matches the example an operator wrote for it.

use super::super::destination::read_url;
use super::super::spec::Subject as RuleSubject;
use super::super::{Effect, Rule};
use super::{matches, Engine, Unit};
use crate::jail::Placed;
use crate::kinds::{Access, Subject};
use portcullis_shell as shell;

impl Engine {
    /// Whether `rule` matches an example written for it: a command line for `Shell`, a path
    /// for `Read`/`Write`/`File`, a URL for `Fetch`, a tool name for a tool rule — or
    /// `tool(argument)` for a tool rule with a specifier, read by that tool's kind.
    pub fn rule_matches_example(&self, rule: &Rule, example: &str) -> bool {
        let shell_any = |qualified: &str, line: &str| {
            let analysis = shell::analyze(line);
            let effects = shell::effects::effects(&analysis, &self.start(None), None);
            analysis.commands.iter().zip(&effects).any(|(c, fx)| {
                matches(rule, qualified, &Unit::Command { cmd: c, read_only: false })
                    || (rule.effect != Effect::Allow && self.effect_rule(rule, qualified, fx).is_some())
            })
        };
        let path = |qualified: &str, p: &str| {
            [Access::Read, Access::Write]
                .into_iter()
                .any(|access| matches(rule, qualified, &Unit::Path { path: p, access, written: p }))
        };
        match &rule.spec.subject {
            RuleSubject::Shell => shell_any("", example),
            RuleSubject::Read | RuleSubject::Write | RuleSubject::File => path("", example),
            RuleSubject::Fetch => {
                matches(rule, "", &Unit::Fetch { url: example, reading: read_url(example) })
            }
            RuleSubject::Tool(_) => {
                let (name, arg) = match example.split_once('(') {
                    Some((n, rest)) => (n, rest.strip_suffix(')')),
                    None => (example, None),
                };
                let Some(arg) = arg else {
                    return matches(rule, name, &Unit::Generic { args: "{}" });
                };
                match self.parts.kinds.kind_of(name) {
                    super::super::kinds::KindSpec::Shell { .. } => shell_any(name, arg),
                    super::super::kinds::KindSpec::File { .. } => path(name, arg),
                    super::super::kinds::KindSpec::Fetch { .. } => {
                        matches(rule, name, &Unit::Fetch { url: arg, reading: read_url(arg) })
                    }
                    super::super::kinds::KindSpec::Generic => {
                        matches(rule, name, &Unit::Generic { args: arg })
                    }
                    super::super::kinds::KindSpec::Resource { .. } => self.resource_example(rule, name, arg),
                }
            }
        }
    }

    /// Whether `rule` matches some reading of the resource URI `uri` requested as `qualified`.
    fn resource_example(&self, rule: &Rule, qualified: &str, uri: &str) -> bool {
        fn any(e: &Engine, rule: &Rule, qualified: &str, s: &Subject) -> bool {
            match s {
                Subject::File { path, access } => match e.jail.place(path) {
                    Placed::Inside(path) | Placed::Outside { resolved: path, .. } => {
                        matches(rule, qualified, &Unit::Path { path: &path, access: *access, written: &path })
                    }
                    Placed::Refused(_) => false,
                },
                Subject::Fetch { url } => {
                    matches(rule, qualified, &Unit::Fetch { url, reading: read_url(url) })
                }
                Subject::Generic { args } => matches(rule, qualified, &Unit::Generic { args }),
                Subject::Readings(all) => all.iter().any(|s| any(e, rule, qualified, s)),
                Subject::Shell { .. } | Subject::Unplaced { .. } | Subject::Malformed { .. } => false,
            }
        }
        any(self, rule, qualified, &super::super::resource::subject(uri))
    }
}
