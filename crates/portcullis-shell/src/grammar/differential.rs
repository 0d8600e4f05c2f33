//! The tables checked against the installed programs: every long-option abbreviation a table
//! accepts, refuses as ambiguous or leaves unknown, every short letter, and the arity of every
//! long option, spelled to the real program in a scratch directory with `/dev/null` as input.
//! The program's getopt diagnostics (`LC_ALL=C`) say what it made of the spelling. A program
//! that is not installed is skipped (and reported).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::getopt::resolve;
use super::spec::{Arity, Grammar, Longs};
use super::{coreutils, files, grep, listing, make, net, printing, scripts, shell, tar, util, Unread};

/// What a program made of one spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Accepted,
    Unknown,
    Ambiguous,
    /// `--flag=x` refused: the option takes no value.
    NoValueAllowed,
    /// The option wants a value that was not given.
    ValueRequired,
}

/// The installed programs' GNU grammars, with the short letters left out of them on purpose,
/// which are not spelled to the program: `date -s` sets the clock (no role says that), sed's
/// undocumented `-V`.
const PROGRAMS: &[(&str, &Grammar, &[&str])] = &[
    ("md5sum", &printing::DIGEST, &[]),
    ("sha256sum", &printing::DIGEST, &[]),
    ("b2sum", &printing::B2SUM, &[]),
    ("cksum", &printing::CKSUM, &[]),
    ("sum", &printing::SUM, &[]),
    ("od", &printing::OD, &[]),
    ("pr", &printing::PR, &[]),
    ("fmt", &printing::FMT, &[]),
    ("unexpand", &printing::UNEXPAND, &[]),
    // `seq -5 1`: negative numbers, which the table refuses as options.
    ("seq", &printing::SEQ, &["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]),
    ("df", &printing::DF, &[]),
    ("shuf", &printing::SHUF, &[]),
    ("split", &printing::SPLIT, &[]),
    ("join", &printing::JOIN, &[]),
    ("tty", &printing::TTY, &[]),
    ("groups", &shell::PLAIN, &[]),
    ("uptime", &printing::UPTIME, &[]),
    ("cmp", &util::CMP, &[]),
    ("rev", &util::REV, &[]),
    ("strings", &util::STRINGS, &[]),
    ("hexdump", &util::HEXDUMP, &[]),
    ("column", &util::COLUMN, &[]),
    ("file", &util::FILE, &[]),
    ("rm", &files::RM, &[]),
    ("cp", &files::CP, &[]),
    ("mv", &files::MV, &[]),
    ("ln", &files::LN, &[]),
    ("mkdir", &files::MKDIR, &[]),
    ("rmdir", &files::RMDIR, &[]),
    ("touch", &files::TOUCH, &[]),
    // chmod takes mode letters as options (`chmod -w f`), which are not read.
    (
        "chmod",
        &files::CHMOD,
        &["r", "w", "x", "X", "s", "t", "u", "g", "o", "a", "0", "1", "2", "3", "4", "5", "6", "7"],
    ),
    ("chown", &files::CHOWN, &[]),
    ("chgrp", &files::CHGRP, &[]),
    ("tee", &files::TEE, &[]),
    ("truncate", &files::TRUNCATE, &[]),
    ("mktemp", &files::MKTEMP, &[]),
    ("install", &files::INSTALL, &[]),
    ("cat", &coreutils::CAT, &[]),
    ("head", &coreutils::HEAD, &[]),
    ("tail", &coreutils::TAIL, &[]),
    ("wc", &coreutils::WC, &[]),
    ("sort", &coreutils::SORT, &[]),
    ("uniq", &coreutils::UNIQ, &[]),
    ("base64", &coreutils::BASE64, &[]),
    ("base32", &coreutils::BASE64, &[]),
    ("basenc", &coreutils::BASENC, &[]),
    ("cut", &coreutils::CUT, &[]),
    ("tac", &coreutils::TAC, &[]),
    ("paste", &coreutils::PASTE, &[]),
    ("nl", &coreutils::NL, &[]),
    ("fold", &coreutils::FOLD, &[]),
    ("expand", &coreutils::EXPAND, &[]),
    ("comm", &coreutils::COMM, &[]),
    ("tr", &coreutils::TR, &[]),
    ("basename", &coreutils::BASENAME, &[]),
    ("dirname", &coreutils::DIRNAME, &[]),
    ("realpath", &coreutils::REALPATH, &[]),
    ("readlink", &coreutils::READLINK, &[]),
    ("ls", &listing::LS, &[]),
    ("du", &listing::DU, &[]),
    ("stat", &listing::STAT, &[]),
    ("date", &listing::DATE, &["s"]),
    ("grep", &grep::GREP, &[]),
    ("diff", &grep::DIFF, &[]),
    ("sed", &scripts::SED, &["V"]),
    ("uname", &shell::UNAME, &[]),
    ("id", &shell::ID, &[]),
    ("nproc", &shell::NPROC, &[]),
    ("sleep", &shell::PLAIN, &[]),
];

/// Partial tables (GNU rules over a subset of the program's options): an abbreviation the table
/// resolves may be ambiguous to the program, which has more options, and letters the table does
/// not list may exist; every option listed must still exist, with the arity listed.
const PARTIAL: &[(&str, &Grammar, &[&str])] = &[
    // `wget -b` would go to the background.
    ("wget", &net::WGET, &["b"]),
    ("tar", &tar::TAR, &[]),
    ("make", &make::MAKE, &[]),
    // hostname -F/-b set the host name; the table leaves out --file and --boot.
    ("hostname", &util::HOSTNAME, &["F", "b"]),
];

/// Run `program word` and classify its diagnostics. A program still running after a second
/// (`tail -f` on standard input) accepted the spelling.
fn run(program: &str, word: &str, dir: &Path) -> Verdict {
    let child = Command::new(program)
        .arg(word)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .env("TMPDIR", dir)
        .env("HOME", dir)
        .env_remove("POSIXLY_CORRECT")
        .env_remove("TAPE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        return Verdict::Unknown;
    };
    let started = Instant::now();
    while child.try_wait().ok().flatten().is_none() {
        if started.elapsed() > Duration::from_secs(1) {
            let _ = child.kill();
            let _ = child.wait();
            return Verdict::Accepted;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
    }
    let first = stderr.lines().next().unwrap_or_default();
    if first.contains("unrecognized option") || first.contains("invalid option") {
        Verdict::Unknown
    } else if first.contains("is ambiguous") {
        Verdict::Ambiguous
    } else if first.contains("doesn't allow an argument") {
        Verdict::NoValueAllowed
    } else if first.contains("requires an argument") {
        Verdict::ValueRequired
    } else {
        Verdict::Accepted
    }
}

fn installed(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// What [`super::read`] predicts the program makes of `word` alone.
fn predicted(program: &str, word: &str) -> Verdict {
    match super::read(program, &[word.to_string()]) {
        Ok(_) | Err(Unread::Unplaced(_)) => Verdict::Accepted,
        Err(Unread::Ambiguous(_)) => Verdict::Ambiguous,
        Err(Unread::UnexpectedValue(_)) => Verdict::NoValueAllowed,
        Err(Unread::MissingValue(_)) => Verdict::ValueRequired,
        Err(_) => Verdict::Unknown,
    }
}

/// Every spelling to try on `grammar`: each prefix of each long option (with `=x` when it
/// takes a value), each long option with a value it must not have or without one it needs, a
/// misspelling of each, and every short letter except those `omitted`.
fn spellings(grammar: &Grammar, omitted: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for opt in grammar.options.iter().filter(|o| !o.long.is_empty()) {
        for len in 1..=opt.long.len() {
            let given = &opt.long[..len];
            match resolve(grammar.options, Longs::Gnu, given) {
                Ok(hit) if matches!(hit.arity, Arity::Required(_)) => out.push(format!("--{given}=x")),
                _ => out.push(format!("--{given}")),
            }
        }
        match opt.arity {
            Arity::Flag => out.push(format!("--{}=x", opt.long)),
            Arity::Required(_) => out.push(format!("--{}", opt.long)),
            _ => {}
        }
        out.push(format!("--{}zz", opt.long));
    }
    let letters = ('a'..='z').chain('A'..='Z').chain('0'..='9');
    out.extend(letters.filter(|c| !omitted.contains(&c.to_string().as_str())).map(|c| format!("-{c}")));
    out
}

#[test]
fn every_spelling_the_tables_predict_is_what_the_installed_programs_do() {
    let dir = std::env::temp_dir().join(format!("portcullis-grammar-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let (mut checked, mut skipped) = (0, Vec::new());
    let mut disagreements = Vec::new();
    let tables = PROGRAMS.iter().map(|p| (p, false)).chain(PARTIAL.iter().map(|p| (p, true)));
    for ((program, grammar, omitted), partial) in tables {
        if !installed(program) {
            skipped.push(*program);
            continue;
        }
        for word in spellings(grammar, omitted) {
            checked += 1;
            let predicted = predicted(program, &word);
            let actual = run(program, &word, &dir);
            let tolerated = partial
                && matches!(
                    (predicted, actual),
                    (Verdict::Accepted, Verdict::Ambiguous)
                        | (Verdict::Unknown, _)
                        | (Verdict::Ambiguous, Verdict::Ambiguous)
                );
            if actual != predicted && !tolerated {
                disagreements.push(format!("{program} {word}: table {predicted:?}, program {actual:?}"));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "differential: {checked} spellings checked, {} disagreements, skipped {skipped:?}",
        disagreements.len()
    );
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// curl is not getopt: each long option the table lists is spelled exactly (with a value when it
/// takes one, and no URL, so nothing is fetched) and must not be "unknown" to the installed curl.
/// Options whose value is a destination are left out: curl would connect.
#[test]
fn the_installed_curl_knows_every_option_the_table_lists() {
    if !installed("curl") {
        eprintln!("curl differential: curl not installed, skipped");
        return;
    }
    let dir = std::env::temp_dir().join(format!("portcullis-grammar-curl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let control =
        Command::new("curl").arg("--portcullis-frob").current_dir(&dir).stdin(Stdio::null()).output();
    let err = control.map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).unwrap_or_default();
    assert!(err.contains("is unknown"), "curl control not refused: {err}");
    let (mut checked, mut unknown) = (0, Vec::new());
    for opt in net::CURL.options {
        let mut words = Vec::new();
        match opt.arity {
            Arity::Required(super::Role::Connects) => continue,
            Arity::Required(_) => {
                words.extend([format!("--{}", opt.long), "x".to_string()]);
                if let Some(c) = opt.short {
                    words.extend([format!("-{c}"), "x".to_string()]);
                }
            }
            _ => {
                words.push(format!("--{}", opt.long));
                words.extend(opt.short.map(|c| format!("-{c}")));
            }
        }
        for pair in words.chunks(if matches!(opt.arity, Arity::Required(_)) { 2 } else { 1 }) {
            checked += 1;
            let out = Command::new("curl")
                .args(pair)
                .current_dir(&dir)
                .env("HOME", &dir)
                .env("LC_ALL", "C")
                .stdin(Stdio::null())
                .output();
            let err = out.map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).unwrap_or_default();
            if err.contains("is unknown") {
                unknown.push(pair.join(" "));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("curl differential: {checked} spellings checked, {} unknown to curl", unknown.len());
    assert!(unknown.is_empty(), "{}", unknown.join("\n"));
}

/// jq is not getopt either: each option the table lists, long and short, with values of its
/// arity, must not be an "Unknown option" to the installed jq (`-n .` as the program).
#[test]
fn the_installed_jq_knows_every_option_the_table_lists() {
    if !installed("jq") {
        eprintln!("jq differential: jq not installed, skipped");
        return;
    }
    let control = Command::new("jq").args(["--portcullis-frob", "-n", "."]).stdin(Stdio::null()).output();
    let err = control.map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).unwrap_or_default();
    assert!(err.contains("Unknown option"), "jq control not refused: {err}");
    let (mut checked, mut unknown) = (0, Vec::new());
    for opt in scripts::JQ.options {
        let values: &[&str] = match opt.arity {
            Arity::Pair(..) => &["a", "/dev/null"],
            Arity::Required(_) => &["1"],
            _ => &[],
        };
        let spellings =
            [(!opt.long.is_empty()).then(|| format!("--{}", opt.long)), opt.short.map(|c| format!("-{c}"))];
        for word in spellings.into_iter().flatten() {
            checked += 1;
            let out =
                Command::new("jq").arg(&word).args(values).args(["-n", "."]).stdin(Stdio::null()).output();
            let err = out.map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).unwrap_or_default();
            if err.contains("Unknown option") || err.contains("Unknown arguments") {
                unknown.push(word);
            }
        }
    }
    eprintln!("jq differential: {checked} spellings checked, {} unknown to jq", unknown.len());
    assert!(unknown.is_empty(), "{}", unknown.join("\n"));
}
