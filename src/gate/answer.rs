//! The one table from how a human's ask ended to what the agent reads. Every transport — the
//! parked HTTP stream, the modern round trip, stdio, plain HTTP tools — refuses with these words,
//! so the same answer reads the same wherever the call came from.

use super::CallOutcome;
use crate::approval::{Resolution, Via};

use crate::says::answer::{DISMISSED, OPERATOR_DENIED, OPERATOR_TIMED_OUT, USER_DENIED, USER_TIMED_OUT};
pub use crate::says::answer::{HEADLESS, OVERLOADED, STORE_DOWN};

/// What the agent reads, and the outcome label, when an ask asked of `via` ended in `resolution`;
/// `None` when it was allowed (the call goes on).
pub fn refusal(resolution: &Resolution, via: Via) -> Option<(&'static str, CallOutcome)> {
    let why = match (resolution, via) {
        (Resolution::Allowed(_), _) => return None,
        (Resolution::Denied, Via::Client) => return Some((USER_DENIED, CallOutcome::Denied)),
        (Resolution::Denied, Via::Operator) => return Some((OPERATOR_DENIED, CallOutcome::Denied)),
        (Resolution::Cancelled, _) => DISMISSED,
        (Resolution::TimedOut, Via::Operator) => OPERATOR_TIMED_OUT,
        (Resolution::TimedOut, Via::Client) => USER_TIMED_OUT,
        (Resolution::Headless, _) => HEADLESS,
        (Resolution::Overloaded, _) => OVERLOADED,
        (Resolution::StoreDown, _) => STORE_DOWN,
    };
    Some((why, CallOutcome::AskRefused))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::Choice;

    #[test]
    fn every_refusing_answer_has_one_text_and_only_a_denial_counts_as_denied() {
        let all = [
            Resolution::Denied,
            Resolution::Cancelled,
            Resolution::TimedOut,
            Resolution::Headless,
            Resolution::Overloaded,
            Resolution::StoreDown,
        ];
        for via in [Via::Client, Via::Operator] {
            assert_eq!(refusal(&Resolution::Allowed(Choice::AllowOnce), via), None);
            for r in &all {
                let (why, outcome) = refusal(r, via).expect("refused");
                assert!(why.ends_with('.'), "{why}");
                let denied = *r == Resolution::Denied;
                assert_eq!(outcome == CallOutcome::Denied, denied, "{r:?} by {via:?}");
                assert_eq!(outcome == CallOutcome::AskRefused, !denied, "{r:?} by {via:?}");
            }
        }
    }

    #[test]
    fn a_dismissal_is_a_dismissal_for_every_asker_and_never_headless() {
        for via in [Via::Client, Via::Operator] {
            let (why, _) = refusal(&Resolution::Cancelled, via).unwrap();
            assert!(why.contains("dismissed"), "{why}");
            assert!(!why.contains("headless"), "{why}");
        }
    }

    #[test]
    fn the_text_names_who_was_asked_when_it_matters() {
        assert_eq!(refusal(&Resolution::Denied, Via::Client).unwrap().0, "The user denied it.");
        assert_eq!(refusal(&Resolution::Denied, Via::Operator).unwrap().0, "An operator denied it.");
        assert!(refusal(&Resolution::TimedOut, Via::Operator)
            .unwrap()
            .0
            .starts_with("No operator decided in time"));
        assert!(refusal(&Resolution::TimedOut, Via::Client)
            .unwrap()
            .0
            .starts_with("The user did not decide in time"));
        assert_eq!(refusal(&Resolution::Headless, Via::Operator).unwrap().0, HEADLESS);
        assert_eq!(refusal(&Resolution::Overloaded, Via::Operator).unwrap().0, OVERLOADED);
    }
}
