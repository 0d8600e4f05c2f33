//! Which of the proxy's mechanisms refused a replayed call, read from its audit line's `rule`.

use serde::Serialize;

/// What refused a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mechanism {
    /// Layer 1's destination rules (`egress: …`).
    Egress,
    /// Flow fingerprints: a copy of private text reaching a sink (`flows: TOOL`, and the
    /// fail-safe refusals `flows: overflowed`, `flows: unscanned`).
    Fingerprint,
    /// Pieces of private text counted across a session's calls (`flows: pieces of TOOL`).
    Pieces,
    /// Destination provenance: an address learned only from content that is not the user's
    /// (`flows: destination from TOOL`).
    Destination,
    /// A secret sentinel leaving (`secrets: …`).
    Sentinel,
    /// A guardrail rule decided by the local detectors (`checker: local`).
    Detector,
    /// A guardrail rule decided with a model checker configured.
    Model,
    /// Anything else: permission rules, the posture's floor, limits.
    Rule,
}

impl Mechanism {
    pub const ALL: [Mechanism; 8] = [
        Mechanism::Egress,
        Mechanism::Fingerprint,
        Mechanism::Pieces,
        Mechanism::Destination,
        Mechanism::Sentinel,
        Mechanism::Detector,
        Mechanism::Model,
        Mechanism::Rule,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Mechanism::Egress => "egress",
            Mechanism::Fingerprint => "fingerprint",
            Mechanism::Pieces => "pieces",
            Mechanism::Destination => "destination",
            Mechanism::Sentinel => "sentinel",
            Mechanism::Detector => "detector",
            Mechanism::Model => "model",
            Mechanism::Rule => "rule",
        }
    }
}

/// Whether the config's guardrails judge with the local detectors only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checker {
    Local,
    Model,
}

/// The mechanism behind a refusal whose audit line names `rule`; `guardrail_labels` are the
/// labels of the config's guardrail rules (a guardrail refusal records its rule's label).
pub fn classify(rule: &str, guardrail_labels: &[String], checker: Checker) -> Mechanism {
    // `egress: metadata`, and `egress.ask: email` for a configured ask refused for want of a human.
    let head = rule.split([':', '.']).next().unwrap_or("").trim();
    match head {
        "egress" => Mechanism::Egress,
        "flows" | "flow" if rule.starts_with("flows: pieces of ") => Mechanism::Pieces,
        "flows" | "flow" if rule.starts_with("flows: destination from ") => Mechanism::Destination,
        "flows" | "flow" => Mechanism::Fingerprint,
        "secrets" | "secret" | "sentinel" => Mechanism::Sentinel,
        _ if guardrail_labels.iter().any(|l| l == rule) || rule.starts_with("guardrail") => match checker {
            Checker::Local => Mechanism::Detector,
            Checker::Model => Mechanism::Model,
        },
        _ => Mechanism::Rule,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_attributed_by_their_rule() {
        let labels = vec!["mcp__*".to_owned()];
        let cases = [
            ("egress: metadata", Checker::Local, Mechanism::Egress),
            ("egress: email:evil.example", Checker::Model, Mechanism::Egress),
            (
                "egress.ask: email mark@example.com (argument /recipients/0)",
                Checker::Local,
                Mechanism::Egress,
            ),
            ("flows: text from mcp__mail__search_emails", Checker::Local, Mechanism::Fingerprint),
            ("flows: overflowed", Checker::Local, Mechanism::Fingerprint),
            ("flows: pieces of mcp__mail__search_emails", Checker::Local, Mechanism::Pieces),
            ("flows: destination from mcp__web__get_page", Checker::Local, Mechanism::Destination),
            ("secrets: aws", Checker::Local, Mechanism::Sentinel),
            ("mcp__*", Checker::Local, Mechanism::Detector),
            ("mcp__*", Checker::Model, Mechanism::Model),
            ("guardrail rule mcp__* fails closed", Checker::Model, Mechanism::Model),
            ("deny mcp__agentdojo__delete_file", Checker::Local, Mechanism::Rule),
            ("", Checker::Local, Mechanism::Rule),
            ("egressive", Checker::Local, Mechanism::Rule),
        ];
        for (rule, checker, want) in cases {
            assert_eq!(classify(rule, &labels, checker), want, "{rule:?}");
        }
    }
}
