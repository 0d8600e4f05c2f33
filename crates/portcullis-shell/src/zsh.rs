//! Code zsh runs from a glob: the `e` and `+` glob qualifiers (`ls *(e:'rm x':)`,
//! `ls *(+cleanup)`) run a command line or a function for every file the glob matches.
//!
//! The qualifier list is the parenthesised tail of a word; `e` takes a delimited string (any
//! character; `(`, `[`, `{`, `<` close with their pair), `+` a function name. Words are read
//! after quote removal, so a quoted `(e:…:)` is reported too: deny rules see more, never less.

/// The command lines of the `e` qualifiers in `word`, and whether any qualifier runs code
/// (`e` or `+`).
pub(crate) fn qualifier_code(word: &str) -> (bool, Vec<String>) {
    let mut code = Vec::new();
    let mut runs = false;
    let Some(open) = word.find('(') else { return (false, code) };
    let chars: Vec<char> = word[open + 1..].chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '+' => {
                // `+name`: the name runs; it holds no qualifiers of its own.
                runs = true;
                i += 1;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
            'e' if i + 1 < chars.len() => {
                runs = true;
                let open = chars[i + 1];
                let close = match open {
                    '(' => ')',
                    '[' => ']',
                    '{' => '}',
                    '<' => '>',
                    c => c,
                };
                let body: String = chars[i + 2..].iter().take_while(|&&c| c != close).collect();
                i += 2 + body.chars().count() + 1;
                code.push(body);
            }
            _ => i += 1,
        }
    }
    (runs, code)
}

#[cfg(test)]
mod tests {
    use super::qualifier_code;

    #[test]
    fn e_and_plus_qualifiers_run_code_and_others_do_not() {
        let cases: &[(&str, bool, &[&str])] = &[
            ("*(e:touch M:)", true, &["touch M"]),
            ("*(.e{rm -rf x}N)", true, &["rm -rf x"]),
            ("f(e(id))", true, &["id"]),
            ("*(+cleanup)", true, &[]),
            ("*(.N)", false, &[]),
            ("*.rs", false, &[]),
            ("*(e:", true, &[""]),
        ];
        for (word, runs, code) in cases {
            assert_eq!(qualifier_code(word), (*runs, code.iter().map(|s| s.to_string()).collect()), "{word}");
        }
    }
}
