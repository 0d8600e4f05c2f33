//! Request ids as real clients correlate them: one key for every spelling a client would take
//! as the same id.

use std::borrow::Cow;

use serde_json::value::RawValue;

/// A request id as real clients correlate it: two ids are the same key when any client portcullis
/// knows would take a response carrying one as the answer to a request carrying the other.
///
/// - The TypeScript SDK looks responses up by `Number(response.id)`: JSON numbers by value (`4`,
///   `4.0`, `4e0`, `40e-1`), strings by JavaScript's `Number()` grammar (whitespace trimmed,
///   `"+4"`, `"4.0"`, `"4e0"`, `"0x4"`, `"0o4"`, `"0b100"`, and `""` or `"  "` as 0).
/// - The Python SDK coerces string ids with `int()` (`" 4 "`, `"+4"`, `"4_0"`, Unicode digits)
///   and looks them up in a dict where `4.0 == 4`.
///
/// So numbers and numeric strings share one key, the number's value; other strings key as
/// themselves. A string whose number portcullis cannot work out exactly (non-ASCII digits, say)
/// is [`IdKey::is_wild`]: it may answer any watched call, and is inspected as such.
#[derive(Debug, Clone)]
pub struct IdKey {
    canon: Canon,
    /// The id's JSON text as received, to answer with.
    raw: Box<str>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Canon {
    /// The bits of an `f64` (`-0` folded into `0`, every NaN into one).
    Num(u64),
    Str(Box<str>),
    /// Anything else: `null`, objects, and strings no exact reading is known for.
    Wild,
}

impl PartialEq for IdKey {
    fn eq(&self, other: &Self) -> bool {
        self.canon == other.canon
    }
}

impl Eq for IdKey {}

impl std::hash::Hash for IdKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.canon.hash(state)
    }
}

impl IdKey {
    pub fn new(id: &RawValue) -> Self {
        let text = id.get().trim();
        let canon = match text.as_bytes().first() {
            Some(b'"') => match serde_json::from_str::<Cow<'_, str>>(text) {
                Ok(s) => canon_of_string(&s),
                Err(_) => Canon::Wild,
            },
            // The JSON number grammar is a subset of Rust's: it rounds as `JSON.parse` does,
            // and overflows to infinity as it does too.
            Some(b'-' | b'0'..=b'9') => text.parse::<f64>().map_or(Canon::Wild, num),
            _ => Canon::Wild,
        };
        IdKey { canon, raw: text.into() }
    }

    /// True when the id's key is not known exactly: it is treated as answering any watched call.
    pub fn is_wild(&self) -> bool {
        self.canon == Canon::Wild
    }

    /// True when a response with id `self` may answer a request with id `other`.
    pub fn answers(&self, other: &IdKey) -> bool {
        self.is_wild() || other.is_wild() || self.canon == other.canon
    }

    /// The id's JSON text as received.
    pub fn as_raw(&self) -> &str {
        &self.raw
    }
}

fn num(f: f64) -> Canon {
    if f.is_nan() {
        Canon::Num(f64::NAN.to_bits())
    } else if f == 0.0 {
        Canon::Num(0f64.to_bits())
    } else {
        Canon::Num(f.to_bits())
    }
}

/// White space either client trims around a numeric string: JavaScript's `StrWhiteSpaceChar`
/// (which has U+FEFF) and Python's `str.isspace` (which has U+001C..U+001F).
fn trimmed(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\u{1c}'..='\u{1f}' | '\u{feff}')
}

fn canon_of_string(s: &str) -> Canon {
    let t = s.trim_matches(trimmed);
    if t.is_empty() {
        // `Number("")` and `Number("  ")` are 0 (Python's `int("")` fails: only JS matches).
        return num(0.0);
    }
    if let Some(n) = js_number(t) {
        return num(n);
    }
    if let Some(n) = python_int(t) {
        return num(n);
    }
    if t.chars().any(|c| c.is_numeric() && !c.is_ascii_digit()) {
        // Python's `int()` reads every Unicode decimal digit; rather than carry the tables,
        // such a string may be any number.
        return Canon::Wild;
    }
    Canon::Str(s.into())
}

