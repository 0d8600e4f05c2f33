//! Guardrail rules: which tools the checker judges, in which phase, how, and with what rubric.
//!
//! Selection is per phase: among the rules that cover the phase, the most specific match wins —
//! an exact tool name, then a tool kind (`Shell`, `File`, `Fetch`: what `tools:` says the tool
//! is), then the longest `prefix*`, then `*`; ties go to the rule written first. Kinds rank above
//! prefixes so that the default set's `Shell` rule (shell rubric, read-only pre-filter) is not
//! shadowed by its own `mcp__*` rule, which would otherwise match every MCP shell tool first.

use super::{FailureMode, Mode, Phase};
use portcullis_rules::kinds::KindSpec;

/// What a rule's `match` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    Exact(String),
    /// A tool kind from `tools:` (`Shell`, `File`, `Fetch`).
    Kind(&'static str),
    /// `prefix*`.
    Prefix(String),
    /// `*`.
    Any,
}

impl Selector {
    pub fn parse(s: &str) -> Result<Selector, String> {
        Ok(match s {
            "" => return Err("empty match".into()),
            "*" => Selector::Any,
            "Shell" => Selector::Kind("shell"),
            "File" => Selector::Kind("file"),
            "Fetch" => Selector::Kind("fetch"),
            _ => match s.strip_suffix('*') {
                Some(p) if p.contains('*') => {
                    return Err(format!("{s:?}: only a trailing '*' is supported (exact, prefix*, *)"))
                }
                Some(p) => Selector::Prefix(p.to_owned()),
                None if s.contains('*') => {
                    return Err(format!("{s:?}: only a trailing '*' is supported (exact, prefix*, *)"))
                }
                None => Selector::Exact(s.to_owned()),
            },
        })
    }

    fn matches(&self, qualified: &str, kind: &KindSpec) -> bool {
        match self {
            Selector::Exact(n) => n == qualified,
            Selector::Kind(k) => kind.name() == *k,
            Selector::Prefix(p) => qualified.starts_with(p.as_str()),
            Selector::Any => true,
        }
    }

    /// Higher is more specific.
    fn rank(&self) -> (u8, usize) {
        match self {
            Selector::Exact(_) => (3, 0),
            Selector::Kind(_) => (2, 0),
            Selector::Prefix(p) => (1, p.len()),
            Selector::Any => (0, 0),
        }
    }
}

/// One compiled guardrail rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardRule {
    pub target: Selector,
    /// The `match` text as written: the `rule` label of `checks_total`.
    pub label: String,
    pub pre: bool,
    pub post: bool,
    /// The `tools/list` phase: tool definitions (descriptions, titles, schemas) are judged like
    /// a result before the agent reads them. A flag rather than a third [`Phase`]: a definition
    /// is judged as inbound content (`Phase::Post`, the injection rubric by default).
    pub tools: bool,
    pub mode: Mode,
    /// A rubric name; `None` picks by phase and kind (see [`GuardRule::rubric_for`]).
    pub rubric: Option<String>,
    /// `Some` overrides `on_checker_down` for this rule.
    pub fail_closed: Option<bool>,
    /// A second judgement of the same content, counted and never enforced.
    pub shadow: Option<Shadow>,
}

/// A shadow judgement: a rubric (and optionally another model) tried on live traffic beside
/// the enforced one. Only its disagreements are recorded; the call never waits for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadow {
    pub rubric: String,
    /// `None`: the enforced checker's model.
    pub model: Option<crate::openai::Settings>,
}

impl GuardRule {
    pub fn covers(&self, phase: Phase) -> bool {
        match phase {
            Phase::Pre => self.pre,
            Phase::Post => self.post,
        }
    }

    /// The rubric judging `phase` of a call of `kind`: the rule's own, else `shell` for shell
    /// arguments, `exfiltration` for other arguments and `injection` for results.
    pub fn rubric_for(&self, phase: Phase, kind: &KindSpec) -> &str {
        match (&self.rubric, phase, kind) {
            (Some(r), _, _) => r,
            (None, Phase::Pre, KindSpec::Shell { .. }) => "shell",
            (None, Phase::Pre, _) => "exfiltration",
            (None, Phase::Post, _) => "injection",
        }
    }

    pub fn failure_mode(&self, on_checker_down: FailureMode) -> FailureMode {
        match self.fail_closed {
            Some(true) => FailureMode::Closed,
            Some(false) => FailureMode::Open,
            None => on_checker_down,
        }
    }
}

/// The rule list, in the order written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GuardRules(pub Vec<GuardRule>);

impl GuardRules {
    /// The set that applies when a checker is configured and no `rules:` are given.
    pub fn defaults(mode: Mode) -> GuardRules {
        let rule = |m: &str, pre, post, rubric: Option<&str>| GuardRule {
            target: Selector::parse(m).expect("static"),
            label: m.to_owned(),
            pre,
            post,
            tools: false,
            mode,
            rubric: rubric.map(str::to_owned),
            fail_closed: None,
            shadow: None,
        };
        GuardRules(vec![
            rule("mcp__*", true, true, None),
            rule("Fetch", false, true, None),
            rule("Shell", true, false, Some("shell")),
        ])
    }

