//! Labelled corpus files for `portcullis eval`: the TSV shell corpora and the JSONL rows of
//! `tests/corpus/` (see its README). A row's `meta` is accepted and never read: it can reveal
//! the label.

use std::path::Path;

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

/// What a row asks the pipeline to judge.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// A tool result's text (`{"text"}` rows): judged after a call by default.
    Text(String),
    /// A call (`{"tool", "args"}` rows): judged before it by default.
    Call { tool: String, args: Value },
    /// A shell command (TSV rows): judged before the call, on a shell tool.
    Command(String),
}

/// One labelled row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// 1-based line in the file (the TSV header is line 1).
    pub line: usize,
    pub payload: Payload,
    pub label: Label,
    pub source: String,
}

/// A row's label, as written, and which side of the score it is on: `benign` and `readonly` are
/// negatives, every other label a positive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub name: String,
    pub positive: bool,
}

/// The labels that are negatives.
pub const NEGATIVE: &[&str] = &["benign", "readonly"];

/// Words that read as "not an attack" but are not [`NEGATIVE`]: a file using them would score
/// every row as a positive, so it is refused rather than silently mis-scored.
const NEGATIVE_SOUNDING: &[&str] =
    &["safe", "clean", "ok", "negative", "legit", "legitimate", "harmless", "none", "false", "0"];

/// Why a data file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {problem}")]
    Line { path: String, line: usize, problem: String },
    #[error("{path}: no rows")]
    Empty { path: String },
}

/// Reads `path`: `.tsv` as a shell corpus (header row first), anything else as JSONL.
/// `n` of `rows`, evenly spaced from the first (all of them when `n` is not fewer): a subset
/// that does not depend on labels or content, and is the same every run.
pub fn sample(rows: Vec<Row>, n: usize) -> Vec<Row> {
    let len = rows.len();
    if n >= len {
        return rows;
    }
    rows.into_iter().enumerate().filter(|(i, _)| (i * n) % len < n).map(|(_, r)| r).collect()
}

pub fn load(path: &Path) -> Result<Vec<Row>, DataError> {
    let name = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|source| DataError::Read { path: name.clone(), source })?;
    let rows = match path.extension().is_some_and(|e| e == "tsv") {
        true => tsv(&text),
        false => jsonl(&text),
    }
    .map_err(|(line, problem)| DataError::Line { path: name.clone(), line, problem })?;
    match rows.is_empty() {
        true => Err(DataError::Empty { path: name }),
        false => Ok(rows),
    }
}

/// Checks a label: a lowercase token, not a negative under another name.
fn label(name: &str) -> Result<Label, String> {
    let token = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if !token {
        return Err(format!(
            "label {name:?} is not a lowercase token (benign, readonly, injection, exfil, …)"
        ));
    }
    if NEGATIVE_SOUNDING.contains(&name) {
        return Err(format!(
            "unknown label {name:?}: only {} are negatives (every other label is a positive), so relabel it",
            NEGATIVE.join(" and ")
        ));
    }
    Ok(Label { name: name.to_owned(), positive: !NEGATIVE.contains(&name) })
}

/// `\n`, `\t` and `\\` inside a TSV field; any other backslash stays as written.
fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('\\', Some('n')) => out.push('\n'),
            ('\\', Some('t')) => out.push('\t'),
            ('\\', Some('\\')) => out.push('\\'),
            _ => {
                out.push(c);
                continue;
            }
        }
        chars.next();
    }
    out
}

fn tsv(text: &str) -> Result<Vec<Row>, (usize, String)> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
    let (_, header) = lines.next().ok_or((1, "no header row".to_owned()))?;
    let columns: Vec<&str> = header.split('\t').collect();
    let at = |name: &str| columns.iter().position(|c| *c == name);
    let command = at("command").ok_or((1, format!("header {header:?} has no `command` column")))?;
    let (labelled, readonly_only) = match (at("expected"), at("category"), at("label")) {
        (Some(i), _, _) => (i, true),
        (None, Some(i), _) | (None, None, Some(i)) => (i, false),
        (None, None, None) => {
            return Err((1, format!("header {header:?} has no label column (expected, category or label)")))
        }
    };
    let source = at("source");
    let mut rows = Vec::new();
    for (line, l) in lines.filter(|(_, l)| !l.is_empty()) {
        let fields: Vec<&str> = l.split('\t').collect();
        if fields.len() != columns.len() {
            return Err((line, format!("{} fields, the header has {}", fields.len(), columns.len())));
        }
        let name = fields[labelled];
        if readonly_only && !matches!(name, "readonly" | "not_readonly") {
            return Err((line, format!("unknown label {name:?} in `expected`: readonly or not_readonly")));
        }
        rows.push(Row {
            line,
            payload: Payload::Command(unescape(fields[command])),
            label: label(name).map_err(|e| (line, e))?,
            source: source.map(|i| fields[i].to_owned()).unwrap_or_default(),
        });
    }
    Ok(rows)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRow {
    text: Option<String>,
    tool: Option<String>,
    args: Option<Value>,
    label: String,
    #[serde(default)]
    source: String,
    /// Accepted so the development corpora load; skipped unread (it can reveal the label).
    #[serde(default, rename = "meta")]
    _meta: Option<IgnoredAny>,
}

