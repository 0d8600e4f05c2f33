//! The engine: units of a call, the rules that match each, and the floor.

mod by_name;
mod egress_glue;
mod examples;
mod matched;
mod plan;
mod shell_line;
mod unit;

pub use matched::Matched;

use unit::{matches, Unit};

use std::collections::HashMap;

use serde_json::Value;

use super::destination::read_url;
use super::egress::Egress;
use super::escape::{self, Lineage};
use super::jail::{Jail, Placed};
use super::kinds::{Subject, ToolKinds};
use super::spec::Subject as RuleSubject;
use super::{Decision, Effect, Origin, Posture, Prefilter, Profile, Rule, Scope};

/// The rule the opacity floor names (a command that hides what it runs is asked).
const OPAQUE: &str = "shell: opaque";

/// Programs in these directories are the system's own; elsewhere a path-qualified program
/// (`./git`) may be anything, so allow rules do not match it (deny and ask rules still do).
const SYSTEM_BIN: &[&str] = &["/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/"];

/// Everything the engine is built from.
#[derive(Debug, Clone, Default)]
pub struct EngineParts {
    pub rules: Vec<Rule>,
    pub kinds: ToolKinds,
    pub jail: Option<Jail>,
    pub posture: Posture,
    pub profiles: HashMap<String, Profile>,
    /// An agent's profile: it applies to every upstream, capped by the upstream's own.
    pub agent_profile: Option<Profile>,
}

/// What an agent's policy lays over the config's (see [`Engine::for_agent`] and
/// [`Engine::narrowed`]): rules added to the config's (deny dominates across all of them, so an
/// added allow never lifts a configured deny or ask), a posture, a profile.
#[derive(Debug, Clone, Default)]
pub struct Layered {
    pub rules: Vec<Rule>,
    pub posture: Option<Posture>,
    pub profile: Option<Profile>,
}

/// The network destinations of a shell line's commands as the effect model wrote them, once the
/// rules have analysed it (`None`: no line was analysed).
#[derive(Debug, Default)]
struct Connections(Option<Vec<String>>);

/// The compiled rule engine.
#[derive(Debug, Clone)]
pub struct Engine {
    parts: EngineParts,
    jail: Jail,
    /// Where arguments may send a tool (`egress:` of every scope; the defaults when empty).
    egress: Egress,
    /// A delegated child's engine never gets the relaxed escape rows ([`crate::escape`]).
    lineage: Lineage,
    /// `permissions.subagent`: laid over a child's engine when it is narrowed.
    subagent: std::sync::Arc<super::subagent::SubagentRules>,
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new(EngineParts::default())
    }
}

impl Engine {
    pub fn new(parts: EngineParts) -> Engine {
        let jail = parts.jail.clone().unwrap_or_else(|| {
            Jail::new(
                None,
                &super::jail::DEFAULT_DENY_NAMES.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                super::jail::Resolve::Filesystem,
            )
            .expect("a jail without a root needs no filesystem")
        });
        Engine { parts, jail, egress: Egress::default(), lineage: Lineage::Own, subagent: Default::default() }
    }

    /// The same engine, laying `rules` over every delegated child's ([`Engine::narrowed`]).
    pub fn with_subagent(mut self, rules: super::subagent::SubagentRules) -> Engine {
        self.subagent = std::sync::Arc::new(rules);
        self
    }

    /// The engine a configured agent decides with: the config's rules and the agent's, the
    /// agent's posture in place of the config's (the operator chose it), and the agent's profile
    /// on every upstream, capped by the upstream's own.
    pub fn for_agent(&self, agent: &Layered) -> Engine {
        let mut parts = self.parts.clone();
        parts.rules.extend(agent.rules.iter().cloned());
        if let Some(p) = agent.posture {
            parts.posture = p;
        }
        parts.agent_profile = agent.profile;
        self.with_parts(parts, self.lineage)
    }

    /// The same engine with `rules` added beside its own (a workspace's tiers, decided per call
    /// by the hook): posture, profiles and lineage unchanged; deny dominates across all rules,
    /// so an added allow lifts no deny or ask already there.
    pub fn with_rules(&self, rules: &[Rule]) -> Engine {
        let mut parts = self.parts.clone();
        parts.rules.extend_from_slice(rules);
        self.with_parts(parts, self.lineage)
    }

