//! Child-scoped rules (`permissions.subagent`): what every delegated child meets beyond the
//! rules its root decides under.
//!
//! - `deny` and `ask` rules are added to a child's engine when it is narrowed from its root's
//!   ([`crate::Engine::narrowed`]): deny dominance holds across them and the main rules as it does
//!   everywhere, so they only ever tighten.
//! - `allow` rules lift nothing the main rules decide, with one exception: the opacity floor a
//!   `$(…)` or `<(…)` substitution puts on a command. A child's command whose only opacity is
//!   substitution is allowed by a `subagent.allow` rule that matches it exactly when every other
//!   command of the line — the hidden inner commands among them — is independently proven
//!   read-only, its program word is literal, and it writes no file by redirection.

use portcullis_shell::{Command, Opacity};

use super::Rule;

/// The rules of `permissions.subagent`, compiled.
#[derive(Debug, Clone, Default)]
pub struct SubagentRules {
    /// The `deny` and `ask` rules, each with its own effect.
    pub tighten: Vec<Rule>,
    /// The `allow` rules (see the module docs for the one thing they may lift).
    pub allow: Vec<Rule>,
}

impl SubagentRules {
    pub fn is_empty(&self) -> bool {
        self.tighten.is_empty() && self.allow.is_empty()
    }
}

/// Whether `cmd` is hidden from its words only by substitution: every opacity it carries is a
/// command or process substitution, its program is written literally, and it writes no file.
/// Any other opacity (eval, a subshell, a dynamic word, a wrapper whose command is unknown) is
/// never lifted: what is understood is listed, the rest is refused.
pub fn only_substituted(cmd: &Command) -> bool {
    let substitution =
        cmd.opaque.iter().any(|o| matches!(o, Opacity::CommandSubstitution | Opacity::ProcessSubstitution));
    // A substitution's word is also a dynamic word (its value is known only at run time); that
    // is the one dynamic word accepted, and only as a whole argument.
    let understood = cmd.opaque.iter().all(|o| {
        matches!(o, Opacity::CommandSubstitution | Opacity::ProcessSubstitution | Opacity::DynamicWord)
    });
    substitution
        && understood
        && !cmd.program.is_empty()
        && cmd.program.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+'))
        && cmd.args.iter().all(|a| literal(a) || whole_substitution(a))
        && cmd.assignments.is_empty()
        && cmd.redirects.is_empty()
}

/// A word with no expansion in it.
fn literal(word: &str) -> bool {
    !word.contains(['$', '`'])
}

/// A word that is one substitution and nothing else: `$(…)`, `` `…` ``, `<(…)` or `>(…)` — never
/// arithmetic (`$((…))`), never text around it.
fn whole_substitution(word: &str) -> bool {
    let dollar = word.starts_with("$(") && !word.starts_with("$((") && word.ends_with(')');
    let process = (word.starts_with("<(") || word.starts_with(">(")) && word.ends_with(')');
    let backquote = word.len() >= 2 && word.starts_with('`') && word.ends_with('`');
    dollar || process || backquote
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_substitution_in_a_literal_program_writing_nothing_is_lifted() {
        let table = [
            ("echo $(cat a)", true),
            ("grep x <(cat a)", true),
            ("echo `cat a`", true),
            ("echo $(cat a) > out", false),
            ("$(cat a) x", false),
            ("eval \"$(cat a)\"", false),
            ("(echo $(cat a))", false),
            ("echo $X $(cat a)", false),
            ("echo hi", false),
            ("echo $((1+2))", false),
            ("echo x$(cat a)", false),
            ("X=$(cat a) echo", false),
            ("echo $(cat a) < in", false),
        ];
        for (line, want) in table {
            let a = portcullis_shell::analyze(line);
            let first = &a.commands[0];
            assert_eq!(only_substituted(first), want, "{line}: {first:?}");
        }
    }
}
