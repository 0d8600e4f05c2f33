//! Code hidden in text a shell evaluates a second time: array subscripts in variable names and
//! arithmetic expressions.
//!
//! `printf -v 'a[$(rm -f x)]' y` passes a literal word (the single quotes stop the expansion),
//! yet bash runs `rm`: a name argument's subscript is expanded and evaluated when the builtin
//! assigns. The same holds for every name a builtin is given (`read`, `declare`, `unset`,
//! `test -v` …), for arithmetic (`let`, `(( ))`, `$(( ))`, `[[ a -eq b ]]`, whose variables are
//! themselves evaluated, subscripts included) and for values that later become names
//! (`declare -n r='a[$(rm x)]'; echo $r`). This module finds such text: a subscript that is not a
//! plain integer is code, and every substitution that could run in it is returned — over-, never
//! under-approximated: quotes inside the text are read both as quotes and as removed, since bash
//! removes them at one level and not at another.

use super::word::decode;

pub(crate) use super::evaluation::Evaluation;

/// A variable name as a builtin receives it (`a`, `a[1]`, `a[$i]`, `a[x]=value`): code when a
/// subscript is not a plain integer (or `@`, `*`).
pub(crate) fn name(text: &str) -> Evaluation {
    judge(text, |content| !is_plain_subscript(content))
}

/// An arithmetic expression after the shell's own expansion and quote removal: subscripts as in
/// [`name`], and every identifier's value is evaluated in turn.
pub(crate) fn arithmetic(text: &str) -> Evaluation {
    let mut evaluation = judge(text, |content| !is_plain_subscript(content));
    evaluation.dynamic |= names_a_variable(text);
    evaluation
}

/// A value assigned on the line, which a later command may evaluate as a name or an expression
/// (a nameref, `${!x}`, `(( x ))`, a `declare -i` variable): code when a subscript in it could
/// run something (holds `$` or a backquote).
pub(crate) fn value(text: &str) -> Evaluation {
    judge(text, |content| content.contains(['$', '`']))
}

/// The interior of a parameter expansion (`a[i]`, `x:off:len`, `!a[k]`): its subscript is
/// evaluated as in [`name`], and an offset or length is arithmetic whose substitutions run
/// even when quoted (`${x:'$(rm x)'}`).
pub(crate) fn parameter(inner: &str) -> Evaluation {
    let mut out = name(inner);
    let offset =
        inner.find(':').map(|at| &inner[at + 1..]).filter(|rest| !rest.starts_with(['-', '=', '?', '+']));
    if let Some(offset) = offset {
        let substitutions = substitutions_in(offset);
        out.merge(Evaluation {
            code: !substitutions.is_empty(),
            dynamic: names_a_variable(offset),
            substitutions,
        });
    }
    out
}

/// The text of a subscript key itself (`[k]=v` in a compound assignment, `a[k]=v`).
pub(crate) fn subscript(content: &str) -> Evaluation {
    match is_plain_subscript(content) {
        true => Evaluation::default(),
        false => {
            let mut evaluation = Evaluation { code: true, ..Evaluation::default() };
            evaluation.substitutions = substitutions_in(content);
            evaluation.dynamic = names_a_variable(content);
            evaluation
        }
    }
}

/// Scan every top-level `[…]` group of `text`; `is_code` judges a group's content.
fn judge(text: &str, is_code: impl Fn(&str) -> bool) -> Evaluation {
    let code = groups(text).any(is_code);
    match code {
        true => Evaluation { code, dynamic: false, substitutions: substitutions_in(text) },
        false => Evaluation::default(),
    }
}

/// The contents of the top-level bracket groups; an unclosed group runs to the end.
fn groups(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let open = rest.find('[')?;
        let body = &rest[open + 1..];
        let mut depth = 1usize;
        let mut end = body.len();
        for (i, b) in body.bytes().enumerate() {
            match b {
                b'[' => depth += 1,
                b']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let content = &body[..end];
        rest = body.get(end + 1..).unwrap_or("");
        Some(content)
    })
}

/// `0`, ` 12 `, `@`, `*`: evaluates to itself.
fn is_plain_subscript(content: &str) -> bool {
    let t = content.trim_matches([' ', '\t']);
    matches!(t, "@" | "*") || (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
}

/// An identifier outside a number (`x`, `a_1`; not the `x` of `0x1f` nor the digits of `16#ff`).
fn names_a_variable(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        let starts = b.is_ascii_alphabetic() || b == b'_';
        let after_word = i > 0 && {
            let p = bytes[i - 1];
            p.is_ascii_alphanumeric() || p == b'_' || p == b'#' || p == b'$'
        };
        starts && !after_word
    })
}

/// Every command substitution in `text`, read as written and read with its quotes removed.
fn substitutions_in(text: &str) -> Vec<String> {
    let mut found = decode(text).substitutions;
    let bare: String = text.chars().filter(|c| !matches!(c, '\'' | '"' | '\\')).collect();
    if bare != text {
        for s in decode(&bare).substitutions {
            if !found.contains(&s) {
                found.push(s);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_subscripts_are_not_code_and_others_are() {
        let cases = [
            ("a", false),
            ("a[1]", false),
            ("a[ 12 ]=x", false),
            ("a[@]", false),
            ("a[*]", false),
            ("a[i]", true),
            ("a[$(rm x)]", true),
            ("a[1+1]", true),
            ("a[", true),
            ("a[]", true),
            ("a[b[1]]", true),
            ("x[1]y[$i]", true),
        ];
        for (text, code) in cases {
            assert_eq!(name(text).code, code, "{text}");
        }
    }

    #[test]
    fn substitutions_in_subscripts_are_found_however_quoted() {
        let cases: &[(&str, &[&str])] = &[
            ("a[$(rm -f x)]", &["rm -f x"]),
            ("a[`rm x`]", &["rm x"]),
            ("a['$(rm x)']", &["rm x"]),
            ("a[\"$(rm x)\"]", &["rm x"]),
            ("a[\\$(rm x)]", &["rm x"]),
            ("a[b[$(rm x)]]", &["rm x"]),
            ("a[$(( $(rm x) ))]", &["rm x"]),
            ("a[$(id)]=$(rm x)", &["id", "rm x"]),
        ];
        for (text, want) in cases {
            let e = name(text);
            assert!(e.code, "{text}");
            assert_eq!(e.substitutions, *want, "{text}");
        }
    }

    #[test]
    fn arithmetic_evaluates_its_variables_and_their_subscripts() {
        assert!(!arithmetic("1 + 2").dynamic);
        assert!(!arithmetic("0x1f + 16#ff").dynamic);
        assert!(arithmetic("n + 1").dynamic);
        let e = arithmetic("a[$(rm x)] + 1");
        assert!(e.code);
        assert_eq!(e.substitutions, ["rm x"]);
        assert!(!arithmetic("a[0]").code);
    }

    #[test]
    fn assigned_values_are_code_only_when_a_subscript_could_run_something() {
        assert!(value("a[$(rm x)]").code);
        assert!(value("x[`id`]").code);
        assert!(!value("[draft] notes").code);
        assert!(!value("a[i]").code);
        assert_eq!(value("a[$(rm x)]").substitutions, ["rm x"]);
    }

    #[test]
    fn deeply_nested_brackets_are_scanned_without_recursion() {
        let text = format!("a{}$(rm x){}", "[".repeat(50_000), "]".repeat(50_000));
        let e = name(&text);
        assert!(e.code);
        assert_eq!(e.substitutions, ["rm x"]);
    }
}
