//! Codex's `apply_patch` envelope read as the files it writes: `*** Begin Patch`, then
//! `*** Add File:` / `*** Delete File:` / `*** Update File:` (with an optional `*** Move to:`)
//! sections, then `*** End Patch`.
//!
//! The reading is positive: every line must be one this grammar places, or the whole patch is
//! refused. Codex finds a section header after trimming the line (`line.trim()`, so a header
//! indented with a tab is still a header), while a hunk line that starts with a space is
//! context; a body line that would be a header under the other reading is therefore refused as
//! ambiguous rather than guessed at. Codex's lenient heredoc wrapping (`<<'EOF'`) is not
//! accepted: the model is told to send the bare envelope.

/// The most file operations one patch may carry (each is decided on its own).
pub const MAX_OPERATIONS: usize = 256;

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

/// What one section of a patch does to the file system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operation {
    /// Creates (or overwrites) `path`.
    Add { path: String },
    /// Removes `path`.
    Delete { path: String },
    /// Rewrites `path` in place, or writes it to `to` and removes `path`.
    Update { path: String, to: Option<String> },
}

impl Operation {
    /// Every path the operation writes (a move writes both the old and the new name).
    pub fn written(&self) -> Vec<&str> {
        match self {
            Operation::Add { path } | Operation::Delete { path } => vec![path],
            Operation::Update { path, to: None } => vec![path],
            Operation::Update { path, to: Some(to) } => vec![path, to],
        }
    }
}

/// Why a patch is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    #[error("the patch does not start with `*** Begin Patch` and end with `*** End Patch`")]
    Envelope,
    #[error("line {line} of the patch is not one apply_patch's grammar places: {text:?}")]
    Unexpected { line: usize, text: String },
    #[error("line {line} of the patch reads as a file header once trimmed but sits in a hunk: {text:?}")]
    Ambiguous { line: usize, text: String },
    #[error("line {line} of the patch names no path, or one with a NUL byte")]
    Path { line: usize },
    #[error("the patch changes no file")]
    Empty,
    #[error("the patch has more than {MAX_OPERATIONS} file operations")]
    TooMany,
}

/// Reads `patch` (the `command` of an `apply_patch` call) as its operations, in order.
pub fn parse(patch: &str) -> Result<Vec<Operation>, PatchError> {
    let lines: Vec<&str> = patch.trim().lines().collect();
    let (first, rest) = lines.split_first().ok_or(PatchError::Envelope)?;
    let (last, body) = rest.split_last().ok_or(PatchError::Envelope)?;
    if first.trim() != BEGIN || last.trim() != END {
        return Err(PatchError::Envelope);
    }
    let mut ops = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let number = i + 2;
        let header = body[i].trim();
        let path = |marker: &str| -> Result<Option<String>, PatchError> {
            match header.strip_prefix(marker) {
                None => Ok(None),
                Some(p) if p.is_empty() || p.contains('\0') => Err(PatchError::Path { line: number }),
                Some(p) => Ok(Some(p.to_owned())),
            }
        };
        i += 1;
        if let Some(path) = path(ADD)? {
            // Codex takes every following `+` line as the new file's content.
            while body.get(i).is_some_and(|l| l.starts_with('+')) {
                i += 1;
            }
            ops.push(Operation::Add { path });
        } else if let Some(path) = path(DELETE)? {
            ops.push(Operation::Delete { path });
        } else if let Some(path) = path(UPDATE)? {
            let to = match body.get(i).map(|l| l.trim()).and_then(|l| l.strip_prefix(MOVE)) {
                Some(to) if to.is_empty() || to.contains('\0') => {
                    return Err(PatchError::Path { line: i + 2 })
                }
                Some(to) => {
                    i += 1;
                    Some(to.to_owned())
                }
                None => None,
            };
            i = hunks(body, i)?;
            ops.push(Operation::Update { path, to });
        } else {
            return Err(PatchError::Unexpected { line: number, text: body[i - 1].to_owned() });
        }
        if ops.len() > MAX_OPERATIONS {
            return Err(PatchError::TooMany);
        }
    }
    if ops.is_empty() {
        return Err(PatchError::Empty);
    }
    Ok(ops)
}

