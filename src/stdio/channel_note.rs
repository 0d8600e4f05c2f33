//! What `wrap` tells its log once the client has said whether it can elicit: who an ask will
//! reach, or that nobody can and every ask is refused — so "why was everything refused?" has its
//! answer in the client's MCP log, not in a doc.

use crate::approval::{Approvals, Via};

/// The one line `wrap` logs after `initialize`, and whether it is a warning.
pub fn note(approvals: &Approvals, client_elicits: bool) -> (bool, &'static str) {
    match (approvals.route(client_elicits), client_elicits) {
        (Some(Via::Client), _) => (false, "asks reach the client's user through MCP elicitation"),
        (Some(Via::Operator), _) => (
            false,
            "asks wait for an operator (portcullis approvals, or the console) up to approvals.timeout",
        ),
        (None, false) => (
            true,
            "the client did not offer elicitation and no operator can answer: every ask is refused \
             (headless). Allow what the agent needs with a rule, or use a client that supports elicitation",
        ),
        (None, true) => (true, "approvals.channel allows no one to be asked: every ask is refused"),
    }
}

/// Logs [`note`].
pub fn log(approvals: &Approvals, client_elicits: bool) {
    match note(approvals, client_elicits) {
        (true, line) => tracing::warn!("{line}"),
        (false, line) => tracing::info!("{line}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::approvals::{Channel, Settings};

    fn approvals(channel: Channel, operator: bool) -> Approvals {
        let metrics = std::sync::Arc::new(crate::telemetry::Metrics::new());
        Approvals::new(&Settings { channel, ..Settings::default() }, operator, metrics)
    }

    #[test]
    fn the_note_names_the_channel_an_ask_will_take_or_says_that_none_exists() {
        assert_eq!(
            note(&approvals(Channel::Auto, false), true).1,
            "asks reach the client's user through MCP elicitation"
        );
        assert!(note(&approvals(Channel::Auto, true), false).1.starts_with("asks wait for an operator"));
        let (warn, line) = note(&approvals(Channel::Auto, false), false);
        assert!(warn && line.contains("every ask is refused (headless)"), "{line}");
        let (warn, line) = note(&approvals(Channel::None, false), true);
        assert!(warn && line.contains("allows no one"), "{line}");
    }
}
