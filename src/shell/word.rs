//! Shell words to literal text: quote removal, escapes and ANSI-C strings, with a record of every
//! expansion that makes the word's run-time value differ from its text.
//!
//! Splicing tricks (`r''m`, `\rm`, `"r"m`, `$'\x72\x6d'`) all resolve here to the text the shell
//! would pass to `exec`, so rules compare what runs, not what was typed. Expansions cannot be
//! resolved statically; they are kept as written and flagged, and the source of every command
//! substitution is collected — also from inside `${x:-$(…)}` and `$((…))` — for the walker to
//! analyse as commands of their own.

use brush_parser::word::{TildeExpr, WordPiece, WordPieceWithSource};
use brush_parser::ParserOptions;

use super::guard;

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
    /// Sources of the command substitutions in this word, to analyse as commands.
    pub substitutions: Vec<String>,
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
}

pub(crate) fn parser_options() -> ParserOptions {
    ParserOptions::default()
}

/// Decode one word as the shell would before running the command (minus expansions).
pub(crate) fn decode(raw: &str) -> Word {
    let mut word = Word::default();
    match guard::contain(|| brush_parser::word::parse(raw, &parser_options())) {
        Ok(pieces) => word.pieces(raw, &pieces, false),
        Err(_) => {
            word.text = raw.to_string();
            word.dynamic = true;
        }
    }
    word
}

/// Decode a here-document body that undergoes expansion (`<<EOF`, unquoted delimiter).
pub(crate) fn decode_heredoc(raw: &str) -> Word {
    let mut word = Word::default();
    match guard::contain(|| brush_parser::word::parse_heredoc(raw, &parser_options())) {
        Ok(pieces) => word.pieces(raw, &pieces, true),
        Err(_) => {
            word.text = raw.to_string();
            word.dynamic = true;
        }
    }
    word
}

impl Word {
    fn pieces(&mut self, raw: &str, pieces: &[WordPieceWithSource], quoted: bool) {
        for p in pieces {
            let source = raw.get(p.start_index..p.end_index).unwrap_or("");
            self.piece(raw, source, &p.piece, quoted);
        }
    }

