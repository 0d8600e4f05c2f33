//! The development corpora, scanned as the proxy would scan them: tool results inbound, tool-call
//! arguments outbound. Recall and false-positive rates are printed per file and per category
//! (`cargo test --lib checker::detect::corpus -- --nocapture`), and floors are asserted.
//!
//! The injection floors are the figures measured when they were last raised (regression floors,
//! with no false positive allowed): explicit injections (AgentDojo's templates) are nearly all
//! caught; of BIPIA's attacks the ones that speak to the model about its own answer ("render your
//! response in Base32", "integrate a sentence in your reply that promotes…") are caught, while
//! plain task requests ("Summarise the 2020 climate report") and code offered for "your
//! implementation" are left to a model; the exfiltration corpora are semantic (an e-mail to the
//! wrong address) and get no recall floor at all — only the promise not to fire on benign calls.
//!
//! Injection figures are also printed per half — rows on even and on odd line numbers — because
//! the phrases for answer tampering were designed on the even rows only: the odd rows are the
//! held-out check that they model the class rather than the file.
//!
//! Files are read from `../shared/corpus/` when present, else from the copies in
//! `tests/corpus/` (README there); if neither exists the test prints a notice and passes. The
//! `meta` field is never read: the row type below does not have it.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{scan, Category, Direction, Finding};

/// A corpus row, minus `meta` (which can reveal the label).
#[derive(Deserialize)]
struct Row {
    text: Option<String>,
    tool: Option<String>,
    args: Option<serde_json::Value>,
    label: String,
}

/// The committed copies make every file present; `Option` keeps the callers' skip paths simple.
fn corpus(name: &str) -> Option<String> {
    Some(portcullis_corpus::read(name))
}

fn rows(name: &str) -> Option<Vec<Row>> {
    let text = corpus(name)?;
    Some(
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{name}: {e}: {l}")))
            .collect(),
    )
}

/// Counts for one file: rows per label, and rows with a finding, overall and per category.
#[derive(Default)]
struct Tally {
    rows: BTreeMap<String, usize>,
    flagged: BTreeMap<String, usize>,
    by_category: BTreeMap<(String, &'static str), usize>,
}

impl Tally {
    fn add(&mut self, label: &str, findings: &[Finding], counts: impl Fn(&Finding) -> bool) {
        *self.rows.entry(label.to_string()).or_default() += 1;
        if findings.iter().any(&counts) {
            *self.flagged.entry(label.to_string()).or_default() += 1;
        }
        let mut categories: Vec<Category> = findings.iter().map(|f| f.category).collect();
        categories.sort();
        categories.dedup();
        for category in categories {
            *self.by_category.entry((label.to_string(), category.as_str())).or_default() += 1;
        }
    }

    fn rate(&self, label: &str) -> f64 {
        let rows = self.rows.get(label).copied().unwrap_or(0);
        self.flagged.get(label).copied().unwrap_or(0) as f64 / rows.max(1) as f64
    }

