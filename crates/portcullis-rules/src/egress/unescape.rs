//! JSON string escapes undone, as a receiver that parses a document in an argument reads it:
//! `http:\/\/127.0.0.1\/` and `\u0068ttp://…` are URLs to it.

/// `text` with every JSON escape (`\/`, `\"`, `\\`, `\b\f\n\r\t`, `\uXXXX` with surrogate
/// pairs) undone, or `None` when it holds none. A `\` that starts no escape is kept, and an
/// unpaired surrogate becomes U+FFFD, as a lenient reader would.
pub(super) fn json(text: &str) -> Option<String> {
    if !text.contains('\\') {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let simple = match chars.peek().map(|&(_, n)| n) {
            Some('/') => Some('/'),
            Some('"') => Some('"'),
            Some('\\') => Some('\\'),
            Some('b') => Some('\u{8}'),
            Some('f') => Some('\u{c}'),
            Some('n') => Some('\n'),
            Some('r') => Some('\r'),
            Some('t') => Some('\t'),
            _ => None,
        };
        if let Some(decoded) = simple {
            chars.next();
            out.push(decoded);
            changed = true;
            continue;
        }
        match unit(text, at + 1) {
            Some(high @ 0xD800..=0xDBFF) => {
                let low = text.get(at + 6..at + 7).filter(|s| *s == "\\").and_then(|_| unit(text, at + 7));
                let (decoded, used) = match low {
                    Some(low @ 0xDC00..=0xDFFF) => {
                        let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                        (char::from_u32(code).unwrap_or('\u{FFFD}'), 11)
                    }
                    _ => ('\u{FFFD}', 5),
                };
                out.push(decoded);
                skip(&mut chars, used);
                changed = true;
            }
            Some(code) => {
                out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                skip(&mut chars, 5);
                changed = true;
            }
            None => out.push('\\'),
        }
    }
    changed.then_some(out)
}

/// The code unit of `uXXXX` at `at`.
fn unit(text: &str, at: usize) -> Option<u32> {
    let hex = text.get(at..at + 5)?.strip_prefix('u')?;
    hex.bytes().all(|b| b.is_ascii_hexdigit()).then(|| u32::from_str_radix(hex, 16).ok())?
}

fn skip(chars: &mut impl Iterator<Item = (usize, char)>, n: usize) {
    for _ in 0..n {
        chars.next();
    }
}

#[cfg(test)]
mod tests {
    use super::json;

    #[test]
    fn every_json_escape_is_undone_and_text_without_one_is_left_alone() {
        let table: &[(&str, Option<&str>)] = &[
            (r"http:\/\/127.0.0.1:8\/x", Some("http://127.0.0.1:8/x")),
            (r"\u0068ttp://127.0.0.1/", Some("http://127.0.0.1/")),
            (r"\u0048TTP:\u002f\u002F10.0.0.1", Some("HTTP://10.0.0.1")),
            (r#"{\"callback\":\"http://a\"}"#, Some(r#"{"callback":"http://a"}"#)),
            (r"\ud83d\ude00", Some("\u{1F600}")),
            (r"\ud83d", Some("\u{FFFD}")),
            (r"C:\Users\x", None),
            (r"a\", None),
            (r"\u12", None),
            ("plain", None),
        ];
        for (text, want) in table {
            assert_eq!(json(text).as_deref(), *want, "{text}");
        }
    }

    #[test]
    fn a_double_escape_is_undone_one_layer_at_a_time() {
        let once = json(r"http:\\\/\\\/h").unwrap();
        assert_eq!(once, r"http:\/\/h");
        assert_eq!(json(&once).as_deref(), Some("http://h"));
    }
}
