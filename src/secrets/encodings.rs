//! The spellings of a held value that results are searched for: the value, its percent-encoded
//! forms, base64 (standard and URL-safe, at every byte alignment) and hex.

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;

/// Every spelling of `value` searched for, the value itself first; no duplicates.
///
/// Base64 of a value that starts `k` bytes into a longer encoded text (k = 0, 1, 2) shares a
/// stable run of characters with the encoding of `[0; k] ++ value`: the characters after those
/// that carry any bit of the `k` bytes before it, up to the last one made only of the value's
/// bits. Searching for the three runs (per alphabet) finds the value anywhere in a base64 text.
pub fn spellings(value: &str) -> Vec<String> {
    let mut out = vec![value.to_owned()];
    let mut push = |s: String| {
        if !s.is_empty() && !out.contains(&s) {
            out.push(s);
        }
    };
    push(percent(value, false));
    push(percent(value, true));
    for (padded, bare) in [(&STANDARD, &STANDARD_NO_PAD), (&URL_SAFE, &URL_SAFE_NO_PAD)] {
        push(padded.encode(value));
        for k in 0..3usize {
            let mut bytes = vec![0u8; k];
            bytes.extend_from_slice(value.as_bytes());
            let text = bare.encode(&bytes);
            let skip = (8 * k).div_ceil(6);
            let whole = 8 * bytes.len() / 6;
            if let Some(run) = text.get(skip..whole) {
                push(run.to_owned());
            }
        }
    }
    push(hex(value, false));
    push(hex(value, true));
    out
}

/// `encodeURIComponent`'s encoding (unreserved characters kept), in upper or lower hex.
fn percent(value: &str, lower: bool) -> String {
    let mut out = String::with_capacity(value.len() * 3);
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            _ if lower => out.push_str(&format!("%{b:02x}")),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn hex(value: &str, upper: bool) -> String {
    value.bytes().map(|b| if upper { format!("{b:02X}") } else { format!("{b:02x}") }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_of_the_value_at_any_offset_in_a_longer_text_contains_a_searched_run() {
        let value = "ghp_Zq8LmN3vT0xY";
        let runs = spellings(value);
        for prefix in ["", "a", "ab", "abc", "token=", "{\"k\":\"v\"}\n"] {
            for suffix in ["", "x", "xy", "!!!"] {
                let text = format!("{prefix}{value}{suffix}");
                for engine in [&STANDARD, &URL_SAFE, &STANDARD_NO_PAD] {
                    let enc = engine.encode(&text);
                    assert!(
                        runs[1..].iter().any(|r| enc.contains(r.as_str())),
                        "{prefix:?} {suffix:?} {enc}"
                    );
                }
            }
        }
    }

    #[test]
    fn percent_and_hex_spellings_are_searched_and_the_value_comes_first() {
        let s = spellings("a b/c:d?e&f=g");
        assert_eq!(s[0], "a b/c:d?e&f=g");
        assert!(s.contains(&"a%20b%2Fc%3Ad%3Fe%26f%3Dg".to_owned()));
        assert!(s.contains(&"a%20b%2fc%3ad%3fe%26f%3dg".to_owned()));
        assert!(s.contains(&"6120622f633a643f6526663d67".to_owned()));
        let plain = spellings("abcdefgh");
        assert_eq!(plain.iter().filter(|x| x.as_str() == "abcdefgh").count(), 1, "no duplicates");
    }
}
