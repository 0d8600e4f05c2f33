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

use super::braces::{self, Expansion};
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
    /// Pathname expansion could produce a name that starts with `-`: the word begins with an
    /// unquoted `*`, `?` or `[`, or with `-` and holds a glob. `*.rs` cannot, `*` and `-*` can.
    pub option_glob: bool,
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

/// Rewrite each `$'…'` as the single-quoted string it decodes to, as bash's parser does before
/// brace expansion sees the word (so `{$'\x2c'}` has no separator). Returns whether a decoding
/// was inexact.
fn quote_ansi_c(raw: &str) -> (String, bool) {
    let mut out = String::with_capacity(raw.len());
    let mut inexact = false;
    let mut chars = raw.chars().peekable();
    let mut double = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            '"' => {
                double = !double;
                out.push(c);
            }
            '\'' if !double => {
                out.push(c);
                for q in chars.by_ref() {
                    out.push(q);
                    if q == '\'' {
                        break;
                    }
                }
            }
            '$' if !double && chars.peek() == Some(&'\'') => {
                chars.next();
                let mut body = String::new();
                while let Some(b) = chars.next() {
                    match b {
                        '\'' => break,
                        '\\' => {
                            body.push(b);
                            if let Some(next) = chars.next() {
                                body.push(next);
                            }
                        }
                        _ => body.push(b),
                    }
                }
                let decoded = ansi_c(&body);
                inexact |= decoded.inexact;
                out.push('\'');
                out.push_str(&decoded.text.replace('\'', "'\\''"));
                out.push('\'');
            }
            _ => out.push(c),
        }
    }
    (out, inexact)
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

