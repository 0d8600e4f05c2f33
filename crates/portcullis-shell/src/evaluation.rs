//! What evaluating a text a second time (a subscript, an arithmetic expression) could run: the
//! value both the word decoder and the subscript reader speak ([`crate::subscript`] finds it).

/// What evaluating a text as a name or an expression could run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Evaluation {
    /// A subscript (or the text as a whole) is evaluated as code: not a plain integer.
    pub code: bool,
    /// The value of some variable is evaluated (an identifier in arithmetic).
    pub dynamic: bool,
    /// Sources of the command substitutions that could run, to analyse as commands.
    pub substitutions: Vec<String>,
}

impl Evaluation {
    pub(crate) fn merge(&mut self, other: Evaluation) {
        self.code |= other.code;
        self.dynamic |= other.dynamic;
        for s in other.substitutions {
            if !self.substitutions.contains(&s) {
                self.substitutions.push(s);
            }
        }
    }

    /// Code for certain: a name whose text is only known at run time (`read "$x"`).
    pub(crate) fn unknown() -> Self {
        Self { code: true, dynamic: true, substitutions: Vec::new() }
    }
}
