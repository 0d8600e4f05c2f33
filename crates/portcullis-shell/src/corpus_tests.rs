//! The development corpora: no `not_readonly` or dangerous line may ever be proven read-only,
//! and the read-only recall is printed (`cargo test --lib shell::corpus -- --nocapture`).
//!
//! The files are read from `../shared/corpus/` beside the repository when present, else from the
//! copies in `tests/corpus/` (see the README there for their sources and licences).

use super::{analyze, read_only, ReadOnly};
use portcullis_corpus::{read as corpus, tsv_rows as rows, unescape};

#[test]
fn unescape_reverses_the_tsv_escapes() {
    assert_eq!(unescape(r"a\nb\tc\\d\\n"), "a\nb\tc\\d\\n");
}

#[test]
fn no_mutating_or_dangerous_line_is_ever_proven_read_only() {
    let readonly = rows(&corpus("shell-readonly.dev.tsv"));
    let dangerous = rows(&corpus("shell-dangerous.dev.tsv"));
    // The committed copies hold fewer rows (no GPL GTFOBins data; see tests/corpus/README.md).
    assert!(readonly.len() > 550 && dangerous.len() > 150, "corpus incomplete");
    let mut failures = Vec::new();
    for (command, label) in readonly.iter().filter(|(_, l)| l == "not_readonly") {
        if read_only(&analyze(command)) == ReadOnly::Proven {
            failures.push(format!("{label}: {command:?}"));
        }
    }
    for (command, category) in &dangerous {
        if read_only(&analyze(command)) == ReadOnly::Proven {
            failures.push(format!("{category}: {command:?}"));
        }
    }
    assert!(failures.is_empty(), "proven read-only:\n{}", failures.join("\n"));
}

#[test]
fn read_only_recall_on_the_corpus() {
    let readonly = rows(&corpus("shell-readonly.dev.tsv"));
    let positives: Vec<&String> = readonly.iter().filter(|(_, l)| l == "readonly").map(|(c, _)| c).collect();
    let mut missed = Vec::new();
    for command in &positives {
        if let ReadOnly::NotProven(why) = read_only(&analyze(command)) {
            missed.push(format!("  {command:?}: {why}"));
        }
    }
    let proven = positives.len() - missed.len();
    println!(
        "shell read-only recall: {proven}/{} readonly rows proven ({:.1}%)",
        positives.len(),
        100.0 * proven as f64 / positives.len().max(1) as f64
    );
    if !missed.is_empty() {
        println!("not proven:\n{}", missed.join("\n"));
    }
    assert!(!positives.is_empty());
}

#[test]
fn every_dangerous_line_analyses_without_panicking_and_shows_a_command() {
    for (command, _) in rows(&corpus("shell-dangerous.dev.tsv")) {
        let a = analyze(&command);
        assert!(!a.commands.is_empty() || a.parse_error.is_some(), "{command:?} produced nothing");
    }
}
