//! Test support: the labelled development corpora, read from `../shared/corpus/` beside the
//! repository when present, else from the committed copies in `tests/corpus/` (see the README
//! there for sources, licences and what the copies leave out).

use std::path::PathBuf;

/// The text of corpus file `name`; panics if neither location has it (the copies are committed).
pub fn read(name: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("../shared/corpus").join(name);
    let path = if shared.exists() { shared } else { root.join("tests/corpus").join(name) };
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