    /// A narrower engine (a delegated agent's): rules added, and the posture and profile each
    /// the narrower of this engine's and the narrowing's. Never decides more leniently than
    /// `self` for any call.
    pub fn narrowed(&self, by: &Layered) -> Engine {
        let mut parts = self.parts.clone();
        // The first narrowing makes a child: `permissions.subagent`'s denies and asks join once.
        if self.lineage == Lineage::Own {
            parts.rules.extend(self.subagent.tighten.iter().cloned());
        }
        parts.rules.extend(by.rules.iter().cloned());
        if let Some(p) = by.posture {
            parts.posture = parts.posture.min(p);
        }
        if let Some(p) = by.profile {
            parts.agent_profile = Some(parts.agent_profile.map_or(p, |mine| mine.min(p)));
            for upstream in parts.profiles.values_mut() {
                *upstream = (*upstream).min(p);
            }
        }
        self.with_parts(parts, Lineage::Delegated)
    }

    /// This engine's jail, egress and child rules over other `parts`, with `lineage`: every
    /// derived engine is built here, so none can drop a field.
    fn with_parts(&self, parts: EngineParts, lineage: Lineage) -> Engine {
        Engine {
            parts,
            jail: self.jail.clone(),
            egress: self.egress.clone(),
            lineage,
            subagent: self.subagent.clone(),
        }
    }

    /// The agent's own profile (a configured agent's, narrowed by any delegation), if it has one.
    pub fn agent_profile(&self) -> Option<Profile> {
        self.parts.agent_profile
    }

    /// The profile a call to `upstream` is decided under.
    fn profile(&self, upstream: &str) -> Profile {
        match (self.parts.profiles.get(upstream).copied(), self.parts.agent_profile) {
            (Some(u), Some(a)) => u.min(a),
            (Some(u), None) => u,
            (None, Some(a)) => a,
            (None, None) => Profile::default(),
        }
    }

    /// The jail's root: what relative path patterns in rules are relative to.
    pub fn jail_root(&self) -> Option<&std::path::Path> {
        self.jail.root()
    }

    /// The working directory the secret policy's tree rule knows: the jail's root.
    fn cwd(&self) -> Option<&str> {
        self.jail.root().and_then(|r| r.to_str())
    }

    /// The posture the engine decides under.
    pub fn posture(&self) -> Posture {
        self.parts.posture
    }

    pub fn kinds(&self) -> &ToolKinds {
        &self.parts.kinds
    }

    pub fn rules(&self) -> &[Rule] {
        &self.parts.rules
    }

    /// Whether deciding a call to `qualified` reads its arguments at all. A generic tool's
    /// arguments only matter to `tool(specifier)` rules; without one the proxy need not parse them.
    pub fn needs_args(&self, qualified: &str) -> bool {
        self.egress.active(self.parts.posture)
            || !matches!(self.parts.kinds.kind_of(qualified), super::kinds::KindSpec::Generic)
            || self
                .parts
                .rules
                .iter()
                .any(|r| matches!(r.spec.subject, RuleSubject::Tool(_)) && r.spec.specifier.is_some())
    }

    /// Decides a call to `qualified` (on `upstream`) with `args`: the rules on its subject, and
    /// egress on every destination its arguments name; the worse of the two decides.
    pub fn decide(&self, upstream: &str, qualified: &str, args: &Value) -> Decision {
        let profile = self.profile(upstream);
        // A shell line's connections, from the one analysis the rules make of it.
        let mut connections = Connections::default();
        let d =
            self.subject(qualified, self.parts.kinds.classify(qualified, args), profile, &mut connections);
        // Paths that never reach a rule (arguments missing, a line that holds no command) ask;
        // a tool denied by name is denied whatever its arguments ([`by_name`]).
        let d = match d.effect {
            Effect::Ask => self.by_name(qualified, profile).unwrap_or(d),
            _ => d,
        };
        if d.effect == Effect::Deny {
            return d;
        }
        match self.egress_with(upstream, qualified, args, connections.0.as_deref()) {
            Some(e) => d.worse(e),
            None => d,
        }
    }