/// JavaScript's `Number(s)` over a trimmed, non-empty string (`StringNumericLiteral`).
fn js_number(t: &str) -> Option<f64> {
    let b = t.as_bytes();
    if b.len() > 2 && b[0] == b'0' {
        let radix = match b[1] {
            b'x' | b'X' => 16,
            b'o' | b'O' => 8,
            b'b' | b'B' => 2,
            _ => 0,
        };
        if radix != 0 {
            let digits = &t[2..];
            if !digits.chars().all(|c| c.is_digit(radix)) {
                return None;
            }
            // Exact below 2^53; beyond, the nearest double like JS (close enough to key on).
            return Some(
                digits
                    .chars()
                    .fold(0f64, |acc, c| acc * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))),
            );
        }
    }
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    if unsigned == "Infinity" {
        return Some(if t.starts_with('-') { f64::NEG_INFINITY } else { f64::INFINITY });
    }
    // StrUnsignedDecimalLiteral: digits [. digits?] exp? | . digits exp?
    let (mantissa, exp) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let digits = |s: &str| s.bytes().all(|c| c.is_ascii_digit());
    let mantissa_ok =
        digits(int) && frac.is_none_or(digits) && !(int.is_empty() && frac.unwrap_or("").is_empty());
    let exp_ok = exp.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    (mantissa_ok && exp_ok).then(|| t.parse::<f64>().ok()).flatten()
}

/// Python's `int(s)` over a trimmed string, ASCII digits only: a sign, digits, single
/// underscores between digits.
fn python_int(t: &str) -> Option<f64> {
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    let ok = !unsigned.is_empty()
        && !unsigned.starts_with('_')
        && !unsigned.ends_with('_')
        && !unsigned.contains("__")
        && unsigned.bytes().all(|c| c.is_ascii_digit() || c == b'_');
    if !ok {
        return None;
    }
    let n = unsigned.bytes().filter(u8::is_ascii_digit).fold(0f64, |acc, d| acc * 10.0 + f64::from(d - b'0'));
    Some(if t.starts_with('-') { -n } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(json: &str) -> IdKey {
        IdKey::new(&RawValue::from_string(json.into()).unwrap())
    }

    #[test]
    fn id_keys_match_every_spelling_a_real_client_correlates() {
        // (watched id, response id): the TS SDK (`Number(id)`) or the Python SDK (`int(id)`,
        // dict lookup where 4.0 == 4) takes the response as the answer.
        let same = [
            ("4", "4"),
            ("4", "4.0"),
            ("4", "4e0"),
            ("4", "40e-1"),
            ("4", "4.0000000000000001"),
            ("4", "\"4\""),
            ("4", "\" 4 \""),
            ("4", "\"\\t4\\n\""),
            ("4", "\"\\u00a04\\ufeff\""),
            ("4", "\"\\u001c4\""),
            ("4", "\"4.0\""),
            ("4", "\"4.\""),
            ("4", "\"4e0\""),
            ("4", "\"+4\""),
            ("4", "\"0x4\""),
            ("4", "\"0X4\""),
            ("4", "\"0o4\""),
            ("4", "\"0b100\""),
            ("4", "\"\\u0034\""),
            ("40", "\"4_0\""),
            ("-4", "\"-4\""),
            ("0", "\"\""),
            ("0", "\"   \""),
            ("0", "\"-0\""),
            ("0", "-0"),
            ("0", "\".0\""),
            ("\"abc\"", "\"abc\""),
            ("\"abc\"", "\"\\u0061bc\""),
            ("9007199254740992", "9007199254740993"),
        ];
        for (watched, response) in same {
            assert!(key(response).answers(&key(watched)), "{response} answers {watched}");
            assert_eq!(key(response), key(watched), "{response} keys as {watched}");
        }
        let different = [
            ("4", "5"),
            ("4", "4.5"),
            ("4", "\"4x\""),
            ("4", "\"-0x4\""),
            ("4", "\"0x\""),
            ("4", "\"4__0\""),
            ("4", "\"four\""),
            ("\"abc\"", "\" abc\""),
            ("\"abc\"", "\"ABC\""),
            ("0", "\"a\""),
        ];
        for (watched, response) in different {
            assert!(!key(response).answers(&key(watched)), "{response} does not answer {watched}");
        }
    }

    #[test]
    fn ids_without_an_exact_reading_may_answer_any_call() {
        for wild in ["\"\\u0664\"", "null", "{}", "[4]", "true", "1e999999999999999999"] {
            let k = key(wild);
            if wild.starts_with('1') {
                // Overflows to infinity, as `JSON.parse` does: a number, just not a small one.
                assert!(!k.answers(&key("4")), "{wild}");
                continue;
            }
            assert!(k.is_wild(), "{wild}");
            assert!(k.answers(&key("4")) && k.answers(&key("\"abc\"")), "{wild}");
        }
    }

    #[test]
    fn id_keys_keep_the_received_text_to_answer_with() {
        assert_eq!(key(" \"4\" ").as_raw(), "\"4\"");
        assert_eq!(key("4.0").as_raw(), "4.0");
    }
}
