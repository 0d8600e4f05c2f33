//! Text an agent chose, made inert for a terminal: every character that could steer the terminal
//! or hide, reorder or forge what the operator reads is shown as an escape (`\u{1b}`), never raw.
//!
//! Shown escaped: the controls (C0, DEL, C1: ESC opens every terminal sequence, `\r` and `\n`
//! forge lines), the line and paragraph separators (U+2028, U+2029), every format character
//! (Unicode's `Cf`: the bidi embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069,
//! the marks U+200E/U+200F/U+061C, zero-width characters, U+FEFF, the tag characters…), the
//! invisible fillers and variation selectors that render as nothing. Everything else is printed as
//! it is: names and sentences in any script stay readable, a rule's `\*` reads as written.
//!
//! The table is Unicode 15's `Cc`, `Cf`, `Zl` and `Zp` plus the invisibles; one function,
//! [`inert`], for every printer (`explain`, `approvals list`, the allow-always preview).

use std::borrow::Cow;
use std::fmt::Write as _;

/// Inclusive ranges of the characters shown escaped (besides `\`), in order.
const ESCAPED: &[(u32, u32)] = &[
    (0x00, 0x1F),       // C0 controls
    (0x7F, 0x9F),       // DEL, C1 controls
    (0xAD, 0xAD),       // soft hyphen
    (0x34F, 0x34F),     // combining grapheme joiner (invisible)
    (0x600, 0x605),     // Arabic number signs
    (0x61C, 0x61C),     // Arabic letter mark
    (0x6DD, 0x6DD),     // Arabic end of ayah
    (0x70F, 0x70F),     // Syriac abbreviation mark
    (0x890, 0x891),     // Arabic pound and piastre marks above
    (0x8E2, 0x8E2),     // Arabic disputed end of ayah
    (0x115F, 0x1160),   // Hangul fillers (invisible)
    (0x17B4, 0x17B5),   // Khmer inherent vowels (invisible)
    (0x180B, 0x180F),   // Mongolian variation selectors, vowel separator
    (0x200B, 0x200F),   // zero-width space, joiners, LRM, RLM
    (0x2028, 0x202E),   // line and paragraph separators, bidi embeddings and overrides
    (0x2060, 0x206F),   // word joiner, invisible operators, bidi isolates, deprecated formats
    (0x3164, 0x3164),   // Hangul filler (invisible)
    (0xFE00, 0xFE0F),   // variation selectors
    (0xFEFF, 0xFEFF),   // zero-width no-break space (BOM)
    (0xFFA0, 0xFFA0),   // halfwidth Hangul filler (invisible)
    (0xFFF9, 0xFFFB),   // interlinear annotation
    (0x110BD, 0x110BD), // Kaithi number sign
    (0x110CD, 0x110CD), // Kaithi number sign above
    (0x13430, 0x1343F), // Egyptian hieroglyph format controls
    (0x1BCA0, 0x1BCA3), // shorthand format controls
    (0x1D173, 0x1D17A), // musical symbol formats
    (0xE0000, 0xE0FFF), // tags and variation selectors supplement
];

/// Whether `c` is shown escaped by [`inert`].
pub fn escaped(c: char) -> bool {
    let c = c as u32;
    let at = ESCAPED.partition_point(|&(_, hi)| hi < c);
    ESCAPED.get(at).is_some_and(|&(lo, _)| lo <= c)
}

/// `text` as a terminal may print it: every [`escaped`] character written `\u{…}` (its code
/// point in hex); borrowed when nothing needed escaping. A backslash is printed as it is (a
/// rule's `\*` must read as written), so text may spell an escape: it can only show one.
pub fn inert(text: &str) -> Cow<'_, str> {
    if !text.chars().any(escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match escaped(c) {
            true => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            false => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// JSON text as a terminal may print it, still JSON: inside a string every [`escaped`] character
/// is written as JSON's `\uXXXX` (a surrogate pair above U+FFFF); outside one, JSON's own
/// whitespace (the line breaks of pretty-printed JSON) is kept and anything else escaped too.
pub fn inert_json(json: &str) -> Cow<'_, str> {
    if !json.chars().any(escaped) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 8);
    let (mut in_string, mut after_backslash) = (false, false);
    for c in json.chars() {
        let structural = !in_string && matches!(c, '\n' | '\r' | '\t');
        match c {
            _ if after_backslash => after_backslash = false,
            '\\' if in_string => after_backslash = true,
            '"' => in_string = !in_string,
            _ => {}
        }
        if structural || !escaped(c) {
            out.push(c);
            continue;
        }
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            let _ = write!(out, "\\u{unit:04x}");
        }
    }
    Cow::Owned(out)
}

