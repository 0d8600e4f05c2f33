//! Brace expansion as bash 5.2 performs it, before every other expansion.
//!
//! `tree {-o,out.txt} .` runs `tree -o out.txt .`: the option only exists after brace
//! expansion, so any check of options must see the expanded words. This follows bash's
//! `braces.c`: the first unquoted `{` with a matching unquoted `}` splits a word into preamble,
//! amble and postamble; the amble splits on unquoted commas at its own level (each part expanded
//! again), or is a sequence (`{1..3}`, `{a..e..2}`, `{05..1}`); the result is the cartesian
//! product of preamble, amble and the expanded postamble. Quotes and backslashes keep braces and
//! commas literal, `${` opens a level like `\{` does, and `{}`, `{a}` stay as written.
//!
//! The words are raw (quotes intact) so the caller decodes each one. Whatever this does not model
//! exactly returns [`Expansion::Unknown`], and so does a product above [`MAX_WORDS`].

/// Most words one word may brace-expand to before the result counts as unknown.
pub(crate) const MAX_WORDS: usize = 64;

/// Bash skips these before a word is expanded: an unquoted `{` between blanks is literal.
fn is_blank(c: Option<char>) -> bool {
    matches!(c, None | Some(' ' | '\t' | '\n'))
}

/// The result of brace-expanding one raw word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Expansion {
    /// The raw words bash produces, in order (just the input when nothing expands).
    Words(Vec<String>),
    /// Beyond what is modelled here, or more than [`MAX_WORDS`] words.
    Unknown,
}

/// Brace-expand one raw word (quotes still in place; `$'…'` already rewritten as `'…'`).
pub(crate) fn expand(raw: &str) -> Expansion {
    let chars: Vec<char> = raw.chars().collect();
    match expand_chars(&chars, 0) {
        Some(words) => Expansion::Words(words),
        None => Expansion::Unknown,
    }
}

/// Whether `raw` holds a `{` that could start an expansion (quick filter before the real work).
pub(crate) fn might_expand(raw: &str) -> bool {
    raw.contains('{') && raw.contains('}')
}

fn expand_chars(text: &[char], depth: usize) -> Option<Vec<String>> {
    if depth > 32 {
        return None;
    }
    // The first `{` that has a matching `}`.
    let mut i = 0;
    let open = loop {
        let at = gobble(text, i, '{')?;
        if at >= text.len() {
            return Some(vec![text.iter().collect()]);
        }
        let close = gobble(text, at + 1, '}')?;
        if close < text.len() {
            break at;
        }
        i = at + 1;
    };
    let close = gobble(text, open + 1, '}')?;
    let preamble: String = text[..open].iter().collect();
    let amble = &text[open + 1..close];
    let postamble = &text[close + 1..];

    let middle = if has_separator(amble) {
        let mut parts = Vec::new();
        let mut start = 0;
        loop {
            let comma = gobble(amble, start, ',')?;
            parts.extend(expand_chars(&amble[start..comma.min(amble.len())], depth + 1)?);
            if parts.len() > MAX_WORDS {
                return None;
            }
            if comma >= amble.len() {
                break;
            }
            start = comma + 1;
        }
        parts
    } else {
        match sequence(amble)? {
            Some(seq) => seq,
            // Not an expansion: the braces stay, the rest of the word may still expand.
            None => vec![text[open..=close].iter().collect()],
        }
    };
    let rest = if postamble.is_empty() { vec![String::new()] } else { expand_chars(postamble, depth + 1)? };
    if middle.len().saturating_mul(rest.len()) > MAX_WORDS {
        return None;
    }
    let mut out = Vec::with_capacity(middle.len() * rest.len());
    for m in &middle {
        for r in &rest {
            out.push(format!("{preamble}{m}{r}"));
        }
    }
    Some(out)
}

