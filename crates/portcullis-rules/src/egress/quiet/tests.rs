//! The pre-filter is a proof: wherever it says "quiet", the full scan finds nothing — over the
//! scanner's own test tables (every string literal of its test files), the development corpora,
//! mutations of both that take away the bytes the filter keys on, and random text.

use std::ops::ControlFlow;

use proptest::prelude::*;
use serde_json::{json, Value};

use super::super::scan::{read, walk, Found};
use super::quiet;

/// Everything the full scan (no pre-filter) finds in `s`.
fn found(s: &str) -> Vec<Found> {
    let mut out = Vec::new();
    let _ = read::<()>(s, &String::new, &mut |f: Found| {
        out.push(f);
        ControlFlow::Continue(())
    });
    out
}

fn holds(s: &str) -> Result<(), String> {
    match quiet(s) {
        true => match found(s).as_slice() {
            [] => Ok(()),
            f => Err(format!("quiet({s:?}) but the scan found {f:?}")),
        },
        // The walk over arguments skips only what the filter proves quiet.
        false if s.len() < 64 => {
            let mut n = 0;
            let _ = walk::<()>(&json!({ s: s, "list": [s] }), |_| {
                n += 1;
                ControlFlow::Continue(())
            });
            match (n, found(s).len()) {
                (0, 0) => Ok(()),
                (0, f) => Err(format!("the walk skipped {s:?}, in which the scan finds {f}")),
                _ => Ok(()),
            }
        }
        false => Ok(()),
    }
}

/// The string literals of the scanner's test files (plain and raw), unescaped as far as a seed
/// needs: the spellings every reading was written against.
fn seeds() -> Vec<String> {
    let files = [
        include_str!("../tests.rs"),
        include_str!("../spelling_tests.rs"),
        include_str!("../unescape.rs"),
        include_str!("../special.rs"),
        include_str!("../../destination/tests.rs"),
        include_str!("../../destination/engine_tests.rs"),
    ];
    let mut out = Vec::new();
    for f in files {
        literals(f, &mut out);
    }
    out
}

fn literals(src: &str, out: &mut Vec<String>) {
    let b = src.as_bytes();
    let mut i = 0;
    while i < b.len() {
        // Raw: r"…", r#"…"#.
        if b[i] == b'r' && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#')) {
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            if b.get(i + 1 + hashes) == Some(&b'"') {
                let start = i + 2 + hashes;
                let close = format!("\"{}", "#".repeat(hashes));
                if let Some(len) = src[start..].find(&close) {
                    out.push(src[start..start + len].to_owned());
                    i = start + len + close.len();
                    continue;
                }
            }
        }
        if b[i] == b'"' {
            let mut s = String::new();
            let mut chars = src[i + 1..].char_indices();
            let mut end = None;
            while let Some((at, c)) = chars.next() {
                match c {
                    '"' => {
                        end = Some(i + 1 + at + 1);
                        break;
                    }
                    '\\' => match chars.next().map(|(_, e)| e) {
                        Some('n') => s.push('\n'),
                        Some('t') => s.push('\t'),
                        Some('u') => {
                            let hex: String =
                                chars.by_ref().map(|(_, c)| c).take_while(|&c| c != '}').collect();
                            let code = u32::from_str_radix(hex.trim_start_matches('{'), 16).ok();
                            s.extend(code.and_then(char::from_u32));
                        }
                        Some(other) => s.push(other),
                        None => {}
                    },
                    c => s.push(c),
                }
            }
            match end {
                Some(e) => {
                    out.push(s);
                    i = e;
                }
                None => break,
            }
            continue;
        }
        i += 1;
    }
}