/// Skips an update's hunks from `i`; returns the index of the line after them.
fn hunks(body: &[&str], mut i: usize) -> Result<usize, PatchError> {
    while let Some(line) = body.get(i) {
        let trimmed = line.trim();
        let hunk_line = line.is_empty()
            || line.starts_with("@@")
            || line.starts_with([' ', '+', '-'])
            || trimmed == END_OF_FILE;
        if !hunk_line {
            return Ok(i);
        }
        // `+` and `-` lines are content whatever follows; a blank-led line that trims to a
        // header is context to one reading and a header to another.
        if line.starts_with(' ') && [ADD, DELETE, UPDATE, MOVE].iter().any(|m| trimmed.starts_with(m)) {
            return Err(PatchError::Ambiguous { line: i + 2, text: (*line).to_owned() });
        }
        i += 1;
    }
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(p: &str) -> Operation {
        Operation::Add { path: p.into() }
    }

    #[test]
    fn every_section_kind_is_read_with_its_paths() {
        let patch = "*** Begin Patch\n*** Add File: hello.txt\n+Hello\n+*** Delete File: not-a-header\n\
                     *** Update File: src/app.py\n*** Move to: src/main.py\n@@ def greet():\n-print(\"Hi\")\n\
                     +print(\"Hello\")\n context\n\n*** End of File\n*** Delete File: /abs/obsolete.txt\n\
                     *** Update File: b.rs\n@@\n-a\n+b\n*** End Patch\n";
        let ops = parse(patch).unwrap();
        assert_eq!(
            ops,
            vec![
                add("hello.txt"),
                Operation::Update { path: "src/app.py".into(), to: Some("src/main.py".into()) },
                Operation::Delete { path: "/abs/obsolete.txt".into() },
                Operation::Update { path: "b.rs".into(), to: None },
            ]
        );
        assert_eq!(ops[1].written(), vec!["src/app.py", "src/main.py"]);
    }

    #[test]
    fn patches_outside_the_grammar_are_refused() {
        type Expect = fn(&PatchError) -> bool;
        let table: &[(&str, Expect)] = &[
            ("", |e| *e == PatchError::Envelope),
            ("*** Begin Patch", |e| *e == PatchError::Envelope),
            ("*** Begin Patch\n*** Add File: a\n+x", |e| *e == PatchError::Envelope),
            ("<<'EOF'\n*** Begin Patch\n*** Add File: a\n*** End Patch\nEOF", |e| *e == PatchError::Envelope),
            ("*** Begin Patch\n*** End Patch", |e| *e == PatchError::Empty),
            // A header trims to `*** Add File:`, which is no header at all.
            ("*** Begin Patch\n*** Add File: \n*** End Patch", |e| {
                matches!(e, PatchError::Unexpected { .. })
            }),
            ("*** Begin Patch\n*** Add File: a\x00b\n*** End Patch", |e| {
                matches!(e, PatchError::Path { .. })
            }),
            ("*** Begin Patch\n*** Copy File: a\n*** End Patch", |e| {
                matches!(e, PatchError::Unexpected { .. })
            }),
            ("*** Begin Patch\n*** Add File: a\nx\n*** End Patch", |e| {
                matches!(e, PatchError::Unexpected { .. })
            }),
            ("*** Begin Patch\n*** Delete File: a\n+x\n*** End Patch", |e| {
                matches!(e, PatchError::Unexpected { .. })
            }),
            ("*** Begin Patch\n*** Update File: a\n@@\n *** Delete File: /etc/x\n*** End Patch", |e| {
                matches!(e, PatchError::Ambiguous { .. })
            }),
            ("*** Begin Patch\n*** Update File: a\n*** Move to: \n*** End Patch", |e| {
                matches!(e, PatchError::Unexpected { .. })
            }),
            ("*** Begin Patch\n*** Update File: a\n*** Move to: b\x00\n*** End Patch", |e| {
                matches!(e, PatchError::Path { .. })
            }),
        ];
        for (patch, ok) in table {
            let got = parse(patch);
            assert!(got.as_ref().is_err_and(ok), "{patch:?} gave {got:?}");
        }
    }

    #[test]
    fn a_header_indented_with_a_tab_or_trailed_by_spaces_is_still_a_header() {
        let patch =
            "*** Begin Patch\n*** Update File: a\n@@\n-x\n\t*** Delete File: /etc/passwd  \n*** End Patch";
        let ops = parse(patch).unwrap();
        assert_eq!(ops[1], Operation::Delete { path: "/etc/passwd".into() });
        let crlf = "*** Begin Patch\r\n*** Add File: w.txt\r\n+x\r\n*** End Patch\r\n";
        assert_eq!(parse(crlf).unwrap(), vec![add("w.txt")]);
    }

    #[test]
    fn a_patch_past_the_operation_bound_is_refused() {
        let mut patch = String::from("*** Begin Patch\n");
        for i in 0..=MAX_OPERATIONS {
            patch.push_str(&format!("*** Delete File: f{i}\n"));
        }
        patch.push_str("*** End Patch");
        assert_eq!(parse(&patch), Err(PatchError::TooMany));
    }

    proptest::proptest! {
        #[test]
        fn no_input_panics_and_every_path_read_is_named_in_the_patch(s in "(\\*\\*\\* [A-Za-z ]{0,14}: ?[a-z/.]{0,6}\n|[ +@-]?[a-z*]{0,4}\n){0,8}") {
            let patch = format!("*** Begin Patch\n{s}*** End Patch");
            if let Ok(ops) = parse(&patch) {
                for op in &ops {
                    for p in op.written() {
                        proptest::prop_assert!(patch.contains(p));
                    }
                }
            }
        }
    }
}