/// Bash's `brace_gobbler`: the index of the first `satisfy` outside quotes and nested levels,
/// or `text.len()` when there is none. `None` for constructs not modelled here (`$(`, `` ` ``).
fn gobble(text: &[char], from: usize, satisfy: char) -> Option<usize> {
    let mut level = 0usize;
    let mut quoted: Option<char> = None;
    let mut i = from;
    while i < text.len() {
        let c = text[i];
        if c == '\\' && quoted != Some('\'') {
            i += 2;
            continue;
        }
        if c == '$' && text.get(i + 1) == Some(&'{') && quoted != Some('\'') {
            // `${…}` is a parameter expansion, not a brace expansion.
            if quoted.is_none() {
                level += 1;
            }
            i += 2;
            continue;
        }
        if matches!(c, '$' | '<' | '>') && text.get(i + 1) == Some(&'(') && quoted != Some('\'') {
            return None;
        }
        if let Some(q) = quoted {
            if c == q {
                quoted = None;
            }
            i += 1;
            continue;
        }
        match c {
            '`' => return None,
            '"' | '\'' => quoted = Some(c),
            _ if c == satisfy && level == 0 => {
                let ignored = c == '{'
                    && is_blank(i.checked_sub(1).map(|p| text[p]))
                    && (is_blank(text.get(i + 1).copied()) || text.get(i + 1) == Some(&'}'));
                if !ignored {
                    return Some(i);
                }
            }
            '{' => level += 1,
            '}' if level > 0 => level -= 1,
            _ => {}
        }
        i += 1;
    }
    Some(text.len())
}

/// An unquoted, unescaped comma at the amble's own level.
fn has_separator(amble: &[char]) -> bool {
    gobble(amble, 0, ',').is_some_and(|at| at < amble.len())
}

/// `{x..y[..incr]}` with integers or single letters. `Some(None)`: not a sequence (the braces
/// are literal); `None`: a sequence this does not model exactly.
fn sequence(amble: &[char]) -> Option<Option<Vec<String>>> {
    let text: String = amble.iter().collect();
    let Some((lhs, rest)) = text.split_once("..") else {
        return Some(None);
    };
    let (rhs, incr) = match rest.split_once("..") {
        Some((rhs, incr)) => (rhs, Some(incr)),
        None => (rest, None),
    };
    if lhs.is_empty() || rhs.is_empty() {
        return Some(None);
    }
    let incr = match incr {
        None => 1i64,
        Some(s) if is_integer(s) => s.parse().ok()?,
        // bash rejects the whole sequence then, keeping the braces; anything odd is unknown.
        Some(s) if s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '+') => return Some(None),
        Some(_) => return None,
    };
    let letter = |s: &str| s.len() == 1 && s.chars().all(|c| c.is_ascii_alphabetic());
    let numeric = |s: &str| {
        let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    };
    if numeric(lhs) && numeric(rhs) && !(is_integer(lhs) && is_integer(rhs)) {
        return None; // bash's overflow handling is not modelled
    }
    let values: Vec<String> = if is_integer(lhs) && is_integer(rhs) {
        let (a, b): (i64, i64) = (lhs.parse().ok()?, rhs.parse().ok()?);
        let zero = |s: &str| (s.len() > 1 && s.starts_with('0')) || (s.len() > 2 && s.starts_with("-0"));
        let width = if zero(lhs) || zero(rhs) { lhs.len().max(rhs.len()) } else { 0 };
        steps(a, b, incr)?.into_iter().map(|v| format!("{v:0width$}")).collect()
    } else if letter(lhs) && letter(rhs) {
        let (a, b) = (lhs.as_bytes()[0], rhs.as_bytes()[0]);
        // Between `Z` and `a` lie `[`, `\`, `]`, `^`, `_`, `` ` ``: bash's handling of those is
        // not modelled.
        if a.is_ascii_uppercase() != b.is_ascii_uppercase() {
            return None;
        }
        steps(i64::from(a), i64::from(b), incr)?
            .into_iter()
            .map(|v| char::from(u8::try_from(v).unwrap_or(b'?')).to_string())
            .collect()
    } else if text.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '+') {
        return Some(None);
    } else {
        return None;
    };
    Some(Some(values))
}