    /// True when some rule may judge the results of a tool whose qualified name starts with
    /// `head` (`mcp__{upstream}__`): an exact or prefix match that agrees with it, a kind, or `*`
    /// (a kind may be any tool's). False proves no result under `head` is ever judged.
    pub fn may_judge_results_under(&self, head: &str) -> bool {
        let agrees = |p: &str| p.starts_with(head) || head.starts_with(p);
        self.0.iter().filter(|r| r.post).any(|r| match &r.target {
            Selector::Exact(s) => s.starts_with(head),
            Selector::Prefix(p) => agrees(p),
            Selector::Kind(_) | Selector::Any => true,
        })
    }

    /// The rule judging `phase` of `qualified`, if any.
    pub fn select(&self, qualified: &str, kind: &KindSpec, phase: Phase) -> Option<&GuardRule> {
        let mut best: Option<&GuardRule> = None;
        for r in self.0.iter().filter(|r| r.covers(phase) && r.target.matches(qualified, kind)) {
            if best.is_none_or(|b| r.target.rank() > b.target.rank()) {
                best = Some(r);
            }
        }
        best
    }

    /// The rule judging the definition of `qualified` as listed in `tools/list`, if any (the
    /// same ranking as [`GuardRules::select`]).
    pub fn select_tools(&self, qualified: &str, kind: &KindSpec) -> Option<&GuardRule> {
        let mut best: Option<&GuardRule> = None;
        for r in self.0.iter().filter(|r| r.tools && r.target.matches(qualified, kind)) {
            if best.is_none_or(|b| r.target.rank() > b.target.rank()) {
                best = Some(r);
            }
        }
        best
    }

    /// True when some rule judges tool definitions.
    pub fn any_tools(&self) -> bool {
        self.0.iter().any(|r| r.tools)
    }

    /// True when some rule could judge `phase` at all (lets transports skip holding results).
    pub fn any(&self, phase: Phase) -> bool {
        self.0.iter().any(|r| r.covers(phase))
    }

    /// Demotes every rule to advisory (the `yolo` posture).
    pub fn demote_to_advisory(&mut self) {
        for r in &mut self.0 {
            r.mode = Mode::Advisory;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell() -> KindSpec {
        KindSpec::bash("/command")
    }

    #[test]
    fn the_most_specific_rule_covering_the_phase_wins() {
        let mut rules = GuardRules::defaults(Mode::Block);
        rules.0.push(GuardRule {
            target: Selector::parse("mcp__web__*").unwrap(),
            label: "mcp__web__*".into(),
            pre: false,
            post: true,
            tools: false,
            mode: Mode::Sanitize,
            rubric: None,
            fail_closed: Some(true),
            shadow: None,
        });
        let g = KindSpec::Generic;
        let sh = shell();
        let fetch = KindSpec::Fetch { url: "/url".into() };
        let pick = |q: &str, k: &KindSpec, p| rules.select(q, k, p).map(|r| r.label.as_str());
        assert_eq!(pick("mcp__fs__read", &g, Phase::Pre), Some("mcp__*"));
        assert_eq!(pick("mcp__sh__run", &sh, Phase::Pre), Some("Shell"), "kind beats prefix");
        assert_eq!(pick("mcp__sh__run", &sh, Phase::Post), Some("mcp__*"), "Shell is pre only");
        assert_eq!(pick("mcp__web__get", &fetch, Phase::Post), Some("Fetch"));
        assert_eq!(pick("mcp__web__x", &g, Phase::Post), Some("mcp__web__*"), "longer prefix wins");
        assert_eq!(pick("mcp__web__x", &g, Phase::Pre), Some("mcp__*"));
        assert_eq!(pick("http__api__v1", &g, Phase::Pre), None);
        assert_eq!(
            rules.select("mcp__sh__run", &sh, Phase::Pre).unwrap().rubric_for(Phase::Pre, &sh),
            "shell"
        );
        let r = rules.select("mcp__fs__read", &g, Phase::Post).unwrap();
        assert_eq!(r.rubric_for(Phase::Post, &g), "injection");
        assert_eq!(r.rubric_for(Phase::Pre, &g), "exfiltration");
    }

    #[test]
    fn only_trailing_stars_are_patterns() {
        assert_eq!(Selector::parse("*"), Ok(Selector::Any));
        assert_eq!(Selector::parse("mcp__a*"), Ok(Selector::Prefix("mcp__a".into())));
        assert!(Selector::parse("mcp__*__read").is_err());
        assert!(Selector::parse("**").is_err());
        assert!(Selector::parse("").is_err());
    }
}
