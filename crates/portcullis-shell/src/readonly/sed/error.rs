//! The one error a sed script can earn: it does not compile (shared by the parser and the text rules).

/// Why a script does not compile (sed would refuse it too, or it is outside the model).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("sed script does not parse: {0}")]
pub(crate) struct ParseError(pub &'static str);

pub(crate) type Parsed<T> = Result<T, ParseError>;