/// Multi-line text the server laid out (a diff): each line [`inert`], the line breaks kept.
pub fn inert_lines(text: &str) -> String {
    text.split('\n').map(inert).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn what_can_steer_a_terminal_or_hide_text_is_shown_escaped_and_the_rest_as_it_is() {
        let cases = [
            ("write_note", "write_note"),
            ("naïve — 書く Ωμέγα", "naïve — 書く Ωμέγα"),
            ("a\u{1b}]8;;https://evil.example\u{7}ok", "a\\u{1b}]8;;https://evil.example\\u{7}ok"),
            ("x\u{1b}[2K\r\n  rule: forged", "x\\u{1b}[2K\\u{d}\\u{a}  rule: forged"),
            ("write_\u{202e}dda", "write_\\u{202e}dda"),
            ("a\u{2066}b\u{2069}c\u{200e}d\u{61c}", "a\\u{2066}b\\u{2069}c\\u{200e}d\\u{61c}"),
            ("zero\u{200b}width\u{feff}", "zero\\u{200b}width\\u{feff}"),
            ("line\u{2028}para\u{2029}", "line\\u{2028}para\\u{2029}"),
            ("del\u{7f}c1\u{9b}31m", "del\\u{7f}c1\\u{9b}31m"),
            ("tag\u{e0041}\u{e007f}", "tag\\u{e0041}\\u{e007f}"),
            ("vs\u{fe0f}filler\u{3164}", "vs\\u{fe0f}filler\\u{3164}"),
            ("tab\there", "tab\\u{9}here"),
            ("a\\*b\\u{1b}", "a\\*b\\u{1b}"),
            ("", ""),
        ];
        for (text, want) in cases {
            assert_eq!(inert(text), want, "{text:?}");
        }
        assert!(matches!(inert("plain — text"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_diff_keeps_its_lines_and_loses_every_other_control() {
        let diff = "--- a\n+++ b\n+  - \"mcp__py__write_\u{202e}dda\"\r";
        assert_eq!(inert_lines(diff), "--- a\n+++ b\n+  - \"mcp__py__write_\\u{202e}dda\"\\u{d}");
    }

    #[test]
    fn the_table_is_ordered_and_holds_every_control_and_bidi_character() {
        assert!(ESCAPED.windows(2).all(|w| w[0].1 < w[1].0) && ESCAPED.iter().all(|(lo, hi)| lo <= hi));
        let listed = (0..=0x1F).chain(0x7F..=0x9F).chain(0x202A..=0x202E).chain(0x2066..=0x2069);
        for c in listed.chain([0x200E, 0x200F, 0x61C, 0x2028, 0x2029, 0xFEFF]).filter_map(char::from_u32) {
            assert!(escaped(c), "{c:?}");
        }
        for c in ['a', ' ', '~', '—', 'é', '\u{a0}', '書', '\u{fffd}'] {
            assert!(!escaped(c), "{c:?}");
        }
    }

    /// Every `Cc`, `Cf`, `Zl` and `Zp` character of the Unicode database Python ships (a second
    /// reading of the table, from a real one).
    #[test]
    fn every_character_pythons_unicode_database_calls_control_format_or_separator_is_escaped() {
        let script = "import unicodedata,sys\nfor i in range(0x110000):\n    \
                      if unicodedata.category(chr(i)) in ('Cc','Cf','Zl','Zp'): print(i)";
        let Ok(out) = std::process::Command::new("python3").args(["-c", script]).output() else {
            eprintln!("no python3: the database cross-check is skipped");
            return;
        };
        let listed: Vec<u32> =
            String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.parse().ok()).collect();
        assert!(listed.len() > 200, "python3 listed {} characters", listed.len());
        for c in listed.into_iter().filter_map(char::from_u32) {
            assert!(escaped(c), "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn json_stays_json_that_reads_back_as_the_same_value() {
        let v = serde_json::json!({"tool": "write_\u{202e}dda\u{9b}", "x": "a\\b\n\u{e0041}"});
        let text = serde_json::to_string(&v).unwrap();
        let shown = inert_json(&text);
        assert_eq!(shown, r#"{"tool":"write_\u202edda\u009b","x":"a\\b\n\udb40\udc41"}"#);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&shown).unwrap(), v);
        let pretty = serde_json::to_string_pretty(&v).unwrap();
        let shown = inert_json(&pretty);
        assert_eq!(shown.lines().count(), pretty.lines().count(), "{shown}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&shown).unwrap(), v);
    }

    proptest! {
        #[test]
        fn json_output_holds_no_control_or_format_character_and_reads_back(text in any::<String>()) {
            let json = serde_json::to_string_pretty(&serde_json::json!({ "k": text, "l": [text] })).unwrap();
            let shown = inert_json(&json);
            prop_assert!(!shown.chars().any(|c| c != '\n' && (c.is_control() || escaped(c))), "{shown:?}");
            let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
            prop_assert_eq!(back["k"].as_str(), Some(text.as_str()));
        }

        #[test]
        fn no_output_holds_a_control_format_or_separator_character(text in any::<String>()) {
            let out = inert(&text);
            prop_assert!(!out.chars().any(|c| c.is_control() || escaped(c)), "{out:?}");
            // Nothing is lost: every escaped character is there as its escape, the rest as it was.
            prop_assert_eq!(unescape(&out), unescape(&text));
            if !text.chars().any(escaped) {
                prop_assert_eq!(out.as_ref(), text.as_str());
            }
        }
    }

    /// `s` with every `\u{…}` escape read back as its character (the text's own spellings too).
    fn unescape(s: &str) -> String {
        let mut out = String::new();
        let mut rest = s;
        while let Some(at) = rest.find("\\u{") {
            out.push_str(&rest[..at]);
            let tail = &rest[at + 3..];
            let read = tail.find('}').and_then(|end| {
                let c = u32::from_str_radix(&tail[..end], 16).ok().and_then(char::from_u32)?;
                Some((c, end))
            });
            match read {
                Some((c, end)) => {
                    out.push(c);
                    rest = &tail[end + 1..];
                }
                None => {
                    out.push_str("\\u{");
                    rest = tail;
                }
            }
        }
        out.push_str(rest);
        out
    }
}