    fn subject(
        &self,
        qualified: &str,
        subject: Subject,
        profile: Profile,
        net: &mut Connections,
    ) -> Decision {
        match subject {
            Subject::Shell { command, allowlist: None, shell, cwd } => {
                self.shell(qualified, &command, shell, cwd.as_deref(), profile, net)
            }
            Subject::Shell { command, allowlist: Some(list), shell, cwd } => {
                match list.check(&command, &self.jail) {
                    Err(why) => Decision {
                        effect: Effect::Deny,
                        rule: "tools: allowlist".into(),
                        scope: Scope::Config,
                        origin: Origin::Configured,
                        reason: why,
                        prefilter: Some(Prefilter::Inspect),
                    },
                    // An allowlisted invocation is the executor's contract: its floor allows, while
                    // configured denies and asks (and a readonly profile) still hold.
                    Ok(()) => {
                        let floor = if profile <= Profile::Readonly { profile } else { Profile::Privileged };
                        self.shell(qualified, &command, shell, cwd.as_deref(), floor, net)
                    }
                }
            }
            // A tool server opens a relative path from its own directory (`jail.relative`).
            Subject::File { path, access } => match self.jail.place_tool(&path) {
                Placed::Refused(why) => Decision {
                    effect: Effect::Deny,
                    rule: "jail".into(),
                    scope: Scope::Builtin,
                    origin: Origin::Floor,
                    reason: why,
                    prefilter: None,
                },
                Placed::Inside(resolved) => self.unit(
                    qualified,
                    &Unit::Path { path: &resolved, access, written: &path },
                    profile,
                    false,
                ),
                Placed::Outside { resolved, root } => {
                    let unit = Unit::Path { path: &resolved, access, written: &path };
                    let inner = self.unit(qualified, &unit, profile, false);
                    escape::over(inner, &unit.to_string(), &root, (self.parts.posture, access, self.lineage))
                }
            },
            Subject::Fetch { url } => {
                let reading = read_url(&url);
                self.unit(qualified, &Unit::Fetch { url: &url, reading }, profile, false)
            }
            Subject::Generic { args } => self.unit(qualified, &Unit::Generic { args: &args }, profile, false),
            // The worst reading decides (the first of equals in scope too, so its reason is the
            // plainest), and an ask is configured if any reading's was.
            Subject::Readings(all) => all
                .into_iter()
                .map(|s| self.subject(qualified, s, profile, net))
                .reduce(Decision::worse)
                .unwrap_or_else(|| self.floor(&Unit::Generic { args: "" }, profile)),
            Subject::Unplaced { reason } => Decision {
                effect: Effect::Deny,
                rule: "resource uri".into(),
                scope: Scope::Builtin,
                origin: Origin::Floor,
                reason,
                prefilter: None,
            },
            Subject::Malformed { kind, pointer } => Decision {
                effect: Effect::Ask,
                rule: format!("tools: {kind} kind"),
                scope: Scope::Builtin,
                origin: Origin::Floor,
                reason: format!(
                    "{qualified} is a {kind} tool but its argument {pointer} is missing or not a string"
                ),
                prefilter: None,
            },
        }
    }

    /// The strongest configured rule matching `unit`, by effect then scope.
    fn configured(
        &self,
        qualified: &str,
        unit: &Unit<'_>,
        keep: impl Fn(Effect) -> bool,
    ) -> Option<(Effect, &Rule)> {
        self.parts
            .rules
            .iter()
            .filter(|r| keep(r.effect) && matches(r, qualified, unit))
            .max_by_key(|r| (r.effect, r.scope))
            .map(|r| (r.effect, r))
    }

