//! Textual escapes a copy may be written in (red team R6-2b), undone in one pass: HTML
//! character references (`&#84;`, `&#x54;`, the XML five and `&nbsp;`, and the letter families
//! `&Aopf;` `&afr;` `&ascr;`, whose characters fold to the plain letter anyway), JSON and
//! JavaScript `\uXXXX` (surrogate pairs joined) and `\u{…}`, and C-style `\xNN` and `\NNN`
//! octal bytes. Whatever is not one of these is kept as written.

/// The decoding of `text`, or `None` when it holds no escape.
pub fn unescape(text: &[u8]) -> Option<Vec<u8>> {
    if !text.iter().any(|&b| b == b'&' || b == b'\\') {
        return None;
    }
    let mut out = Vec::with_capacity(text.len());
    let mut any = false;
    let mut i = 0;
    while i < text.len() {
        let step = match text[i] {
            b'&' => entity(&text[i..], &mut out),
            b'\\' => backslash(&text[i..], &mut out),
            _ => None,
        };
        match step {
            Some(n) => {
                any = true;
                i += n;
            }
            None => {
                out.push(text[i]);
                i += 1;
            }
        }
    }
    any.then_some(out)
}

fn push_char(c: u32, out: &mut Vec<u8>) {
    let c = char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER);
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

/// Digits of `radix` at the start of `s`, at most `max`: their value and count.
fn digits(s: &[u8], radix: u32, max: usize) -> Option<(u32, usize)> {
    let n = s.iter().take(max).take_while(|b| (**b as char).is_digit(radix)).count();
    let text = std::str::from_utf8(&s[..n]).ok()?;
    (n > 0).then(|| u32::from_str_radix(text, radix).ok().map(|v| (v, n))).flatten()
}

/// An HTML character reference at the start of `s`: bytes consumed.
fn entity(s: &[u8], out: &mut Vec<u8>) -> Option<usize> {
    if s.get(1) == Some(&b'#') {
        let (radix, at) = match s.get(2) {
            Some(b'x' | b'X') => (16, 3),
            _ => (10, 2),
        };
        let (v, n) = digits(&s[at..], radix, 8)?;
        push_char(v, out);
        let end = at + n;
        return Some(end + usize::from(s.get(end) == Some(&b';')));
    }
    let name_len = s[1..].iter().take(12).take_while(|b| b.is_ascii_alphanumeric()).count();
    if s.get(1 + name_len) != Some(&b';') {
        return None;
    }
    let name = std::str::from_utf8(&s[1..1 + name_len]).ok()?;
    let plain = match name {
        "amp" => "&",
        "lt" => "<",
        "gt" => ">",
        "quot" => "\"",
        "apos" => "'",
        "nbsp" => " ",
        _ => {
            // &Aopf; &afr; &ascr;: one letter in a mathematical family.
            let letter = ["opf", "fr", "scr"].iter().find_map(|suffix| {
                let stem = name.strip_suffix(suffix)?;
                (stem.len() == 1 && stem.as_bytes()[0].is_ascii_alphabetic()).then_some(stem)
            })?;
            out.extend_from_slice(letter.as_bytes());
            return Some(name_len + 2);
        }
    };
    out.extend_from_slice(plain.as_bytes());
    Some(name_len + 2)
}

/// A backslash escape at the start of `s`: bytes consumed.
fn backslash(s: &[u8], out: &mut Vec<u8>) -> Option<usize> {
    match s.get(1)? {
        b'u' if s.get(2) == Some(&b'{') => {
            let (v, n) = digits(&s[3..], 16, 6)?;
            (s.get(3 + n) == Some(&b'}')).then(|| push_char(v, out))?;
            Some(4 + n)
        }
        b'u' => {
            let (hi, 4) = digits(&s[2..], 16, 4)? else { return None };
            if (0xD800..0xDC00).contains(&hi) && s.get(6..8) == Some(b"\\u") {
                if let Some((lo, 4)) = digits(&s[8..], 16, 4) {
                    if (0xDC00..0xE000).contains(&lo) {
                        push_char(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), out);
                        return Some(12);
                    }
                }
            }
            push_char(hi, out);
            Some(6)
        }
        b'x' => {
            let (v, n) = digits(&s[2..], 16, 2)?;
            out.push(v as u8);
            Some(2 + n)
        }
        b'0'..=b'7' => {
            let (v, n) = digits(&s[1..], 8, 3)?;
            out.push((v & 0xff) as u8);
            Some(1 + n)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_escape_is_undone() {
        let cases: [(&str, &str); 12] = [
            ("&#84;&#104;e", "The"),
            ("&#x54;&#X68;e", "The"),
            ("&#84&#104e", "The"),
            ("a&amp;b &lt;c&gt;", "a&b <c>"),
            ("&Topf;&hfr;&escr;", "The"),
            ("\\u0054\\u0068e", "The"),
            ("\\ud83d\\ude00!", "\u{1f600}!"),
            ("\\u{54}\\u{1F600}", "T\u{1f600}"),
            ("\\x54\\x68\\x65", "The"),
            ("\\124\\150e", "The"),
            ("\\xc3\\xa9", "é"),
            ("C:\\\\path&x", "C:\\\\path&x"),
        ];
        for (input, want) in cases {
            let got = unescape(input.as_bytes()).unwrap_or_else(|| input.as_bytes().to_vec());
            assert_eq!(String::from_utf8_lossy(&got), want, "{input:?}");
        }
    }

    #[test]
    fn text_without_escapes_is_none_and_nothing_panics() {
        assert!(unescape(b"plain text, no escapes").is_none());
        for input in
            [&b"&"[..], b"&#", b"&#x", b"&#99999999999;", b"\\", b"\\u", b"\\ud800", b"\\u{}", b"\\x", b"&;"]
        {
            let _ = unescape(input);
        }
    }
}