impl Word {
    fn pieces(&mut self, raw: &str, pieces: &[WordPieceWithSource], quoted: bool, braces: Braces) {
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

/// A `$'…'` body as bash decodes it (`ansicstr` in bash 5.2's `lib/sh/strtrans.c`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AnsiC {
    /// The decoded text, cut at the first NUL as bash's C strings cut it (`$'rm\0x'` is `rm`).
    pub text: String,
    /// A `\u`/`\U` escape above ASCII (its bytes depend on the locale), or bytes that are not
    /// UTF-8: the text here is only an approximation.
    pub inexact: bool,
}

/// Decode the body of a `$'…'` string.
pub(crate) fn ansi_c(body: &str) -> AnsiC {
    let src = body.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(src.len());
    let mut inexact = false;
    let mut i = 0;
    let hex = |b: u8| char::from(b).to_digit(16);
    while i < src.len() {
        let c = src[i];
        i += 1;
        if c != b'\\' || i >= src.len() {
            out.push(c);
            continue;
        }
        let e = src[i];
        i += 1;
        match e {
            b'a' => out.push(0x07),
            b'b' => out.push(0x08),
            b'e' | b'E' => out.push(0x1b),
            b'f' => out.push(0x0c),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(0x0b),
            b'\\' | b'\'' | b'"' | b'?' => out.push(e),
            b'0'..=b'7' => {
                // Up to three octal digits, truncated to a byte: `\400` is NUL.
                let mut value = u32::from(e - b'0');
                for _ in 0..2 {
                    match src.get(i) {
                        Some(d @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push((value & 0xff) as u8);
            }
            b'x' => {
                // `\xHH`, or ksh93's `\x{H…}` with any number of digits (`\x{}` is NUL).
                let braced = src.get(i) == Some(&b'{');
                if braced {
                    i += 1;
                }
                let mut value = 0u32;
                let mut digits = 0;
                while let Some(d) = src.get(i).and_then(|&b| hex(b)) {
                    if !braced && digits == 2 {
                        break;
                    }
                    value = value.wrapping_mul(16).wrapping_add(d);
                    digits += 1;
                    i += 1;
                }
                if braced {
                    if src.get(i) == Some(&b'}') {
                        i += 1;
                    }
                    out.push((value & 0xff) as u8);
                } else if digits == 0 {
                    out.extend_from_slice(b"\\x");
                } else {
                    out.push((value & 0xff) as u8);
                }
            }
            b'u' | b'U' => {
                let max = if e == b'u' { 4 } else { 8 };
                let mut value = 0u32;
                let mut digits = 0;
                while digits < max {
                    let Some(d) = src.get(i).and_then(|&b| hex(b)) else { break };
                    value = value.wrapping_mul(16).wrapping_add(d);
                    digits += 1;
                    i += 1;
                }
                if digits == 0 {
                    out.push(b'\\');
                    out.push(e);
                } else if value <= 0x7f {
                    out.push(value as u8);
                } else if value <= 0x7fff_ffff {
                    // In a UTF-8 locale these bytes; in others a `\uXXXX` spelling or the
                    // charset's own: never empty, never NUL.
                    inexact = true;
                    out.extend_from_slice(&extended_utf8(value));
                }
                // Above that bash's conversion yields nothing at all.
            }
            b'c' => match src.get(i) {
                None => out.extend_from_slice(b"\\c"),
                Some(&ctl) => {
                    i += 1;
                    // POSIX: `$'\c\\'` spends both backslashes.
                    if ctl == b'\\' && src.get(i) == Some(&b'\\') {
                        i += 1;
                    }
                    out.push(if ctl == b'?' { 0x7f } else { ctl.to_ascii_uppercase() & 0x1f });
                }
            },
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    if let Some(nul) = out.iter().position(|&b| b == 0) {
        out.truncate(nul);
    }
    let text = match String::from_utf8(out) {
        Ok(text) => text,
        Err(e) => {
            inexact = true;
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    AnsiC { text, inexact }
}

/// bash's `u32toutf8`: UTF-8 extended to 31 bits, surrogates included.
fn extended_utf8(v: u32) -> Vec<u8> {
    let (len, lead) = match v {
        0..=0x7f => return vec![v as u8],
        0x80..=0x7ff => (2, 0xc0),
        0x800..=0xffff => (3, 0xe0),
        0x1_0000..=0x1f_ffff => (4, 0xf0),
        0x20_0000..=0x3ff_ffff => (5, 0xf8),
        _ => (6, 0xfc),
    };
    let mut bytes = vec![0u8; len];
    let mut rest = v;
    for b in bytes.iter_mut().skip(1).rev() {
        *b = 0x80 | (rest & 0x3f) as u8;
        rest >>= 6;
    }
    bytes[0] = lead | rest as u8;
    bytes
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
    fn ansi_c_escapes_decode_as_bash_5_2_does() {
        // Each expectation was checked against bash 5.2 (`printf %s $'…' | od -c`).
        let cases: &[(&str, &str)] = &[
            (r"a\tb\n", "a\tb\n"),
            (r"\x2d\x72\x66", "-rf"),
            (r"\cA", "\u{1}"),
            (r"\ca\cz", "\u{1}\u{1a}"),
            (r"\c?", "\u{7f}"),
            (r"\c\\", "\u{1c}"),
            (r"\c\x", "\u{1c}x"),
            (r"\c", "\\c"),
            (r"\q\", "\\q\\"),
            (r"\xZZ", "\\xZZ"),
            (r"\u", "\\u"),
            (r"\8", "\\8"),
            (r"\0101", "\u{8}1"),
            (r"\777", "\u{fffd}"),
            (r"\x{41}", "A"),
            (r"\x{41", "A"),
            (r"\x{4142}", "B"),
            (r"\U0000006d", "m"),
            (r"\E", "\u{1b}"),
            (r"a\'b", "a'b"),
            (r"rm\U80000000x", "rmx"),
            (r"rm\UFFFFFFFFx", "rmx"),
        ];
        for (body, want) in cases {
            assert_eq!(ansi_c(body).text, *want, "{body}");
        }
        assert!(ansi_c(r"\u00e9").inexact, "locale-dependent");
        assert!(ansi_c(r"\xff").inexact, "not UTF-8");
        assert!(!ansi_c(r"\x41").inexact);
    }

    #[test]
    fn every_nul_spelling_cuts_the_ansi_c_string_there() {
        let spellings = [
            r"\0",
            r"\00",
            r"\000",
            r"\x0",
            r"\x00",
            r"\x{}",
            r"\x{0}",
            r"\x{100}",
            r"\u0000",
            r"\u0",
            r"\U00000000",
            r"\U0",
            r"\c@",
            r"\c`",
            r"\400",
            r"\0000",
        ];
        for nul in spellings {
            assert_eq!(ansi_c(&format!("rm{nul}x -rf")).text, "rm", "{nul}");
            assert_eq!(decode(&format!("$'rm{nul}'")).text, "rm", "{nul}");
            // Only that `$'…'` is cut: the rest of the word stays (`$'a\0b'c` is `ac`).
            assert_eq!(decode(&format!("$'r{nul}x'm")).text, "rm", "{nul}");
            assert_eq!(decode(&format!("$'r{nul}x'$'m'")).text, "rm", "{nul}");
        }
    }

    #[test]
    fn ansi_c_inside_double_quotes_is_literal_and_gettext_is_dynamic() {
        let w = decode("\"$'rm\\0'\"");
        assert_eq!(w.text, "$'rm\\0'");
        let w = decode("$\"rm\"");
        assert_eq!(w.text, "rm");
        assert!(w.dynamic);
    }

    #[test]
    fn command_words_are_brace_expanded_then_decoded() {
        let cases: &[(&str, &[&str])] = &[
            ("{-o,out.txt}", &["-o", "out.txt"]),
            ("{rm,-rf}", &["rm", "-rf"]),
            ("'{a,b}'", &["{a,b}"]),
            ("\\{a,b}", &["{a,b}"]),
            ("{$'\\x2c'}", &["{,}"]),
            ("{$'\\x2do',x}", &["-o", "x"]),
            ("{\"-o\",x}", &["-o", "x"]),
            ("-{,}", &["-", "-"]),
            ("{,}", &[]),
            ("{a}", &["{a}"]),
            ("{}", &["{}"]),
            ("x{1..3}", &["x1", "x2", "x3"]),
            ("{'',x}", &["", "x"]),
        ];
        for (raw, want) in cases {
            let words = expand(raw);
            let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
            assert_eq!(texts, *want, "{raw}");
            assert!(words.iter().all(Word::is_literal), "{raw}: {words:?}");
        }
        assert!(expand("{1..1000}")[0].dynamic);
    }

    #[test]
    fn globs_that_could_name_an_option_are_told_apart() {
        for raw in ["*", "*.rs", "?x", "[ab]*", "-*", "''*", "{a,*}", "[!a]"] {
            assert!(expand(raw).iter().any(|w| w.option_glob), "{raw}");
        }
        for raw in ["src/*.rs", "./*", "a*", "'*'", "\\*", "x?", "[", "-x", ".*", "{a,b}*", "~/*"] {
            assert!(expand(raw).iter().all(|w| !w.option_glob), "{raw}");
        }
    }
}