    fn unit(&self, qualified: &str, unit: &Unit<'_>, profile: Profile, opaque: bool) -> Decision {
        let configured = self.configured(qualified, unit, |_| true);
        if let Some((Effect::Deny, rule)) = configured {
            return decision(Effect::Deny, rule, format!("{unit} is denied by {}", rule.spec.source));
        }
        // Plan mode judges only edits, writes and shell; a readonly profile judges everything.
        let judged = profile == Profile::Readonly || matches!(unit, Unit::Command { .. } | Unit::Path { .. });
        if profile <= Profile::Readonly && judged && !unit.read_only(self.cwd()) {
            return match profile {
                Profile::Plan => Decision {
                    effect: Effect::Deny,
                    rule: "plan mode".into(),
                    scope: Scope::Builtin,
                    origin: Origin::Floor,
                    reason: format!(
                        "{unit} is not proven read-only and the agent is in plan mode: present the plan \
                         to the user first; edits, writes and commands that change anything wait until \
                         the user leaves plan mode"
                    ),
                    prefilter: None,
                },
                _ => Decision {
                    effect: Effect::Deny,
                    rule: "profile: readonly".into(),
                    scope: Scope::Config,
                    origin: Origin::Configured,
                    reason: format!("{unit} is not proven read-only and the profile in force (the upstream's or the agent's) is readonly"),
                    prefilter: None,
                },
            };
        }
        if let Some((Effect::Ask, rule)) = configured {
            return decision(Effect::Ask, rule, format!("{unit} needs approval by {}", rule.spec.source));
        }
        // The opacity floor: what cannot be read from the words is asked, whatever allows it.
        if opaque && self.parts.posture != Posture::Yolo {
            let Unit::Command { cmd, .. } = unit else { unreachable!("only commands are opaque") };
            let why: Vec<String> = cmd.opaque.iter().map(|o| format!("{o:?}")).collect();
            return Decision {
                effect: Effect::Ask,
                rule: OPAQUE.into(),
                scope: Scope::Builtin,
                origin: Origin::Floor,
                reason: format!("{unit} hides what it runs ({}), so it is asked", why.join(", ")),
                prefilter: None,
            };
        }
        if let Some((Effect::Allow, rule)) = configured {
            // An allow for a program is not an allow to write files: `Shell(echo:*)` must not
            // cover `echo x > ~/.bashrc`. Only the posture or profile lifts this, like the floor.
            let lifted =
                profile == Profile::Privileged || matches!(self.parts.posture, Posture::Auto | Posture::Yolo);
            if let (Unit::Command { cmd, .. }, false) = (unit, lifted) {
                if let Some(r) = cmd.redirects.iter().find(|r| r.writes_file()) {
                    return Decision {
                        effect: Effect::Ask,
                        rule: "shell: redirect".into(),
                        scope: Scope::Builtin,
                        origin: Origin::Floor,
                        reason: format!(
                            "{unit} writes {} by redirection, which {} does not cover",
                            r.target, rule.spec.source
                        ),
                        prefilter: None,
                    };
                }
            }
            return decision(Effect::Allow, rule, format!("{unit} is allowed by {}", rule.spec.source));
        }
        self.floor(unit, profile)
    }

    fn floor(&self, unit: &Unit<'_>, profile: Profile) -> Decision {
        let built = |effect, rule: &str, reason: String| Decision {
            effect,
            rule: rule.into(),
            scope: Scope::Builtin,
            origin: Origin::Floor,
            reason,
            prefilter: None,
        };
        if unit.read_only(self.cwd()) {
            return built(Effect::Allow, "floor: read-only", format!("{unit} is read-only"));
        }
        // A read of a secret store is loosened only where everything is: at trusted it asks.
        let secret = unit.secret(self.cwd());
        let loosened = match (profile, self.parts.posture) {
            (Profile::Privileged, _) | (_, Posture::Auto | Posture::Yolo) => true,
            (_, Posture::Trusted) => !matches!(unit, Unit::Command { .. }) && secret.is_none(),
            (_, Posture::Strict) => false,
        };
        if let Some(s) = secret {
            let (effect, rule, then) = match loosened {
                true => (Effect::Allow, "floor: posture", "allowed by the posture or profile all the same"),
                false => (Effect::Ask, "floor: secret", "so it is asked"),
            };
            return built(effect, rule, format!("{unit} may reveal a secret ({s}), {then}"));
        }
        if loosened {
            return built(
                Effect::Allow,
                "floor: posture",
                format!("{unit} is allowed by the posture or profile"),
            );
        }
        built(Effect::Ask, "floor: mutating", format!("{unit} is not proven read-only, so it is asked"))
    }
}

fn decision(effect: Effect, rule: &Rule, reason: String) -> Decision {
    Decision {
        effect,
        rule: rule.spec.source.clone(),
        scope: rule.scope,
        origin: Origin::of(rule.scope),
        reason,
        prefilter: None,
    }
}