    fn piece(&mut self, raw: &str, source: &str, piece: &WordPiece, quoted: bool) {
        match piece {
            WordPiece::Text(text) => {
                if !quoted {
                    self.note_unquoted(text);
                }
                self.text.push_str(text);
            }
            WordPiece::SingleQuotedText(text) => self.text.push_str(text),
            WordPiece::AnsiCQuotedText(text) => self.text.push_str(&ansi_c(text)),
            WordPiece::DoubleQuotedSequence(inner) => self.pieces(raw, inner, true),
            WordPiece::GettextDoubleQuotedSequence(inner) => {
                // `$"…"` is translated through the locale's message catalogue at run time.
                self.dynamic = true;
                self.pieces(raw, inner, true);
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
                // `${x:-$(cmd)}`: the braces' interior is itself a word that may substitute.
                if let Some(inner) = source.strip_prefix("${").and_then(|s| s.strip_suffix('}')) {
                    self.absorb_substitutions(decode(inner));
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
                self.absorb_substitutions(decode(&expr.value));
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

    fn note_unquoted(&mut self, text: &str) {
        let bracket = text.find('[').is_some_and(|at| text[at + 1..].contains(']'));
        if text.contains(['*', '?']) || bracket || has_brace_expansion(text) {
            self.glob = true;
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

/// Decode the body of a `$'…'` string.
pub(crate) fn ansi_c(body: &str) -> String {
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            '0'..='7' => {
                let mut value = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(value).unwrap_or('\u{fffd}'));
            }
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut value = 0u32;
                let mut digits = 0;
                while digits < max {
                    match chars.peek().and_then(|d| d.to_digit(16)) {
                        Some(d) => {
                            value = value.wrapping_mul(16).wrapping_add(d);
                            chars.next();
                            digits += 1;
                        }
                        None => break,
                    }
                }
                if digits == 0 {
                    out.push('\\');
                    out.push(e);
                } else {
                    out.push(char::from_u32(value).unwrap_or('\u{fffd}'));
                }
            }
            'c' => match chars.next() {
                Some(ctl) => out.push(char::from_u32(u32::from(ctl) & 0x1f).unwrap_or('\u{fffd}')),
                None => out.push_str("\\c"),
            },
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splicing_resolves_to_the_text_the_shell_passes_on() {
        let cases = [
            (r"\rm", "rm"),
            ("r''m", "rm"),
            (r#""r"m"#, "rm"),
            ("'rm'", "rm"),
            (r"$'\x72\x6d'", "rm"),
            (r"$'\162\155'", "rm"),
            (r"$'\u0072m'", "rm"),
            (r"r\m", "rm"),
            (r"hello\ world", "hello world"),
            (r#""a\nb""#, r"a\nb"),
            (r#""a\$b\"c""#, r#"a$b"c"#),
            ("'don'\\''t'", "don't"),
            ("~/.ssh", "~/.ssh"),
            ("~root/x", "~root/x"),
            ("-g\"*.py\"", "-g*.py"),
        ];
        for (raw, want) in cases {
            let w = decode(raw);
            assert_eq!(w.text, want, "{raw}");
            assert!(w.is_literal(), "{raw} should be literal: {w:?}");
        }
    }

    #[test]
    fn expansions_are_dynamic_and_kept_as_written() {
        let cases = [
            ("$HOME", "$HOME"),
            ("\"${var}\"", "${var}"),
            ("$((1<<2))", "$((1<<2))"),
            ("$(date)", "$(date)"),
            ("`date`", "`date`"),
            ("$\"hello\"", "hello"),
            ("~+", "~+"),
            ("?(foo|bar)", "?(foo|bar)"),
            ("*(e:date:)", "*(e:date:)"),
            ("-${t}exec", "-${t}exec"),
        ];
        for (raw, want) in cases {
            let w = decode(raw);
            assert_eq!(w.text, want, "{raw}");
            assert!(w.dynamic, "{raw} should be dynamic");
        }
    }

    #[test]
    fn unquoted_globs_and_braces_are_flagged_quoted_ones_are_not() {
        for raw in ["*", "*.txt", "file?", "[ab]", "{a,b}", "x{1..3}", "~/.ss*"] {
            assert!(decode(raw).glob, "{raw}");
        }
        for raw in ["'*'", "\"*.txt\"", r"\*", "{}", "a{b}c", "--format=%H", "[", "]", "a]"] {
            assert!(!decode(raw).glob, "{raw}");
        }
    }

    #[test]
    fn substitutions_are_collected_from_every_hiding_place() {
        let cases = [
            ("$(rm -rf x)", vec!["rm -rf x"]),
            ("\"a$(b)c\"", vec!["b"]),
            ("`rm x`", vec!["rm x"]),
            ("${var:-$(rm x)}", vec!["rm x"]),
            ("$(( $(rm x) + 1 ))", vec!["rm x"]),
            ("'$(rm x)'", vec![]),
        ];
        for (raw, want) in cases {
            assert_eq!(decode(raw).substitutions, want, "{raw}");
        }
    }

    #[test]
    fn heredoc_bodies_expand_only_when_asked() {
        let w = decode_heredoc("hello $(rm -rf /)\n");
        assert!(w.dynamic);
        assert_eq!(w.substitutions, vec!["rm -rf /"]);
        let plain = decode_heredoc("it's \"quoted\" *\n");
        assert!(plain.is_literal());
        assert_eq!(plain.text, "it's \"quoted\" *\n");
    }

    #[test]
    fn ansi_c_escapes_decode() {
        assert_eq!(ansi_c(r"a\tb\n"), "a\tb\n");
        assert_eq!(ansi_c(r"\x2d\x72\x66"), "-rf");
        assert_eq!(ansi_c(r"\cA"), "\u{1}");
        assert_eq!(ansi_c(r"\q\"), "\\q\\");
        assert_eq!(ansi_c(r"\xZZ"), "\\xZZ");
    }
}
