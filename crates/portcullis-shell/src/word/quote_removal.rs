//! Folding parsed word pieces into a [`Word`]: quote removal, escapes, and the flags for what
//! only the run time knows (expansions, globs, substitutions).

use brush_parser::word::{TildeExpr, WordPiece, WordPieceWithSource};

use super::{ansi_c, decode, Braces, Word};
use crate::subscript;

impl Word {
    pub(super) fn pieces(&mut self, raw: &str, pieces: &[WordPieceWithSource], quoted: bool, braces: Braces) {
        for p in pieces {
            let source = raw.get(p.start_index..p.end_index).unwrap_or("");
            self.piece(raw, source, &p.piece, quoted, braces);
        }
    }

    fn piece(&mut self, raw: &str, source: &str, piece: &WordPiece, quoted: bool, braces: Braces) {
        match piece {
            WordPiece::Text(text) => {
                if !quoted {
                    self.note_unquoted(text, braces);
                }
                self.text.push_str(text);
            }
            WordPiece::SingleQuotedText(text) => self.text.push_str(text),
            WordPiece::AnsiCQuotedText(body) => {
                let decoded = ansi_c(body);
                self.dynamic |= decoded.inexact;
                self.text.push_str(&decoded.text);
            }
            WordPiece::DoubleQuotedSequence(inner) => self.pieces(raw, inner, true, braces),
            WordPiece::GettextDoubleQuotedSequence(inner) => {
                // `$"…"` is translated through the locale's message catalogue at run time.
                self.dynamic = true;
                self.pieces(raw, inner, true, braces);
            }
            WordPiece::TildeExpansion(tilde) => match tilde {
                TildeExpr::Home => self.text.push('~'),
                TildeExpr::UserHome(user) => {
                    self.text.push('~');
                    self.text.push_str(user);
                }
                _ => {
                    self.dynamic = true;
                    self.text.push_str(source);
                }
            },
            WordPiece::ParameterExpansion(_) => {
                self.dynamic = true;
                self.text.push_str(source);
                // `${x:-$(cmd)}`: the braces' interior is itself a word that may substitute;
                // `${a['$(cmd)']}`, `${x:'$(cmd)'}`: a subscript or an offset is evaluated
                // again, quotes removed.
                if let Some(inner) = source.strip_prefix("${").and_then(|s| s.strip_suffix('}')) {
                    self.absorb_substitutions(decode(inner));
                    self.absorb_evaluation(subscript::parameter(inner));
                }
            }
            WordPiece::CommandSubstitution(src) | WordPiece::BackquotedCommandSubstitution(src) => {
                self.dynamic = true;
                self.text.push_str(source);
                self.substitutions.push(src.clone());
            }
            WordPiece::EscapeSequence(escape) => self.escape(escape, quoted),
            WordPiece::ArithmeticExpression(expr) => {
                self.dynamic = true;
                self.text.push_str(source);
                let inner = decode(&expr.value);
                let evaluation = subscript::arithmetic(&inner.text);
                self.absorb_substitutions(inner);
                self.absorb_evaluation(evaluation);
            }
        }
    }

    fn absorb_substitutions(&mut self, inner: Word) {
        self.substitutions.extend(inner.substitutions);
    }

    fn escape(&mut self, escape: &str, quoted: bool) {
        let escaped = escape.strip_prefix('\\').unwrap_or(escape);
        if escaped == "\n" {
            return; // line continuation
        }
        // Inside double quotes a backslash only escapes `$`, `` ` ``, `"` and `\`.
        if quoted && !matches!(escaped, "$" | "`" | "\"" | "\\") {
            self.text.push_str(escape);
        } else {
            self.text.push_str(escaped);
        }
    }

    fn note_unquoted(&mut self, text: &str, braces: Braces) {
        let bracket = text.find('[').is_some_and(|at| text[at + 1..].contains(']'));
        if text.contains(['*', '?']) || bracket || (braces == Braces::Flag && has_brace_expansion(text)) {
            self.glob = true;
        }
        if self.text.is_empty() && text.starts_with(['*', '?', '[']) {
            // Only a glob if the word is one (`[` alone is literal): settled by `decode_as`.
            self.option_glob = true;
        }
        // `?(a|b)`, `*(e:cmd:)`: bash extended globs, and zsh glob qualifiers that run code.
        if text.contains(['(', ')']) {
            self.dynamic = true;
        }
    }
}

/// `{a,b}` or `{1..3}`: bash rewrites the word into several.
fn has_brace_expansion(text: &str) -> bool {
    let Some(open) = text.find('{') else {
        return false;
    };
    let rest = &text[open..];
    match rest.find('}') {
        Some(close) => {
            let inner = &rest[..close];
            inner.contains(',') || inner.contains("..")
        }
        None => false,
    }
}
