//! Bounds on what the parser is asked to do, because the line is attacker-controlled.
//!
//! `brush-parser` is a recursive-descent (PEG) parser: nesting depth becomes stack depth, and a
//! stack overflow aborts the whole proxy, which `catch_unwind` cannot stop. So before parsing we
//! cap the line's length and count its nesting openers, and the analysis runs on a stack segment
//! sized for that count ([`with_stack`]) rather than whatever the calling thread has left. The opener
//! count never decreases (a `)` may belong to a `case` pattern, a `fi` may be an argument), so it
//! can only overestimate nesting: a pathological line is refused, never under-counted.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Longest line analysed; longer ones are a parse error (the engine asks).
pub(crate) const MAX_LINE_BYTES: usize = 64 * 1024;

/// Most nesting openers (`(`, `{`, backticks, `if`/`while`/`until`/`for`/`case`/`select`)
/// outside single quotes.
pub(crate) const MAX_OPENERS: usize = 256;

/// Deepest nesting of `${…}` analysed: each level's offset and subscript are evaluated again by
/// bash, and analysed again here, so the cost doubles per level (the red team's
/// `${x:${x:…}}`, 101 bytes, took 0.4 s at 18 levels).
pub(crate) const MAX_PARAMETER_DEPTH: usize = 6;

/// Stack one parse and walk needs, whatever its nesting …
const BASE_STACK: usize = 256 * 1024;
/// … plus this much per opener (measured: under 32 KiB per nesting level in a debug build).
const STACK_PER_OPENER: usize = 48 * 1024;

/// Run `f`, which parses and walks a script with `openers` nesting openers, on a stack with room
/// for it: the thread's own when it has enough left (the common case, no allocation), else a
/// segment allocated for the call.
pub(crate) fn with_stack<T>(openers: usize, f: impl FnOnce() -> T) -> T {
    let need = BASE_STACK + openers * STACK_PER_OPENER;
    stacker::maybe_grow(need, 2 * need, f)
}

/// Run a parser call, turning a panic inside it into an error message.
pub(crate) fn contain<T, E: ToString>(f: impl FnOnce() -> Result<T, E>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(_) => Err("the shell parser failed on this input".to_string()),
    }
}

/// Refuse lines too long or too deeply nested to parse safely; returns the opener count.
pub(crate) fn check(src: &str) -> Result<usize, String> {
    if src.len() > MAX_LINE_BYTES {
        return Err(format!("command longer than {MAX_LINE_BYTES} bytes"));
    }
    let depth = parameter_depth(src);
    if depth > MAX_PARAMETER_DEPTH {
        return Err(format!(
            "parameter expansions nest too deeply ({depth} levels of ${{…}}, at most {MAX_PARAMETER_DEPTH})"
        ));
    }
    let openers = count_openers(src);
    if openers > MAX_OPENERS {
        return Err(format!("command nests too deeply ({openers} openers, at most {MAX_OPENERS})"));
    }
    Ok(openers)
}

/// The deepest nesting of `${` (over-counted: quotes are not looked at, and any `}` closes).
fn parameter_depth(src: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let bytes = src.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'{' && i > 0 && bytes[i - 1] == b'$' {
            depth += 1;
            deepest = deepest.max(depth);
        } else if b == b'}' {
            depth = depth.saturating_sub(1);
        }
    }
    deepest
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    None,
    Single,
    AnsiC,
    Double,
}

const KEYWORDS: [&str; 6] = ["if", "while", "until", "for", "case", "select"];

/// Count every construct that makes the parser recurse, outside single quotes.
fn count_openers(src: &str) -> usize {
    let mut count = 0;
    let mut quote = Quote::None;
    let mut word = String::new();
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Quote::Single => {
                if c == '\'' {
                    quote = Quote::None;
                }
                continue;
            }
            Quote::AnsiC => {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '\'' => quote = Quote::None,
                    _ => {}
                }
                continue;
            }
            Quote::Double | Quote::None => {}
        }
        let in_double = quote == Quote::Double;
        match c {
            '\\' => {
                chars.next();
                word.push('x');
                continue;
            }
            '(' | '{' | '`' => count += 1,
            '"' => quote = if in_double { Quote::None } else { Quote::Double },
            '\'' if !in_double => quote = Quote::Single,
            '$' if !in_double && chars.peek() == Some(&'\'') => {
                chars.next();
                quote = Quote::AnsiC;
            }
            _ => {}
        }
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            if !in_double && KEYWORDS.contains(&word.as_str()) {
                count += 1;
            }
            word.clear();
        }
    }
    if KEYWORDS.contains(&word.as_str()) {
        count += 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openers_are_counted_outside_single_quotes_only() {
        let cases = [
            ("ls -la", 0),
            ("echo $(a) `b` ${c}", 4),
            ("echo '$(a) ( { if'", 0),
            ("echo \"$(a)\"", 1),
            ("echo $'(\\'('", 0),
            ("if true; then for x in a; do :; done; fi", 2),
            ("echo \\( \\{", 0),
            ("echo iffy fortune", 0),
            ("case", 1),
        ];
        for (src, want) in cases {
            assert_eq!(count_openers(src), want, "{src}");
        }
    }

    #[test]
    fn long_and_deep_lines_are_refused() {
        assert!(check(&"a".repeat(MAX_LINE_BYTES + 1)).is_err());
        assert!(check(&"(".repeat(MAX_OPENERS + 1)).is_err());
        assert!(check(&"if ".repeat(MAX_OPENERS + 1)).is_err());
        assert!(check("ls; (cd /tmp && ls)").is_ok());
    }

    #[test]
    fn panics_inside_the_parser_become_errors() {
        let r: Result<(), String> = contain(|| -> Result<(), String> { panic!("boom") });
        assert!(r.is_err());
    }
}
