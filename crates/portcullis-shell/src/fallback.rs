//! A best-effort split of a line that does not parse.
//!
//! The engine never allows such a line, but a deny rule should still fire on what it can see:
//! `rm -rf / ; fi` must not escape `Shell(rm:*)` just because `fi` is a syntax error. So the
//! tokens are split on control operators, reserved words are dropped, and each group is handed
//! back to the walker, which emits it as a command (unwrapped, its substitutions analysed)
//! carrying the scope's `Unsupported` marker. Taking a callback rather than the walker keeps
//! this module below `walk`: the walker calls in, nothing here calls back by name.

use brush_parser::Token;

use super::guard;
use super::parts::Parts;
use super::word::decode;
use super::{Redirect, RedirectKind};

const RESERVED: [&str; 20] = [
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for", "in",
    "select", "function", "time", "{", "}", "!", "[[",
];

/// Split `src` on its operators and hand each non-empty group to `emit`, in source order.
pub(crate) fn split(src: &str, mut emit: impl FnMut(Parts<'static>)) {
    let tokens = match guard::contain(|| {
        brush_parser::uncached_tokenize_str(src, &brush_parser::TokenizerOptions::default())
    }) {
        Ok(tokens) => tokens,
        Err(_) => return,
    };
    let mut parts = Parts::default();
    let mut pending: Option<RedirectKind> = None;
    for token in &tokens {
        match token {
            Token::Word(text, _) => {
                if let Some(kind) = pending.take() {
                    parts.redirects.push(Redirect { fd: None, kind, target: decode(text).text });
                } else if !(parts.words.is_empty() && RESERVED.contains(&text.as_str())) {
                    parts.push_words(super::word::expand(text));
                }
            }
            Token::Operator(op, _) => match redirect_kind(op) {
                Some(kind) => pending = Some(kind),
                None => {
                    pending = None;
                    flush(&mut parts, &mut emit);
                }
            },
        }
    }
    flush(&mut parts, &mut emit);
}

fn flush(parts: &mut Parts<'static>, emit: &mut impl FnMut(Parts<'static>)) {
    if parts.words.is_empty() && parts.redirects.is_empty() {
        return;
    }
    emit(std::mem::take(parts));
}

fn redirect_kind(op: &str) -> Option<RedirectKind> {
    Some(match op {
        "<" => RedirectKind::Input,
        ">" => RedirectKind::Output,
        ">>" => RedirectKind::Append,
        ">|" => RedirectKind::Clobber,
        "<>" => RedirectKind::ReadWrite,
        "&>" => RedirectKind::OutputAndError,
        "&>>" => RedirectKind::AppendOutputAndError,
        "<&" => RedirectKind::DupInput,
        ">&" => RedirectKind::DupOutput,
        "<<" | "<<-" => RedirectKind::HereDoc,
        "<<<" => RedirectKind::HereString,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use crate::{analyze, Opacity};

    #[test]
    fn a_line_that_does_not_parse_still_shows_its_commands() {
        let cases: &[(&str, &[&str])] = &[
            ("rm -rf / ; fi", &["rm -rf /"]),
            ("ls | | wc", &["ls", "wc"]),
            ("if then fi", &[]),
            ("sudo rm -rf x; then", &["rm -rf x"]),
            ("echo $(rm -rf y) )", &["echo $(rm -rf y)", "rm -rf y"]),
        ];
        for (line, want) in cases {
            let a = analyze(line);
            assert!(a.parse_error.is_some(), "{line} should not parse");
            let got: Vec<String> = a.commands.iter().map(|c| c.canonical()).collect();
            assert_eq!(got, *want, "{line}");
            for c in &a.commands {
                assert!(c.opaque.iter().any(|o| matches!(o, Opacity::Unsupported(_))), "{line}: {c:?}");
            }
        }
    }

    #[test]
    fn unterminated_quotes_give_an_error_and_nothing_to_misread() {
        let a = analyze("echo \"unterminated; rm -rf x");
        assert!(a.parse_error.is_some());
        assert!(a.commands.is_empty());
    }
}
