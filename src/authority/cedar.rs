//! The `cedar` evaluator: one `is_authorized` per call over the operator's policies, whose only
//! power is to deny — a forbid that holds, or any policy that cannot be evaluated for the call.

use std::str::FromStr;
use std::sync::Arc;

use cedar_policy::{
    AuthorizationError, Authorizer, Context, Decision as CedarDecision, Entities, EntityId, EntityTypeName,
    EntityUid, PolicyId, Request, Response, RestrictedExpression,
};
use serde_json::Value;

use super::context::{self, Facts, Unjudged};
use super::readings::readings;
use crate::config::authority::{Callers, CedarPolicy};
use crate::identity::Agent;
use crate::rules::kinds::ToolKinds;

/// A compiled Cedar evaluator: the policies and the names every request uses, parsed once.
#[derive(Debug)]
pub struct Cedar {
    policy: Arc<CedarPolicy>,
    authorizer: Authorizer,
    entities: Entities,
    agent: EntityTypeName,
    anonymous: EntityTypeName,
    tool: EntityTypeName,
    action: EntityTypeName,
}

/// What one call is, for the policy.
pub struct Asked<'a> {
    pub agent: Option<&'a Agent>,
    pub upstream: &'a str,
    pub qualified: &'a str,
    pub args: &'a Value,
}

/// Why the policy refused a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// These forbid policies hold for the call (as Cedar reports them).
    Forbidden(Vec<PolicyId>),
    /// These policies could not be evaluated for the call (a missing argument, a type
    /// mismatch): Cedar would skip them, which would let a call through a forbid by sending an
    /// argument of another type, so they deny.
    Failed(Vec<(PolicyId, String)>),
    /// The call's facts could not be built.
    Unjudged(Unjudged),
    /// An anonymous caller where the operator did not allow them.
    Unverified,
}

fn type_name(s: &str) -> EntityTypeName {
    EntityTypeName::from_str(s).expect("a constant Cedar type name")
}

/// `Err` with the forbids that hold in `response`. Deny with no reason is "no permit held": the
/// carried set is the permit here.
fn forbidden(response: &Response) -> Result<(), Refusal> {
    match response.decision() {
        CedarDecision::Deny => {
            let forbids: Vec<PolicyId> = response.diagnostics().reason().cloned().collect();
            match forbids.is_empty() {
                true => Ok(()),
                false => Err(Refusal::Forbidden(forbids)),
            }
        }
        CedarDecision::Allow => Ok(()),
    }
}

impl Cedar {
    pub fn new(policy: Arc<CedarPolicy>) -> Cedar {
        Cedar {
            policy,
            authorizer: Authorizer::new(),
            entities: Entities::empty(),
            agent: type_name("Portcullis::Agent"),
            anonymous: type_name("Portcullis::Anonymous"),
            tool: type_name("Portcullis::Tool"),
            action: type_name("Portcullis::Action"),
        }
    }

    /// `Ok` when no policy denies the call. Only ever consulted for a call the carried set
    /// allows (or asks), so a `permit` here grants nothing.
    pub fn vet(&self, kinds: &ToolKinds, asked: &Asked<'_>) -> Result<(), Refusal> {
        let principal = match asked.agent {
            Some(a) => EntityUid::from_type_name_and_id(self.agent.clone(), EntityId::new(&*a.id)),
            None if self.policy.callers == Callers::AnonymousToo => {
                EntityUid::from_type_name_and_id(self.anonymous.clone(), EntityId::new("anonymous"))
            }
            None => return Err(Refusal::Unverified),
        };
        let facts = context::facts(kinds, &self.policy.jail, asked.qualified, asked.args)
            .map_err(Refusal::Unjudged)?;
        let mut readings = readings(asked.args).map_err(Refusal::Unjudged)?.into_iter();
        let literal = readings.next().ok_or(Refusal::Unjudged(Unjudged::Ambiguous(0)))?;
        let action =
            EntityUid::from_type_name_and_id(self.action.clone(), EntityId::new(facts.operation.as_str()));
        let resource = EntityUid::from_type_name_and_id(self.tool.clone(), EntityId::new(asked.qualified));
        let ask = |args: RestrictedExpression| -> Result<Response, Refusal> {
            let context = self.context(asked, &facts, args).map_err(Refusal::Unjudged)?;
            // No schema here: the arguments record is open, which the schema cannot say.
            let request = Request::new(principal.clone(), action.clone(), resource.clone(), context, None)
                .map_err(|e| Refusal::Unjudged(Unjudged::Record(e.to_string())))?;
            Ok(self.authorizer.is_authorized(&request, &self.policy.policies, &self.entities))
        };
        // The literal reading: a policy that cannot be evaluated denies (an argument of another
        // type than the policy expects must not pass a forbid by making it fail).
        let response = ask(literal)?;
        let failed: Vec<(PolicyId, String)> = response
            .diagnostics()
            .errors()
            .map(|e| match e {
                AuthorizationError::PolicyEvaluationError(e) => {
                    (e.policy_id().clone(), e.inner().to_string())
                }
            })
            .collect();
        if !failed.is_empty() {
            return Err(Refusal::Failed(failed));
        }
        forbidden(&response)?;
        // Every other reading an upstream may make of the same bytes (`"11"` as 11): a forbid
        // that holds for one denies. An error there is the literal reading's type question,
        // already answered above.
        readings.try_for_each(|args| forbidden(&ask(args)?))
    }

    fn context(
        &self,
        asked: &Asked<'_>,
        facts: &Facts,
        args: RestrictedExpression,
    ) -> Result<Context, Unjudged> {
        let s = |v: &str| RestrictedExpression::new_string(v.to_owned());
        let (id, root, depth) = match asked.agent {
            Some(a) => (&*a.id, &*a.name, a.delegated_by.len()),
            None => ("", "", 0),
        };
        let mut pairs = vec![
            ("capability".to_owned(), s(asked.qualified)),
            ("operation".to_owned(), s(facts.operation.as_str())),
            ("upstream".to_owned(), s(asked.upstream)),
            ("agent".to_owned(), s(id)),
            ("root".to_owned(), s(root)),
            ("depth".to_owned(), RestrictedExpression::new_long(i64::try_from(depth).unwrap_or(i64::MAX))),
            ("args".to_owned(), args),
        ];
        if let Some(p) = &facts.path {
            pairs.push(("path".to_owned(), s(p)));
        }
        if let Some(h) = &facts.host {
            pairs.push(("host".to_owned(), s(h)));
        }
        Context::from_pairs(pairs).map_err(|e| Unjudged::Record(e.to_string()))
    }
}
