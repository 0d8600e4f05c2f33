//! What a Cedar policy is told about one call: the operation and the normalised target (the
//! arguments, as every record an upstream may read them as, are [`super::readings`]) — built
//! once per call, never from a credential or a header.

use serde_json::Value;

use crate::rules::destination::{read_url, Reading};
use crate::rules::jail::{Jail, Placed};
use crate::rules::kinds::{Subject, ToolKinds};
use crate::rules::subject::Access;

/// Arguments nested deeper than this are not turned into a record: the call is refused.
pub const MAX_DEPTH: usize = 32;

/// What a tool does to its target: the Cedar action (`Portcullis::Action::"read"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Shell,
    Read,
    Write,
    Search,
    Fetch,
    Resource,
    /// Any other tool.
    Call,
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Shell => "shell",
            Operation::Read => "read",
            Operation::Write => "write",
            Operation::Search => "search",
            Operation::Fetch => "fetch",
            Operation::Resource => "resource",
            Operation::Call => "call",
        }
    }
}

/// A call's operation and its target after normalisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    pub operation: Operation,
    /// A file tool's path as the jail resolves it.
    pub path: Option<String>,
    /// A fetch tool's host, as every fetcher reads it.
    pub host: Option<String>,
}

/// Why a call's facts cannot be given to a policy: the call is refused, since a condition on
/// its target could not be held.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unjudged {
    #[error("its target cannot be normalised ({0}), so the authority policy cannot be held to it")]
    Target(String),
    #[error(
        "its arguments are nested deeper than {MAX_DEPTH} levels, so the authority policy cannot read them"
    )]
    TooDeep,
    #[error("its arguments cannot be made a Cedar record ({0})")]
    Record(String),
    #[error(
        "its arguments hold more than {0} combinations of values an upstream may read as another type \
         (\"11\" as 11, 1 as true), so the authority policy cannot be held to each"
    )]
    Ambiguous(usize),
}

/// The operation and normalised target of `qualified` called with `args`.
pub fn facts(kinds: &ToolKinds, jail: &Jail, qualified: &str, args: &Value) -> Result<Facts, Unjudged> {
    let bare = |operation| Ok(Facts { operation, path: None, host: None });
    match kinds.classify(qualified, args) {
        Subject::Shell { .. } => bare(Operation::Shell),
        Subject::Generic { .. } => bare(Operation::Call),
        // A resource URI's readings are the rule engine's; the policy sees the URI in the args.
        Subject::Readings(_) => bare(Operation::Resource),
        Subject::File { path, access } => {
            let operation = match access {
                Access::Read => Operation::Read,
                Access::Write => Operation::Write,
                Access::Search => Operation::Search,
            };
            match jail.place_tool(&path) {
                Placed::Inside(p) | Placed::Outside { resolved: p, .. } => {
                    Ok(Facts { operation, path: Some(p), host: None })
                }
                Placed::Refused(why) => Err(Unjudged::Target(why)),
            }
        }
        Subject::Fetch { url } => match read_url(&url) {
            Reading::One(d) => {
                Ok(Facts { operation: Operation::Fetch, path: None, host: Some(d.host.to_string()) })
            }
            other => Err(Unjudged::Target(other.doubt().unwrap_or_default())),
        },
        Subject::Unplaced { reason } => Err(Unjudged::Target(reason)),
        Subject::Malformed { kind, pointer } => Err(Unjudged::Target(format!(
            "a {kind} tool whose argument {pointer} is missing or not a string"
        ))),
    }
}
