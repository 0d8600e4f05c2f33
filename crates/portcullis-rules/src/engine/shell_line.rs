//! Shell lines: each command's effects placed where the line starts, proven read-only or not,
//! and met by every deny and ask rule that speaks about what it does.

use portcullis_shell::effects::{CommandEffects, PathEffect};
use portcullis_shell::place::{normalize_abs, Base};
use portcullis_shell::{self as shell, Command};

use super::super::destination::{read_url, HostMatch};
use super::super::effect_match::{self, Hit};
use super::super::spec::Subject as RuleSubject;
use super::super::{Decision, Effect, Origin, Prefilter, Profile, Rule, Scope};
use super::{Engine, Unit, OPAQUE};

impl Engine {
    /// A shell line as `dialect` runs it: each command is proven read-only for the shell that
    /// runs it (`zsh -c` under bash is judged as zsh).
    pub(super) fn shell(
        &self,
        qualified: &str,
        line: &str,
        dialect: shell::Dialect,
        cwd: Option<&str>,
        profile: Profile,
        connections: &mut super::Connections,
    ) -> Decision {
        let analysis = shell::analyze_in(line, dialect);
        if let Some(err) = &analysis.parse_error {
            return Decision {
                effect: Effect::Ask,
                rule: "shell: parse error".into(),
                scope: Scope::Builtin,
                origin: Origin::Unread,
                reason: format!("the command could not be parsed ({err}), so it cannot be judged"),
                prefilter: Some(Prefilter::Inspect),
            };
        }
        if analysis.commands.is_empty() {
            return Decision {
                effect: Effect::Ask,
                rule: "shell: empty".into(),
                scope: Scope::Builtin,
                origin: Origin::Floor,
                reason: "the command line holds no command".into(),
                prefilter: Some(Prefilter::Inspect),
            };
        }
        let mut worst: Option<Decision> = None;
        // The line is proven read-only (`shell::read_only`) exactly when it parsed, has a
        // command, and every command is: judged here once per command, without copying it.
        let mut line_read_only = true;
        let mut effects = shell::effects::effects(&analysis, &self.start(cwd), None);
        // Where each operand lands through links (`cat link/../x`), judged with where it reads.
        self.jail.land(&mut effects);
        connections.0 = Some(effects.iter().flat_map(|fx| fx.network.iter().cloned()).collect());
        let proofs: Vec<bool> = analysis
            .commands
            .iter()
            .zip(&effects)
            .map(|(c, fx)| shell::command_proof(c, fx, None).is_ok())
            .collect();
        for (i, (cmd, fx)) in analysis.commands.iter().zip(&effects).enumerate() {
            let read_only = proofs[i];
            line_read_only &= read_only;
            let opaque = !cmd.opaque.is_empty();
            let mut d = self.unit(qualified, &Unit::Command { cmd, read_only }, profile, opaque);
            // A delegated child's substitution may be cleared by `permissions.subagent.allow`, when
            // every other command of the line (the hidden ones among them) is proven read-only.
            if d.rule == OPAQUE && proofs.iter().enumerate().all(|(j, p)| j == i || *p) {
                if let Some(allowed) = self.subagent_allow(qualified, cmd) {
                    d = allowed;
                }
            }
            // What the command does meets the deny and ask rules too: `cat < //etc/shadow` is a
            // read of /etc/shadow whatever tool performs it, `git -C . push` is a push. Only
            // deny and ask rules: a path rule's allow must not loosen a shell floor.
            // At equal effect the configured rule is named over the floor, and the origins fold
            // ([`Decision::worse`]).
            if let Some(e) = self.effect_decision(qualified, cmd, fx) {
                d = d.worse(e);
            }
            worst = Some(match worst.take() {
                Some(w) => w.worse(d),
                None => d,
            });
        }
        let mut d = worst.expect("at least one command");
        d.prefilter = Some(if line_read_only { Prefilter::Skip } else { Prefilter::Inspect });
        d
    }

    /// The `permissions.subagent.allow` decision for a delegated child's command whose only
    /// opacity is substitution ([`crate::subagent::only_substituted`]), when a rule matches it.
    fn subagent_allow(&self, qualified: &str, cmd: &Command) -> Option<Decision> {
        if self.lineage != crate::escape::Lineage::Delegated || !crate::subagent::only_substituted(cmd) {
            return None;
        }
        let unit = Unit::Command { cmd, read_only: false };
        let rule = self
            .subagent
            .allow
            .iter()
            .filter(|r| super::matches(r, qualified, &unit))
            .max_by_key(|r| r.scope)?;
        Some(Decision {
            effect: Effect::Allow,
            rule: rule.spec.source.clone(),
            scope: rule.scope,
            origin: Origin::of(rule.scope),
            reason: format!(
                "{unit} is allowed by permissions.subagent.allow {}: every command it substitutes is proven read-only",
                rule.spec.source
            ),
            prefilter: None,
        })
    }

