//! Writing an "allow always" rule into the operator's rule file (`--permission-config`): the
//! rule goes at the end of `permissions.allow`, the rest of the file — other keys, comments,
//! order — kept where a text edit can do it. Every edit is checked by parsing the result: it
//! must read as the old document with exactly this one rule appended, or the next, plainer edit
//! is tried (the last rewrites the document as JSON, which YAML reads, without its comments).
//! The file is replaced atomically (a temporary file beside it, then a rename), and a preview
//! shows the unified diff first. The policy reload picks the change up like any edit.

use std::path::Path;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Why the rule file cannot take the rule.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("the rule file {file} cannot be read: {source}")]
    Read { file: String, source: std::io::Error },
    #[error("the rule file {file} is not a YAML document of permissions: {why}")]
    Parse { file: String, why: String },
    #[error("the rule file {file} cannot be written: {source}")]
    Write { file: String, source: std::io::Error },
    #[error("the rule file {file} changed since the preview: look at the diff again")]
    Changed { file: String },
}

/// The file before and after the rule, and the diff between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub before: String,
    pub after: String,
    /// SHA-256 (hex) of `before`: a write may insist the file is still what was previewed.
    pub base: String,
}

impl Edit {
    /// The unified diff, labelled with `name`; empty when the rule is already there.
    pub fn diff(&self, name: &str) -> String {
        unified(name, &self.before, &self.after)
    }
}

/// Plans adding `rule` to `text` (the file `name`).
pub fn plan(name: &str, text: &str, rule: &str) -> Result<Edit, FileError> {
    let parse_err = |why: String| FileError::Parse { file: name.to_owned(), why };
    let before = document(text).map_err(parse_err)?;
    let base = hex(&Sha256::digest(text.as_bytes()));
    let allow = before.pointer("/permissions/allow").and_then(Value::as_array);
    if allow.is_some_and(|a| a.iter().any(|r| r.as_str() == Some(rule))) {
        return Ok(Edit { before: text.to_owned(), after: text.to_owned(), base });
    }
    let mut expected = before.clone();
    append(&mut expected, rule).map_err(parse_err)?;
    let item = serde_json::to_string(rule).unwrap_or_default();
    let candidates = [in_block(text, &item), new_allow(text, &item), new_permissions(text, &item)];
    for after in candidates.into_iter().flatten() {
        if document(&after).is_ok_and(|d| d == expected) {
            return Ok(Edit { before: text.to_owned(), after, base });
        }
    }
    let json = serde_json::to_string_pretty(&expected).unwrap_or_default();
    let after =
        format!("# Rewritten by portcullis (allow always): the file's comments could not be kept.\n{json}\n");
    match document(&after) {
        Ok(d) if d == expected => Ok(Edit { before: text.to_owned(), after, base }),
        _ => Err(parse_err("the rule could not be added so that the file reads back the same".into())),
    }
}

/// Adds `rule` to the file at `path`, atomically; `base`: the preview's digest the file must
/// still have. Returns the edit made.
pub fn write(path: &Path, rule: &str, base: Option<&str>) -> Result<Edit, FileError> {
    static ONE_WRITER: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_WRITER.lock().unwrap_or_else(|p| p.into_inner());
    let name = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|source| FileError::Read { file: name.clone(), source })?;
    let edit = plan(&name, &text, rule)?;
    if base.is_some_and(|b| b != edit.base) {
        return Err(FileError::Changed { file: name });
    }
    if edit.after != edit.before {
        replace(path, &edit.after).map_err(|source| FileError::Write { file: name, source })?;
    }
    Ok(edit)
}

/// Writes `text` beside the file (the real one, when `path` is a link), then renames it over.
fn replace(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let real = std::fs::canonicalize(path)?;
    let dir = real.parent().unwrap_or(Path::new("/"));
    let file_name = real.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut nonce = [0u8; 8];
    getrandom::fill(&mut nonce).map_err(std::io::Error::other)?;
    let tmp = dir.join(format!(".{file_name}.{}.tmp", hex(&nonce)));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.set_permissions(std::fs::metadata(&real)?.permissions())?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, &real)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The document as a value (an empty file is an empty mapping).
fn document(text: &str) -> Result<Value, String> {
    let v: Option<Value> = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
    // The same shape check the policy load makes: only `permissions:` in a rule file.
    let v = v.unwrap_or_else(|| Value::Object(Default::default()));
    serde_json::from_value::<crate::config::permissions::RawPermissionFile>(v.clone())
        .map_err(|e| e.to_string())?;
    Ok(v)
}

