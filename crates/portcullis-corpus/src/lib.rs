//! Test support, shared by the workspace's crates: the labelled development corpora committed in
//! `tests/corpus/` at the workspace root (see the README there for sources, licences and what the
//! copies leave out). Hermetic by default: set `PORTCULLIS_CORPUS` to a directory (for instance
//! `../shared/corpus`, which has the GTFOBins rows the copies omit) to run the same tests on it.

#![forbid(unsafe_code)]

use std::path::PathBuf;

/// The directory the corpora are read from.
pub fn dir() -> PathBuf {
    match std::env::var_os("PORTCULLIS_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus"),
    }
}

/// The text of corpus file `name`; panics if it is missing (the copies are committed).
pub fn read(name: &str) -> String {
    let path = dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Undoes the TSV escapes the corpus README defines (`\n`, `\t`, `\\`).
pub fn unescape(field: &str) -> String {
    let mut out = String::new();
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// TSV rows as (first field unescaped, second field), header skipped.
pub fn tsv_rows(text: &str) -> Vec<(String, String)> {
    text.lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut fields = l.split('\t');
            (unescape(fields.next().unwrap_or("")), fields.next().unwrap_or("").to_string())
        })
        .collect()
}