    /// The directory a shell line starts in: the caller's working directory when it names an
    /// absolute one (the hook's `cwd`); not known when it names anything else (a relative
    /// directory, or [`crate::kinds::CWD_UNKNOWN`]: relative words are then anywhere); else,
    /// when it names none, the jail's root, else the tool's own unplaced start directory.
    pub(super) fn start(&self, cwd: Option<&str>) -> Base {
        match cwd {
            Some(dir) if dir.starts_with('/') => Base::Dir(normalize_abs(dir)),
            Some(_) => Base::Unknown,
            None => match self.jail.root().and_then(|r| r.to_str()) {
                Some(dir) => Base::Dir(normalize_abs(dir)),
                None => Base::start(),
            },
        }
    }

    /// The strongest deny or ask rule that a command's effects meet: a path it may touch, its
    /// canonical form, a subcommand that could not be placed. A possible match asks.
    fn effect_decision(&self, qualified: &str, cmd: &Command, fx: &CommandEffects) -> Option<Decision> {
        self.parts
            .rules
            .iter()
            .filter(|r| r.effect != Effect::Allow)
            .filter_map(|r| self.effect_rule(r, qualified, fx).map(|(hit, why)| (r, hit, why)))
            .map(|(rule, hit, why)| {
                let effect = if hit == Hit::Yes { rule.effect } else { Effect::Ask };
                let reason = match hit {
                    Hit::Yes => format!("`{cmd}` {why}, which {} matches", rule.spec.source),
                    Hit::Possibly => {
                        format!("`{cmd}` {why}, which {} may match, so it is asked", rule.spec.source)
                    }
                };
                super::decision(effect, rule, reason)
            })
            .max_by_key(|d| (d.effect, d.scope))
    }

    /// How one deny or ask `rule` meets a command's effects, and the words that say so.
    pub(super) fn effect_rule(
        &self,
        rule: &Rule,
        qualified: &str,
        fx: &CommandEffects,
    ) -> Option<(Hit, String)> {
        let spec = rule.spec.specifier.as_ref()?;
        match &rule.spec.subject {
            RuleSubject::Read | RuleSubject::Write | RuleSubject::File => fx
                .paths
                .iter()
                .filter(|p| effect_match::subject_covers(&rule.spec.subject, p.access))
                .filter_map(|p| effect_match::path_hit(&spec.path, p).map(|hit| (hit, p)))
                .max_by_key(|(hit, _)| *hit)
                .map(|(hit, p)| (hit, describe(p))),
            RuleSubject::Shell => effect_match::canonical_hit(&spec.command, fx)
                .map(|hit| (hit, canonical_why(&spec.command, fx))),
            // A command's destinations meet the fetch rules, read as the fetcher reads them
            // (`curl http://2130706433/` is 127.0.0.1).
            RuleSubject::Fetch => {
                let pattern = spec.domain.as_ref()?;
                fx.network
                    .iter()
                    .filter_map(|url| match pattern.matches(&read_url(url)) {
                        HostMatch::Yes => Some((Hit::Yes, url)),
                        HostMatch::Possibly => Some((Hit::Possibly, url)),
                        HostMatch::No => None,
                    })
                    .max_by_key(|(hit, _)| *hit)
                    .map(|(hit, url)| (hit, format!("reaches {url}")))
                    .or_else(|| effect_match::routed_destination(pattern, fx))
            }
            RuleSubject::Tool(g)
                if g.matches(qualified)
                    && matches!(
                        self.parts.kinds.kind_of(qualified),
                        super::super::kinds::KindSpec::Shell { .. }
                    ) =>
            {
                effect_match::canonical_hit(&spec.command, fx)
                    .map(|hit| (hit, canonical_why(&spec.command, fx)))
            }
            _ => None,
        }
    }
}

/// "reads /etc/hostname (written //etc/hostname)".
fn describe(p: &PathEffect) -> String {
    match p.place.to_string() {
        placed if placed == p.word => format!("{} {placed}", p.access.as_str()),
        placed => format!("{} {placed} (written {})", p.access.as_str(), p.word),
    }
}

fn canonical_why(pattern: &super::super::spec::CommandPattern, fx: &CommandEffects) -> String {
    if let Some(why) = crate::launder::why(pattern, fx) {
        return why;
    }
    match fx.canonical_from {
        portcullis_shell::effects::Canonical::Unplaced => {
            "takes an option before its subcommand that is not understood, so it may be any subcommand".into()
        }
        _ => format!("is `{}` once its global options are read", fx.canonical.join(" ")),
    }
}
