//! Whether one glob component could match a name, as bash or a tool's glob matches it. Bracket
//! expressions are taken to match any one character: a wider match only costs a question.

use super::Globbing;

/// Whether a component holds glob characters.
pub fn is_glob(component: &str) -> bool {
    component.contains(['*', '?', '['])
}

/// Whether `pattern` (one component) could match `name`. Under [`Globbing::Shell`] a leading
/// `.` of the name is matched only by a literal `.`; under [`Globbing::Tool`] by anything.
/// Under [`Globbing::Literal`] only the same text matches.
pub fn could_match(pattern: &str, name: &str, globbing: Globbing) -> bool {
    match globbing {
        Globbing::Literal => pattern == name,
        Globbing::Shell if name.starts_with('.') && !pattern.starts_with('.') => false,
        _ => matches_from(pattern.as_bytes(), name.as_bytes()),
    }
}

/// Whether `pattern` could match a name that starts with `.` (`.ssh`, `.env`).
pub fn could_match_hidden(pattern: &str, globbing: Globbing) -> bool {
    match globbing {
        Globbing::Literal | Globbing::Shell => pattern.starts_with('.'),
        Globbing::Tool => pattern.starts_with(['.', '*', '?', '[']),
    }
}

fn matches_from(p: &[u8], n: &[u8]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some(b'*') => (0..=n.len()).any(|skip| matches_from(&p[1..], &n[skip..])),
        Some(b'?') => !n.is_empty() && matches_from(&p[1..], &n[1..]),
        Some(b'[') => match p.iter().skip(2).position(|&c| c == b']') {
            Some(end) => !n.is_empty() && matches_from(&p[end + 3..], &n[1..]),
            None => n.first() == Some(&b'[') && matches_from(&p[1..], &n[1..]),
        },
        Some(b'\\') if p.len() > 1 => n.first() == Some(&p[1]) && matches_from(&p[2..], &n[1..]),
        Some(c) => n.first() == Some(c) && matches_from(&p[1..], &n[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_match_as_bash_and_tools_do() {
        use Globbing::{Shell, Tool};
        let cases = [
            (".ss?", ".ssh", Shell, true),
            ("id_*", "id_rsa", Shell, true),
            ("*.pem", "x.pem", Shell, true),
            (".[e]nv", ".env", Shell, true),
            ("*", ".env", Shell, false),
            ("*", ".env", Tool, true),
            ("?ssh", ".ssh", Shell, false),
            ("?ssh", ".ssh", Tool, true),
            ("*.txt", "x.pem", Tool, false),
            ("[!a]*", "b", Shell, true),
            ("\\*", "*", Shell, true),
        ];
        for (pattern, name, globbing, want) in cases {
            assert_eq!(could_match(pattern, name, globbing), want, "{pattern} {name} {globbing:?}");
        }
    }
}
