//! Tables for decoding words: splicing, expansions, globs, substitutions, ANSI-C strings, braces.

use super::*;

#[test]
fn splicing_resolves_to_the_text_the_shell_passes_on() {
    let cases = [
        (r"\rm", "rm"),
        ("r''m", "rm"),
        (r#""r"m"#, "rm"),
        ("'rm'", "rm"),
        (r"$'\x72\x6d'", "rm"),
        (r"$'\162\155'", "rm"),
        (r"$'\u0072m'", "rm"),
        (r"r\m", "rm"),
        (r"hello\ world", "hello world"),
        (r#""a\nb""#, r"a\nb"),
        (r#""a\$b\"c""#, r#"a$b"c"#),
        ("'don'\\''t'", "don't"),
        ("~/.ssh", "~/.ssh"),
        ("~root/x", "~root/x"),
        ("-g\"*.py\"", "-g*.py"),
    ];
    for (raw, want) in cases {
        let w = decode(raw);
        assert_eq!(w.text, want, "{raw}");
        assert!(w.is_literal(), "{raw} should be literal: {w:?}");
    }
}

#[test]
fn expansions_are_dynamic_and_kept_as_written() {
    let cases = [
        ("$HOME", "$HOME"),
        ("\"${var}\"", "${var}"),
        ("$((1<<2))", "$((1<<2))"),
        ("$(date)", "$(date)"),
        ("`date`", "`date`"),
        ("$\"hello\"", "hello"),
        ("~+", "~+"),
        ("?(foo|bar)", "?(foo|bar)"),
        ("*(e:date:)", "*(e:date:)"),
        ("-${t}exec", "-${t}exec"),
    ];
    for (raw, want) in cases {
        let w = decode(raw);
        assert_eq!(w.text, want, "{raw}");
        assert!(w.dynamic, "{raw} should be dynamic");
    }
}

#[test]
fn unquoted_globs_and_braces_are_flagged_quoted_ones_are_not() {
    for raw in ["*", "*.txt", "file?", "[ab]", "{a,b}", "x{1..3}", "~/.ss*"] {
        assert!(decode(raw).glob, "{raw}");
    }
    for raw in ["'*'", "\"*.txt\"", r"\*", "{}", "a{b}c", "--format=%H", "[", "]", "a]"] {
        assert!(!decode(raw).glob, "{raw}");
    }
}

#[test]
fn substitutions_are_collected_from_every_hiding_place() {
    let cases = [
        ("$(rm -rf x)", vec!["rm -rf x"]),
        ("\"a$(b)c\"", vec!["b"]),
        ("`rm x`", vec!["rm x"]),
        ("${var:-$(rm x)}", vec!["rm x"]),
        ("$(( $(rm x) + 1 ))", vec!["rm x"]),
        ("'$(rm x)'", vec![]),
    ];
    for (raw, want) in cases {
        assert_eq!(decode(raw).substitutions, want, "{raw}");
    }
}

#[test]
fn heredoc_bodies_expand_only_when_asked() {
    let w = decode_heredoc("hello $(rm -rf /)\n");
    assert!(w.dynamic);
    assert_eq!(w.substitutions, vec!["rm -rf /"]);
    let plain = decode_heredoc("it's \"quoted\" *\n");
    assert!(plain.is_literal());
    assert_eq!(plain.text, "it's \"quoted\" *\n");
}

#[test]
fn ansi_c_escapes_decode_as_bash_5_2_does() {
    // Each expectation was checked against bash 5.2 (`printf %s $'…' | od -c`).
    let cases: &[(&str, &str)] = &[
        (r"a\tb\n", "a\tb\n"),
        (r"\x2d\x72\x66", "-rf"),
        (r"\cA", "\u{1}"),
        (r"\ca\cz", "\u{1}\u{1a}"),
        (r"\c?", "\u{7f}"),
        (r"\c\\", "\u{1c}"),
        (r"\c\x", "\u{1c}x"),
        (r"\c", "\\c"),
        (r"\q\", "\\q\\"),
        (r"\xZZ", "\\xZZ"),
        (r"\u", "\\u"),
        (r"\8", "\\8"),
        (r"\0101", "\u{8}1"),
        (r"\777", "\u{fffd}"),
        (r"\x{41}", "A"),
        (r"\x{41", "A"),
        (r"\x{4142}", "B"),
        (r"\U0000006d", "m"),
        (r"\E", "\u{1b}"),
        (r"a\'b", "a'b"),
        (r"rm\U80000000x", "rmx"),
        (r"rm\UFFFFFFFFx", "rmx"),
    ];
    for (body, want) in cases {
        assert_eq!(ansi_c(body).text, *want, "{body}");
    }
    assert!(ansi_c(r"\u00e9").inexact, "locale-dependent");
    assert!(ansi_c(r"\xff").inexact, "not UTF-8");
    assert!(!ansi_c(r"\x41").inexact);
}

#[test]
fn every_nul_spelling_cuts_the_ansi_c_string_there() {
    let spellings = [
        r"\0",
        r"\00",
        r"\000",
        r"\x0",
        r"\x00",
        r"\x{}",
        r"\x{0}",
        r"\x{100}",
        r"\u0000",
        r"\u0",
        r"\U00000000",
        r"\U0",
        r"\c@",
        r"\c`",
        r"\400",
        r"\0000",
    ];
    for nul in spellings {
        assert_eq!(ansi_c(&format!("rm{nul}x -rf")).text, "rm", "{nul}");
        assert_eq!(decode(&format!("$'rm{nul}'")).text, "rm", "{nul}");
        // Only that `$'…'` is cut: the rest of the word stays (`$'a\0b'c` is `ac`).
        assert_eq!(decode(&format!("$'r{nul}x'm")).text, "rm", "{nul}");
        assert_eq!(decode(&format!("$'r{nul}x'$'m'")).text, "rm", "{nul}");
    }
}

#[test]
fn ansi_c_inside_double_quotes_is_literal_and_gettext_is_dynamic() {
    let w = decode("\"$'rm\\0'\"");
    assert_eq!(w.text, "$'rm\\0'");
    let w = decode("$\"rm\"");
    assert_eq!(w.text, "rm");
    assert!(w.dynamic);
}

#[test]
fn command_words_are_brace_expanded_then_decoded() {
    let cases: &[(&str, &[&str])] = &[
        ("{-o,out.txt}", &["-o", "out.txt"]),
        ("{rm,-rf}", &["rm", "-rf"]),
        ("'{a,b}'", &["{a,b}"]),
        ("\\{a,b}", &["{a,b}"]),
        ("{$'\\x2c'}", &["{,}"]),
        ("{$'\\x2do',x}", &["-o", "x"]),
        ("{\"-o\",x}", &["-o", "x"]),
        ("-{,}", &["-", "-"]),
        ("{,}", &[]),
        ("{a}", &["{a}"]),
        ("{}", &["{}"]),
        ("x{1..3}", &["x1", "x2", "x3"]),
        ("{'',x}", &["", "x"]),
    ];
    for (raw, want) in cases {
        let words = expand(raw);
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(texts, *want, "{raw}");
        assert!(words.iter().all(Word::is_literal), "{raw}: {words:?}");
    }
    assert!(expand("{1..1000}")[0].dynamic);
}

#[test]
fn globs_that_could_name_an_option_are_told_apart() {
    for raw in ["*", "*.rs", "?x", "[ab]*", "-*", "''*", "{a,*}", "[!a]"] {
        assert!(expand(raw).iter().any(|w| w.option_glob), "{raw}");
    }
    for raw in ["src/*.rs", "./*", "a*", "'*'", "\\*", "x?", "[", "-x", ".*", "{a,b}*", "~/*"] {
        assert!(expand(raw).iter().all(|w| !w.option_glob), "{raw}");
    }
}

proptest::proptest! {
    /// The plain-word shortcut is a shortcut only: the shell's word parser reads every plain
    /// word as the same literal, in both brace modes.
    #[test]
    fn plain_words_decode_as_the_word_parser_reads_them(raw in "[A-Za-z0-9_./:=+,@%-]{1,16}") {
        proptest::prop_assert!(is_plain(&raw));
        for braces in [Braces::Flag, Braces::Expanded] {
            proptest::prop_assert_eq!(decode_parsed(&raw, braces), Word::literal(&raw));
        }
    }
}