/// `doc` with `rule` appended to `permissions.allow` (created as needed).
fn append(doc: &mut Value, rule: &str) -> Result<(), String> {
    let root = doc.as_object_mut().ok_or("the document is not a mapping")?;
    let perms = root.entry("permissions").or_insert_with(|| Value::Object(Default::default()));
    if perms.is_null() {
        *perms = Value::Object(Default::default());
    }
    let perms = perms.as_object_mut().ok_or("permissions is not a mapping")?;
    let allow = perms.entry("allow").or_insert_with(|| Value::Array(Vec::new()));
    if allow.is_null() {
        *allow = Value::Array(Vec::new());
    }
    allow.as_array_mut().ok_or("permissions.allow is not a list")?.push(Value::String(rule.to_owned()));
    Ok(())
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// A key line `key:` (optionally followed by a comment) at exactly `at` spaces.
fn is_key(line: &str, key: &str, at: usize) -> bool {
    indent(line) == at && {
        let rest = line[at..].strip_prefix(key).and_then(|r| r.strip_prefix(':')).map(str::trim);
        rest.is_some_and(|r| r.is_empty() || r.starts_with('#'))
    }
}

/// The block under the top-level `permissions:`: its line range and its keys' indent.
fn permissions_block(lines: &[&str]) -> Option<(usize, usize, Option<usize>)> {
    let start = lines.iter().position(|l| is_key(l, "permissions", 0))?;
    let mut end = start + 1;
    let mut inner = None;
    while end < lines.len() {
        let l = lines[end];
        let t = l.trim();
        if !t.is_empty() && !t.starts_with('#') {
            if indent(l) == 0 {
                break;
            }
            inner.get_or_insert(indent(l));
        }
        end += 1;
    }
    Some((start, end, inner))
}

/// Appends `- item` after the last entry of a block-style `permissions.allow` list.
fn in_block(text: &str, item: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let (start, end, inner) = permissions_block(&lines)?;
    let at = inner?;
    let allow = (start + 1..end).find(|&i| is_key(lines[i], "allow", at))?;
    let mut last = allow;
    let mut item_indent = None;
    for (i, l) in lines.iter().enumerate().take(end).skip(allow + 1) {
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let belongs = indent(l) > at || (indent(l) == at && t.starts_with("- "));
        if !belongs {
            break;
        }
        if t.starts_with("- ") && item_indent.is_none() {
            item_indent = Some(indent(l));
        }
        last = i;
    }
    let pad = " ".repeat(item_indent.unwrap_or(at + 2));
    Some(splice(&lines, last + 1, &format!("{pad}- {item}")))
}

/// Adds an `allow:` list as the first key of a block-style `permissions:` that has none.
fn new_allow(text: &str, item: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let (start, _, inner) = permissions_block(&lines)?;
    let pad = " ".repeat(inner.unwrap_or(2));
    Some(splice(&lines, start + 1, &format!("{pad}allow:\n{pad}  - {item}")))
}

/// Appends a `permissions:` section to a file that has none.
fn new_permissions(text: &str, item: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    Some(splice(&lines, lines.len(), &format!("permissions:\n  allow:\n    - {item}")))
}

fn splice(lines: &[&str], at: usize, new: &str) -> String {
    let mut out: Vec<&str> = lines[..at].to_vec();
    out.push(new);
    out.extend_from_slice(&lines[at..]);
    out.join("\n") + "\n"
}

/// A unified diff of one changed region (what an insertion or a rewrite makes), three lines of
/// context; empty when nothing changed.
pub fn unified(name: &str, before: &str, after: &str) -> String {
    if before == after {
        return String::new();
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (before.lines().collect(), after.lines().collect());
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let max_suffix = a.len().min(b.len()) - prefix;
    let suffix = a.iter().rev().zip(b.iter().rev()).take(max_suffix).take_while(|(x, y)| x == y).count();
    let from = prefix.saturating_sub(3);
    let (a_end, b_end) = ((a.len() - suffix + 3).min(a.len()), (b.len() - suffix + 3).min(b.len()));
    let range = |start: usize, end: usize| match end - start {
        0 => format!("{start},0"),
        n => format!("{},{n}", start + 1),
    };
    let mut out =
        format!("--- a/{name}\n+++ b/{name}\n@@ -{} +{} @@\n", range(from, a_end), range(from, b_end));
    for l in &a[from..prefix] {
        out.push_str(&format!(" {l}\n"));
    }
    for l in &a[prefix..a.len() - suffix] {
        out.push_str(&format!("-{l}\n"));
    }
    for l in &b[prefix..b.len() - suffix] {
        out.push_str(&format!("+{l}\n"));
    }
    for l in &a[a.len() - suffix..a_end] {
        out.push_str(&format!(" {l}\n"));
    }
    out
}

#[cfg(test)]
#[path = "always_file_tests.rs"]
mod tests;