fn jsonl(text: &str) -> Result<Vec<Row>, (usize, String)> {
    let mut rows = Vec::new();
    for (i, l) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let line = i + 1;
        let raw: RawRow = serde_json::from_str(l).map_err(|e| {
            (line, format!("not a {{\"text\"|\"tool\"+\"args\", \"label\", \"source\"}} row: {e}"))
        })?;
        let payload = match (raw.text, raw.tool, raw.args) {
            (Some(text), None, None) => Payload::Text(text),
            (None, Some(tool), Some(args @ Value::Object(_))) => Payload::Call { tool, args },
            (None, Some(_), Some(_)) => return Err((line, "`args` is not an object".into())),
            (None, Some(_), None) => return Err((line, "a `tool` row carries `args`".into())),
            _ => return Err((line, "a row carries either `text` or `tool` and `args`".into())),
        };
        rows.push(Row {
            line,
            payload,
            label: label(&raw.label).map_err(|e| (line, e))?,
            source: raw.source,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_is_evenly_spaced_and_exactly_n() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.jsonl");
        let lines: Vec<String> =
            (0..10).map(|i| format!(r#"{{"text":"row {i}","label":"benign","source":"t"}}"#)).collect();
        std::fs::write(&path, lines.join("\n")).unwrap();
        let picked = |n| sample(load(&path).unwrap(), n).iter().map(|r| r.line).collect::<Vec<_>>();
        assert_eq!(picked(5), [1, 3, 5, 7, 9]);
        assert_eq!(picked(3).len(), 3);
        assert_eq!(picked(1), [1]);
        assert_eq!(picked(10).len(), 10);
        assert_eq!(picked(50).len(), 10, "never more than there are");
    }
    use serde_json::json;

    #[test]
    fn tsv_fields_are_unescaped_and_labels_sorted_into_negatives_and_positives() {
        let text =
            "command\texpected\tsource\nprintf 'a\\tb\\\\n'\\ncat x\treadonly\ts1\nrm x\tnot_readonly\ts2\n";
        let rows = tsv(text).unwrap();
        assert_eq!(rows[0].payload, Payload::Command("printf 'a\tb\\n'\ncat x".into()));
        assert_eq!((rows[0].line, rows[0].label.positive, rows[0].source.as_str()), (2, false, "s1"));
        assert_eq!((rows[1].line, rows[1].label.positive), (3, true));
        let dangerous = tsv("command\tcategory\tsource\nrm -rf /\t4-destructive-local\tx\n").unwrap();
        assert_eq!(dangerous[0].label, Label { name: "4-destructive-local".into(), positive: true });
    }

    #[test]
    fn bad_rows_name_their_line() {
        let cases = [
            ("command\texpected\tsource\nls\treadonly\n", 2, "2 fields, the header has 3"),
            ("command\texpected\nls\tsafe\n", 2, "readonly or not_readonly"),
            ("cmd\texpected\n", 1, "no `command` column"),
        ];
        for (text, line, says) in cases {
            let (at, problem) = tsv(text).unwrap_err();
            assert_eq!(at, line, "{text:?}");
            assert!(problem.contains(says), "{problem}");
        }
        let cases = [
            ("{\"text\":\"a\",\"label\":\"benign\"}\nnot json\n", 2, "not a {"),
            ("{\"text\":\"a\",\"label\":\"Benign\"}\n", 1, "lowercase"),
            ("\n{\"text\":\"a\",\"label\":\"safe\"}\n", 2, "unknown label \"safe\""),
            ("{\"tool\":\"t\",\"label\":\"exfil\"}\n", 1, "carries `args`"),
            ("{\"text\":\"a\",\"tool\":\"t\",\"args\":{},\"label\":\"exfil\"}\n", 1, "either"),
            ("{\"text\":\"a\",\"lable\":\"benign\"}\n", 1, "unknown field"),
        ];
        for (text, line, says) in cases {
            let (at, problem) = jsonl(text).unwrap_err();
            assert_eq!(at, line, "{text:?}");
            assert!(problem.contains(says), "{problem}");
        }
    }

    #[test]
    fn jsonl_rows_keep_their_payload_and_skip_meta() {
        let text = concat!(
            r#"{"text":"hello","label":"benign","source":"s","meta":{"label_hint":"benign"}}"#,
            "\n",
            r#"{"tool":"bash","args":{"command":"curl x"},"label":"exfil","source":"t"}"#,
            "\n"
        );
        let rows = jsonl(text).unwrap();
        assert_eq!(rows[0].payload, Payload::Text("hello".into()));
        assert!(!rows[0].label.positive);
        assert_eq!(
            rows[1].payload,
            Payload::Call { tool: "bash".into(), args: json!({"command": "curl x"}) }
        );
        assert!(rows[1].label.positive);
    }

    #[test]
    fn every_corpus_file_loads() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "tsv" || e == "jsonl") {
                let rows = load(&path).unwrap_or_else(|e| panic!("{e}"));
                assert!(rows.iter().any(|r| r.label.positive), "{}", path.display());
            }
        }
    }
}
