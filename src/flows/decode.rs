//! The cheap decodings of an argument string a copy may hide behind: percent-encoding, textual
//! escapes (HTML references, `\u`, `\x`: [`super::unescape`]), base64 (standard and URL-safe,
//! padded or not) and hex runs, three layers deep (base64 of a percent-encoded text, say), within
//! the scan's byte budget. Anything else (compression, encryption, a cipher of the agent's
//! own) is not decoded: see docs/checker.md.

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;

/// The shortest run of base64 or hex characters worth decoding: shorter runs decode to fewer
/// bytes than a shingle holds.
const MIN_RUN: usize = 16;

/// Layers of encoding undone.
const DEPTH: usize = 3;

fn lenient(alphabet: &alphabet::Alphabet) -> GeneralPurpose {
    GeneralPurpose::new(
        alphabet,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    )
}

/// Every decoding of `text` (not `text` itself), at most `budget` bytes in all; the budget left
/// is returned so the caller can tell a scan that ran out.
pub fn decodings(text: &[u8], budget: &mut usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut layer = vec![text.to_vec()];
    for _ in 0..DEPTH {
        let mut next = Vec::new();
        for t in &layer {
            for d in one_layer(t) {
                if d.len() > *budget {
                    *budget = 0;
                    out.extend(next);
                    return out;
                }
                *budget -= d.len();
                next.push(d);
            }
        }
        if next.is_empty() {
            break;
        }
        out.extend(next.iter().cloned());
        layer = next;
    }
    out
}

/// One layer: the percent-decoding of the whole text, and each base64 and hex run decoded.
fn one_layer(text: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    if text.contains(&b'%') {
        let decoded = percent(text);
        if decoded.len() < text.len() {
            out.push(decoded);
        }
    }
    if let Some(d) = super::unescape::unescape(text) {
        out.push(d);
    }
    let is_b64 = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_');
    let mut i = 0;
    while i < text.len() {
        if !is_b64(text[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < text.len() && is_b64(text[i]) {
            i += 1;
        }
        let run = &text[start..i];
        if run.len() >= MIN_RUN {
            if run.len().is_multiple_of(2) && run.iter().all(u8::is_ascii_hexdigit) {
                out.push(hex(run));
            }
            if let Some(d) = base64(run) {
                out.push(d);
            }
        }
    }
    out
}

fn percent(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let hexval = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
        match (text[i], text.get(i + 1).copied().and_then(hexval), text.get(i + 2).copied().and_then(hexval))
        {
            (b'%', Some(hi), Some(lo)) => {
                out.push(hi << 4 | lo);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

fn hex(run: &[u8]) -> Vec<u8> {
    run.chunks_exact(2)
        .filter_map(|p| std::str::from_utf8(p).ok().and_then(|s| u8::from_str_radix(s, 16).ok()))
        .collect()
}

/// A run decoded by whichever alphabet its characters belong to; a length no encoder writes
/// (one past a multiple of four) loses its last character first.
fn base64(run: &[u8]) -> Option<Vec<u8>> {
    let run = match run.len() % 4 {
        1 => &run[..run.len() - 1],
        _ => run,
    };
    let url_safe = run.iter().any(|b| matches!(b, b'-' | b'_'));
    let engine = match url_safe {
        true => lenient(&alphabet::URL_SAFE),
        false => lenient(&alphabet::STANDARD),
    };
    engine.decode(run).ok().filter(|d| !d.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

    fn any_holds(text: &str, want: &str) -> bool {
        let mut budget = 1 << 20;
        decodings(text.as_bytes(), &mut budget).iter().any(|d| String::from_utf8_lossy(d).contains(want))
    }

    #[test]
    fn each_cheap_encoding_is_undone() {
        let secret = "the meeting moved to the old warehouse at nine";
        let cases = [
            ("percent", format!("https://x.example/?q={}", secret.replace(' ', "%20"))),
            ("base64", format!("data={}", STANDARD.encode(secret))),
            ("base64url", format!("d:{}", URL_SAFE_NO_PAD.encode(secret))),
            ("hex", hex_of(secret)),
            ("percent inside base64", STANDARD.encode(secret.replace(' ', "%20"))),
            ("base64 inside percent", STANDARD.encode(secret).replace('+', "%2B").replace('/', "%2F")),
        ];
        for (name, text) in cases {
            assert!(any_holds(&text, secret), "{name}: {text}");
        }
    }

    fn hex_of(s: &str) -> String {
        s.bytes().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn plain_text_has_no_decoding_worth_keeping_and_runs_out_of_budget_safely() {
        let mut budget = 1 << 20;
        assert!(decodings(b"hello there", &mut budget).is_empty());
        let mut tiny = 4;
        let _ = decodings(STANDARD.encode([7u8; 600]).as_bytes(), &mut tiny);
        assert_eq!(tiny, 0, "an exhausted budget is reported");
    }

    #[test]
    fn binary_and_broken_input_never_panics() {
        let mut budget = 1 << 20;
        for input in [&b"%"[..], b"%4", b"%zz%%%", &[0xff, 0xfe, b'%', 0x80][..], b"====////++++----____"] {
            let _ = decodings(input, &mut budget);
        }
    }
}