    fn print(&self, file: &str, positive: &str, negative: &str) {
        let count = |m: &BTreeMap<String, usize>, l: &str| m.get(l).copied().unwrap_or(0);
        println!(
            "{file}: recall {:.1}% ({}/{} {positive}), false positives {:.1}% ({}/{} {negative})",
            100.0 * self.rate(positive),
            count(&self.flagged, positive),
            count(&self.rows, positive),
            100.0 * self.rate(negative),
            count(&self.flagged, negative),
            count(&self.rows, negative),
        );
        for ((label, category), n) in &self.by_category {
            println!("    {label:>9} rows with {category} findings: {n}/{}", count(&self.rows, label));
        }
    }
}

fn is_injection_signal(f: &Finding) -> bool {
    matches!(f.category, Category::InstructionOverride | Category::FakeSystemMarker | Category::InvisibleText)
}

/// Inbound: a row counts as flagged on an injection-type finding. Secrets found in results are
/// reported per category but are a different signal (a result that leaks a key is not an
/// injection), so they do not count against the false-positive rate here.
fn injection_file(name: &str, recall_floor: f64, fpr_ceiling: f64) {
    let Some(rows) = rows(name) else { return };
    let mut tally = Tally::default();
    let mut halves = [Tally::default(), Tally::default()];
    for (index, row) in rows.iter().enumerate() {
        let findings = scan(row.text.as_deref().unwrap_or(""), Direction::Inbound);
        tally.add(&row.label, &findings, is_injection_signal);
        // Line numbers count from 1: index 0 is line 1, an odd line.
        halves[index % 2].add(&row.label, &findings, is_injection_signal);
    }
    tally.print(name, "injection", "benign");
    for (half, lines) in halves.iter().zip(["odd lines (held out)", "even lines (design)"]) {
        half.print(&format!("{name} {lines}"), "injection", "benign");
    }
    assert!(tally.rate("injection") >= recall_floor, "{name}: recall below {recall_floor}");
    assert!(tally.rate("benign") <= fpr_ceiling, "{name}: false-positive rate above {fpr_ceiling}");
}

/// Outbound: the arguments as the JSON the proxy forwards, and for shell tools the command
/// itself, decoded. Any finding flags the row.
fn exfil_file(name: &str, fpr_ceiling: f64) {
    let Some(rows) = rows(name) else { return };
    let mut tally = Tally::default();
    for row in &rows {
        let args = row.args.clone().unwrap_or_default();
        let mut findings = scan(&args.to_string(), Direction::Outbound);
        if let Some(command) = args.get("command").and_then(|c| c.as_str()) {
            findings.extend(scan(command, Direction::Outbound));
        }
        assert!(row.tool.is_some(), "{name}: row without a tool");
        tally.add(&row.label, &findings, |_| true);
    }
    tally.print(name, "exfil", "benign");
    assert!(tally.rate("benign") <= fpr_ceiling, "{name}: false-positive rate above {fpr_ceiling}");
}

#[test]
fn agentdojo_injections_are_mostly_caught_and_clean_results_pass() {
    injection_file("injection.dev.jsonl", 0.96, 0.0);
}

#[test]
fn bipia_directives_about_the_answer_are_caught_and_clean_results_pass() {
    injection_file("injection_bipia.dev.jsonl", 0.41, 0.0);
}

/// The audit's masking scan finds what the full outbound scan finds of the masked categories,
/// on every text of the corpora (arguments, results, shell lines).
#[test]
fn the_masking_scan_finds_the_full_scans_masked_findings_on_every_corpus_text() {
    let mut texts = Vec::new();
    for name in
        ["exfil.dev.jsonl", "exfil_shell.dev.jsonl", "injection.dev.jsonl", "injection_bipia.dev.jsonl"]
    {
        for row in rows(name).into_iter().flatten() {
            texts.extend(row.text);
            texts.extend(row.args.map(|a| a.to_string()));
        }
    }
    assert!(texts.len() > 100, "the corpora were read: {}", texts.len());
    let mut masked = 0;
    for t in &texts {
        let all: Vec<Finding> =
            scan(t, Direction::Outbound).into_iter().filter(|f| f.category.is_masked()).collect();
        assert_eq!(super::scan_masked(t), all, "{t}");
        masked += usize::from(!all.is_empty());
    }
    assert!(masked > 0, "some text has a masked finding");
}

#[test]
fn agentdojo_benign_tool_calls_raise_no_findings() {
    exfil_file("exfil.dev.jsonl", 0.02);
}

#[test]
fn shell_one_liners_from_nl2bash_raise_no_findings() {
    exfil_file("exfil_shell.dev.jsonl", 0.02);
}

/// The shell corpora measure download-and-execute directly: recall on the fetch-and-execute
/// category, and no finding on commands the corpus calls read-only.
#[test]
fn fetch_and_execute_commands_are_caught_and_read_only_commands_pass() {
    let (Some(dangerous), Some(readonly)) =
        (corpus("shell-dangerous.dev.tsv"), corpus("shell-readonly.dev.tsv"))
    else {
        return;
    };
    let is_exec = |command: &str| {
        scan(command, Direction::Outbound).iter().any(|f| f.category == Category::DownloadExecute)
    };
    let fetch_exec: Vec<String> =
        tsv(&dangerous).filter(|(_, c)| c.starts_with('2')).map(|(cmd, _)| cmd).collect();
    let caught = fetch_exec.iter().filter(|c| is_exec(c)).count();
    let read_only: Vec<String> =
        tsv(&readonly).filter(|(_, l)| l == "readonly").map(|(cmd, _)| cmd).collect();
    let false_alarms: Vec<&String> = read_only.iter().filter(|c| is_exec(c)).collect();
    println!(
        "shell corpora: download_execute recall {caught}/{} on fetch-and-execute, {}/{} read-only commands flagged",
        fetch_exec.len(),
        false_alarms.len(),
        read_only.len()
    );
    for command in fetch_exec.iter().filter(|c| !is_exec(c)) {
        println!("    missed: {command}");
    }
    assert!(caught * 10 >= fetch_exec.len() * 6, "download-execute recall below 60%");
    assert!(false_alarms.is_empty(), "read-only commands flagged: {false_alarms:?}");
}

fn tsv(text: &str) -> impl Iterator<Item = (String, String)> {
    portcullis_corpus::tsv_rows(text).into_iter()
}