fn is_integer(s: &str) -> bool {
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    !digits.is_empty() && digits.len() <= 18 && digits.bytes().all(|b| b.is_ascii_digit())
}

/// bash's `mkseq`: a zero increment is one, and its sign follows the direction.
fn steps(a: i64, b: i64, incr: i64) -> Option<Vec<i64>> {
    let step = incr.checked_abs()?.max(1);
    let count = (a - b).unsigned_abs() / step.unsigned_abs() + 1;
    if count > MAX_WORDS as u64 {
        return None;
    }
    let mut out = Vec::new();
    let mut v = a;
    for _ in 0..count {
        out.push(v);
        v = if a <= b { v + step } else { v - step };
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(raw: &str) -> Vec<String> {
        match expand(raw) {
            Expansion::Words(w) => w,
            Expansion::Unknown => panic!("{raw}: unknown"),
        }
    }

    #[test]
    fn braces_expand_as_bash_does() {
        // Each expectation was checked against bash 5.2.
        let cases: &[(&str, &[&str])] = &[
            ("{-o,out.txt}", &["-o", "out.txt"]),
            ("{a,b}", &["a", "b"]),
            ("x{a,b}y", &["xay", "xby"]),
            ("{1..3}", &["1", "2", "3"]),
            ("{3..1}", &["3", "2", "1"]),
            ("{a..c}", &["a", "b", "c"]),
            ("{c..a}", &["c", "b", "a"]),
            ("{a..e..2}", &["a", "c", "e"]),
            ("{05..1..2}", &["05", "03", "01"]),
            ("{-1..1}", &["-1", "0", "1"]),
            ("{1..3..0}", &["1", "2", "3"]),
            ("{a..c..-1}", &["a", "b", "c"]),
            ("{+1..3}", &["1", "2", "3"]),
            ("{01..3}", &["01", "02", "03"]),
            ("{1..3}{a,b}", &["1a", "1b", "2a", "2b", "3a", "3b"]),
            ("{{a,b},c}d", &["ad", "bd", "cd"]),
            ("x{a,b\"c,d\"}", &["xa", "xb\"c,d\""]),
            ("{rm,-rf,x}", &["rm", "-rf", "x"]),
            ("-{,}", &["-", "-"]),
            ("{a,}", &["a", ""]),
            // Literal: no separator, quoted or escaped braces and commas, `${…}`.
            ("{'a,b'}", &["{'a,b'}"]),
            ("{','}", &["{','}"]),
            ("\\{a,b}", &["\\{a,b}"]),
            ("{a\\,b}", &["{a\\,b}"]),
            ("{a,b\\}", &["{a,b\\}"]),
            ("\"{a,b}\"", &["\"{a,b}\""]),
            ("'{a,b}'", &["'{a,b}'"]),
            ("{}", &["{}"]),
            ("{a}", &["{a}"]),
            ("a{}b", &["a{}b"]),
            ("a{b}c{d,e}", &["a{b}cd", "a{b}ce"]),
            ("${x,y}", &["${x,y}"]),
            ("{a,b", &["{a,b"]),
            ("{1..}", &["{1..}"]),
            ("--format={x}", &["--format={x}"]),
        ];
        for (raw, want) in cases {
            assert_eq!(words(raw), *want, "{raw}");
        }
    }

    #[test]
    fn big_or_unmodelled_expansions_are_unknown() {
        for raw in [
            "{1..100}",
            "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}",
            "{Z..b}",
            "{$(id),x}",
            "{`id`,x}",
            "{1..9223372036854775807}",
        ] {
            assert_eq!(expand(raw), Expansion::Unknown, "{raw}");
        }
    }
}
