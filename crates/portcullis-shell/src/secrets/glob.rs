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

/// The alternatives of a tool glob's brace groups (`*.{ts,tsx}` is `*.ts` and `*.tsx`), at most
/// [`MAX_ALTERNATIVES`]; `None` past that, or for a group that does not close, so the caller can
/// take the whole word as unknown.
pub fn expand_braces(word: &str) -> Option<Vec<String>> {
    let Some(open) = word.find('{') else { return Some(vec![word.to_string()]) };
    // The group's close, counting nested groups.
    let mut depth = 0usize;
    let mut close = None;
    for (i, b) in word.bytes().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close?;
    let (head, inner, tail) = (&word[..open], &word[open + 1..close], &word[close + 1..]);
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, b) in inner.bytes().enumerate() {
        match b {
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    let mut out = Vec::new();
    for part in parts {
        for rest in expand_braces(&format!("{head}{part}{tail}"))? {
            out.push(rest);
            if out.len() > MAX_ALTERNATIVES {
                return None;
            }
        }
    }
    Some(out)
}

/// How many brace alternatives a glob may have before it is taken as unknown.
pub const MAX_ALTERNATIVES: usize = 64;

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
    fn tool_globs_brace_groups_are_their_alternatives() {
        let alts = |w: &str| expand_braces(w);
        assert_eq!(alts("*.{ts,tsx}"), Some(vec!["*.ts".into(), "*.tsx".into()]));
        assert_eq!(
            alts("{src,.git}/{a,b{c,d}}"),
            Some(["src/a", "src/bc", "src/bd", ".git/a", ".git/bc", ".git/bd"].map(String::from).to_vec())
        );
        assert_eq!(alts("plain"), Some(vec!["plain".into()]));
        assert_eq!(alts("x{a,b"), None, "an open group");
        assert_eq!(alts(&"{a,b}".repeat(7)), None, "2^7 alternatives");
    }

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
