//! The arguments' canonical spelling, exact: what a waiver is keyed by.
//!
//! `serde_json::Value` reads an integer past 64 bits as a float, so `18446744073709551616` and
//! `…617` became one key, and a session waiver for one forwarded the other unasked while the
//! server (Python's `json`, any arbitrary-precision reader) read both exactly (red team R10-6).
//! Read from the raw text instead: keys sorted (the last of a repeated key, as every reader the
//! proxy forwards to keeps), strings re-spelled, numbers that fit 64 bits or a float spelled as
//! [`canonical_json`](crate::rules::kinds::canonical_json) spells them, and an integer literal
//! past 64 bits kept as written.

use std::collections::BTreeMap;

use serde_json::value::RawValue;

/// The canonical spelling of `raw`, or `None` when it is not JSON.
pub fn canonical(raw: &RawValue) -> Option<String> {
    let mut out = String::with_capacity(raw.get().len());
    write(raw, &mut out, 0).then_some(out)
}

/// Nesting past this is not spelled (the JSON reader refuses deeper text anyway).
const DEPTH: usize = 128;

fn write(raw: &RawValue, out: &mut String, depth: usize) -> bool {
    if depth > DEPTH {
        return false;
    }
    let text = raw.get().trim();
    match text.as_bytes().first() {
        Some(b'{') => {
            let Ok(map) = serde_json::from_str::<BTreeMap<String, &RawValue>>(text) else { return false };
            out.push('{');
            for (i, (k, v)) in map.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(&k).unwrap_or_default());
                out.push(':');
                if !write(v, out, depth + 1) {
                    return false;
                }
            }
            out.push('}');
            true
        }
        Some(b'[') => {
            let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(text) else { return false };
            out.push('[');
            for (i, v) in items.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if !write(v, out, depth + 1) {
                    return false;
                }
            }
            out.push(']');
            true
        }
        Some(b'-' | b'0'..=b'9')
            if !text.contains(['.', 'e', 'E'])
                && text.parse::<i64>().is_err()
                && text.parse::<u64>().is_err() =>
        {
            // An integer no 64-bit reader holds: its digits, as written.
            out.push_str(text);
            true
        }
        _ => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(v) => {
                out.push_str(&serde_json::to_string(&v).unwrap_or_default());
                true
            }
            Err(_) => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        canonical(&RawValue::from_string(s.into()).unwrap()).unwrap()
    }

    #[test]
    fn integers_past_64_bits_keep_their_digits_and_the_rest_is_spelled_as_canonical_json() {
        assert_ne!(canon("{\"n\":18446744073709551616}"), canon("{\"n\":18446744073709551617}"));
        assert_ne!(
            canon("[340282366920938463463374607431768211457]"),
            canon("[340282366920938463463374607431768211458]")
        );
        for s in [
            r#"{"b":1,"a":[true,null,"x\u0041",1.5,-0,1e3,18446744073709551615],"c":{"z":{},"y":[]}}"#,
            r#"{"a":1,"a":2}"#,
            "\"\\ud83d\\ude00\"",
            "-12",
        ] {
            let v: serde_json::Value = serde_json::from_str(s).unwrap();
            assert_eq!(canon(s), crate::rules::kinds::canonical_json(&v), "{s}");
        }
        assert!(canonical(&RawValue::from_string("[".repeat(200) + &"]".repeat(200)).unwrap()).is_none());
    }
}
