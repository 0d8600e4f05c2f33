//! Shell words to literal text: quote removal, escapes and ANSI-C strings, with a record of every
//! expansion that makes the word's run-time value differ from its text.
//!
//! Splicing tricks (`r''m`, `\rm`, `"r"m`, `$'\x72\x6d'`) all resolve here to the text the shell
//! would pass to `exec`, so rules compare what runs, not what was typed. Expansions cannot be
//! resolved statically; they are kept as written and flagged, and the source of every command
//! substitution is collected — also from inside `${x:-$(…)}` and `$((…))` — for the walker to
//! analyse as commands of their own.

use brush_parser::ParserOptions;

use super::braces::{self, Expansion};
use super::evaluation::Evaluation;
use super::guard;

mod ansi_c;
mod quote_removal;

pub(crate) use ansi_c::ansi_c;
use ansi_c::quote_ansi_c;

/// A word after quote removal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Word {
    /// Literal text; expansions are kept as written (`$HOME`, `$(date)`).
    pub text: String,
    /// Some part is only known at run time (parameter, arithmetic or command expansion,
    /// gettext strings, `~+`, extended-glob or zsh-qualifier parentheses).
    pub dynamic: bool,
    /// An unquoted `*`, `?`, `[` or brace expansion: pathname expansion may change the argv.
    pub glob: bool,
    /// Pathname expansion could produce a name that starts with `-`: the word begins with an
    /// unquoted `*`, `?` or `[`, or with `-` and holds a glob. `*.rs` cannot, `*` and `-*` can.
    pub option_glob: bool,
    /// Sources of the command substitutions in this word, to analyse as commands.
    pub substitutions: Vec<String>,
    /// The shell evaluates part of the word a second time as code: a subscript that is not a
    /// plain integer (`${a['$(rm x)']}`, `(( 'a[$(rm x)]' ))`), whose substitutions are in
    /// `substitutions` too.
    pub eval: bool,
}

impl Word {
    /// A word known to be plain text (used for synthetic words).
    pub(crate) fn literal(text: &str) -> Self {
        Self { text: text.to_string(), ..Self::default() }
    }

    /// Neither dynamic nor globbed: the text is exactly what the program receives.
    pub(crate) fn is_literal(&self) -> bool {
        !self.dynamic && !self.glob
    }

    /// Take in what evaluating part of the word again could run.
    pub(crate) fn absorb_evaluation(&mut self, evaluation: Evaluation) {
        self.eval |= evaluation.code;
        self.dynamic |= evaluation.dynamic;
        for s in evaluation.substitutions {
            if !self.substitutions.contains(&s) {
                self.substitutions.push(s);
            }
        }
    }
}

pub(crate) fn parser_options() -> ParserOptions {
    ParserOptions::default()
}

/// Decode one word as the shell would before running the command (minus expansions). Brace
/// patterns are flagged as globs, not expanded: see [`expand`] for command words.
pub(crate) fn decode(raw: &str) -> Word {
    decode_as(raw, Braces::Flag)
}

/// What to make of brace patterns left in a word.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Braces {
    /// Not expanded yet: a `{a,b}` makes the word a glob.
    Flag,
    /// Already expanded: what is left is literal.
    Expanded,
}

fn decode_as(raw: &str, braces: Braces) -> Word {
    if is_plain(raw) {
        return Word::literal(raw);
    }
    decode_parsed(raw, braces)
}

/// A word of letters, digits and `_ . / : = + , @ % -` only (`README.md`, `-la`, `src/x.rs`):
/// nothing in it quotes, expands, globs or braces, so quote removal leaves it as it is — what
/// the shell's word parser would answer, without running it.
fn is_plain(raw: &str) -> bool {
    !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_alphanumeric() || b"_./:=+,@%-".contains(&b))
}

/// [`decode_as`] by the shell's word parser.
fn decode_parsed(raw: &str, braces: Braces) -> Word {
    let mut word = Word::default();
    match guard::contain(|| brush_parser::word::parse(raw, &parser_options())) {
        Ok(pieces) => word.pieces(raw, &pieces, false, braces),
        Err(_) => {
            word.text = raw.to_string();
            word.dynamic = true;
        }
    }
    word.option_glob = word.glob && (word.option_glob || word.text.starts_with('-'));
    word
}

/// The words bash passes for one word of a simple command: brace expansion first (`{-o,x}` is
/// two words), then quote removal. Empty unquoted results vanish (`-{,}` is `-` `-`, `{,}` is
/// nothing). An expansion too big or not modelled is one dynamic word as written.
pub(crate) fn expand(raw: &str) -> Vec<Word> {
    if !braces::might_expand(raw) {
        return vec![decode(raw)];
    }
    // Substitutions and parameter expansions inside braces are beyond this model: the word is
    // dynamic anyway, and decoding it as written keeps its substitutions for analysis.
    if raw.contains("$(") || raw.contains('`') || raw.contains("${") {
        return vec![decode(raw)];
    }
    let (quoted, inexact) = quote_ansi_c(raw);
    match braces::expand(&quoted) {
        Expansion::Words(words) => words
            .iter()
            .filter(|w| !w.is_empty())
            .map(|w| {
                let mut word = decode_as(w, Braces::Expanded);
                word.dynamic |= inexact;
                word
            })
            .collect(),
        Expansion::Unknown => {
            let mut word = decode(raw);
            word.dynamic = true;
            vec![word]
        }
    }
}

/// Decode a here-document body that undergoes expansion (`<<EOF`, unquoted delimiter).
pub(crate) fn decode_heredoc(raw: &str) -> Word {
    let mut word = Word::default();
    match guard::contain(|| brush_parser::word::parse_heredoc(raw, &parser_options())) {
        Ok(pieces) => word.pieces(raw, &pieces, true, Braces::Flag),
        Err(_) => {
            word.text = raw.to_string();
            word.dynamic = true;
        }
    }
    word
}

#[cfg(test)]
mod tests;