/// Every string of the development corpora's calls (keys included).
fn corpus_strings() -> Vec<String> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
    let mut out = Vec::new();
    for file in ["exfil.dev.jsonl", "exfil_shell.dev.jsonl", "injection.dev.jsonl"] {
        let Ok(all) = std::fs::read_to_string(dir.join(file)) else { continue };
        for v in all.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()) {
            let mut stack = vec![v];
            while let Some(v) = stack.pop() {
                match v {
                    Value::String(s) => out.push(s),
                    Value::Array(a) => stack.extend(a),
                    Value::Object(m) => {
                        for (k, v) in m {
                            out.push(k);
                            stack.push(v);
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

/// `s` without the marks in `mask` (bit i: the i-th of `:@[.\%`), case flipped if asked, and
/// each word of it as well: the spellings one step from the filter's keys.
fn mutations(s: &str, mask: u8, flip: bool) -> Vec<String> {
    let marks = b":@[.\\%";
    let kept: String = s
        .chars()
        .filter(|c| !marks.iter().enumerate().any(|(i, m)| mask & (1 << i) != 0 && *c == char::from(*m)))
        .map(|c| match flip {
            true if c.is_ascii_lowercase() => c.to_ascii_uppercase(),
            true => c.to_ascii_lowercase(),
            false => c,
        })
        .collect();
    let mut out: Vec<String> = kept.split(char::is_whitespace).map(str::to_owned).collect();
    // And its runs of letters, digits and `-` (a host or number inside a URL, alone).
    out.extend(kept.split(|c: char| !c.is_ascii_alphanumeric() && c != '-').map(str::to_owned));
    out.push(kept);
    out
}

#[test]
fn the_filter_is_quiet_for_plain_words_and_loud_for_every_reading_the_scan_knows() {
    for s in ["hi", "message", "hello world", "Quarterly report for the team", "x/y", "", "  ", "a-b_c"] {
        assert!(quiet(s), "{s:?} should be quiet");
    }
    let loud = [
        "localhost",
        "LocalHost/x",
        " metadata ",
        "instance-data",
        "0x7f000001",
        "2130706433",
        "a.b",
        "x:y",
        "a@b",
        "[::1]",
        r"\u0068ttp",
        "caf\u{e9}",
        "127\u{3002}0\u{3002}0\u{3002}1",
        "DE89370400440532013000",
        "loc%61lhost",
    ];
    for s in loud {
        assert!(!quiet(s), "{s:?} should be read in full");
    }
}

#[test]
fn wherever_the_filter_says_quiet_the_scan_finds_nothing_in_the_tables_and_corpora() {
    let seeds = seeds();
    assert!(seeds.len() > 200, "the scanner's tables were not read: {}", seeds.len());
    let corpus = corpus_strings();
    let mut checked = 0;
    for s in seeds.iter().chain(&corpus) {
        // No mark taken away, each one alone, and all of them.
        for mask in [0u8, 1, 2, 4, 8, 16, 32, 63] {
            for flip in [false, true] {
                for m in mutations(s, mask, flip) {
                    holds(&m).unwrap_or_else(|e| panic!("{e}"));
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 10_000, "{checked}");
}

fn seed_strategy() -> impl Strategy<Value = String> {
    let seeds = seeds();
    (0..seeds.len()).prop_map(move |i| seeds[i].clone())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn no_random_text_is_called_quiet_where_the_scan_finds_something(
        s in prop_oneof![
            "\\PC{0,40}",
            "[a-zA-Z0-9 :/.@\\[\\]%\\\\_\\-\u{3002}\u{ff0e}\u{ff61}]{0,40}",
            "[a-zA-Z0-9 /_-]{0,24}",
            "(localhost|metadata|instance-data|LOCALHOST|Metadata|0x7f|127|169|fd00|DE89|ec2)[a-z0-9/_ -]{0,12}",
            "[0-9][0-9a-fA-FxX]{0,10}(/[a-z]{0,3})?",
            "(?i:localhost|metadata|instance-data)(/[a-z]{0,3})?",
            proptest::collection::vec(any::<u8>(), 0..40).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        ]
    ) {
        prop_assert!(holds(&s).is_ok(), "{}", holds(&s).unwrap_err());
    }

    #[test]
    fn no_edit_of_a_tested_spelling_is_called_quiet_where_the_scan_finds_something(
        seed in seed_strategy(),
        mask in 0..64u8,
        flip in any::<bool>(),
        cut in any::<(usize, usize)>(),
        insert in "[a-zA-Z0-9 /_-]{0,4}",
    ) {
        for m in mutations(&seed, mask, flip) {
            let chars: Vec<char> = m.chars().collect();
            let a = cut.0 % (chars.len() + 1);
            let b = a + cut.1 % (chars.len() - a + 1);
            let edited: String = chars[..a].iter().chain(insert.chars().collect::<Vec<_>>().iter()).chain(&chars[b..]).collect();
            prop_assert!(holds(&edited).is_ok(), "{}", holds(&edited).unwrap_err());
            let window: String = chars[a..b].iter().collect();
            prop_assert!(holds(&window).is_ok(), "{}", holds(&window).unwrap_err());
        }
    }
}
