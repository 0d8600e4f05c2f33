//! Adding a rule to rule files of every shape: comments kept where the shape allows, the
//! result always reading back as the old document plus the one rule.

use super::*;

const RULE: &str = r#"mcp__py__write_note({"path":"a","text":"hello"})"#;

fn added(text: &str) -> String {
    let e = plan("rules.yaml", text, RULE).unwrap_or_else(|e| panic!("{e}"));
    let mut want = document(text).unwrap();
    append(&mut want, RULE).unwrap();
    assert_eq!(document(&e.after).unwrap(), want, "reads back as before plus the rule:\n{}", e.after);
    e.after
}

#[test]
fn a_block_list_gets_the_rule_as_its_last_item_with_every_comment_kept() {
    let text = "# team rules\npermissions:\n  # reviewed weekly\n  allow:\n    - mcp__py__echo   # harmless\n    - rule: mcp__py__add\n      match: [\"{}\"]\n  deny: [mcp__py__rm]\n";
    let after = added(text);
    assert_eq!(
        after,
        format!("# team rules\npermissions:\n  # reviewed weekly\n  allow:\n    - mcp__py__echo   # harmless\n    - rule: mcp__py__add\n      match: [\"{{}}\"]\n    - {}\n  deny: [mcp__py__rm]\n", serde_json::to_string(RULE).unwrap())
    );
}

#[test]
fn every_other_shape_still_reads_back_as_the_old_document_plus_the_rule() {
    for text in [
        "",
        "# only a comment\n",
        "permissions:\n  deny:\n  - mcp__x__y\n",
        "permissions:\n  allow:\n  - mcp__x__y\n",
        "permissions: { allow: [mcp__x__y] }\n",
        "permissions:\n  allow: []\n",
        "permissions:\n    allow:\n        - mcp__x__y\n    ask: [mcp__x__z]\n",
    ] {
        added(text);
    }
}

#[test]
fn a_rule_already_there_changes_nothing_and_a_file_that_is_no_rule_file_is_refused() {
    let text = format!("permissions:\n  allow:\n    - {}\n", serde_json::to_string(RULE).unwrap());
    let e = plan("r", &text, RULE).unwrap();
    assert_eq!(e.after, text);
    assert_eq!(e.diff("r"), "");
    for bad in [
        "permissions: [1]\n",
        "listen: 1.2.3.4:5\n",
        "permissions:\n  allow: {a: 1}\n",
        ": : :\n",
        "permissions:\n",
    ] {
        assert!(plan("r", bad, RULE).is_err(), "{bad:?}");
    }
}

#[test]
fn the_diff_is_a_unified_hunk_with_three_lines_of_context() {
    let before = "a\nb\nc\nd\ne\nf\n";
    let after = "a\nb\nc\nd\nX\ne\nf\n";
    assert_eq!(unified("f", before, after), "--- a/f\n+++ b/f\n@@ -2,5 +2,6 @@\n b\n c\n d\n+X\n e\n f\n");
    assert_eq!(unified("f", "", "x\n"), "--- a/f\n+++ b/f\n@@ -0,0 +1,1 @@\n+x\n");
    assert_eq!(unified("f", "a\n", "a\nx\n"), "--- a/f\n+++ b/f\n@@ -1,1 +1,2 @@\n a\n+x\n");
}

#[test]
fn a_write_replaces_the_file_atomically_and_refuses_a_stale_preview() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rules.yaml");
    std::fs::write(&path, "permissions:\n  allow:\n    - mcp__x__y\n").unwrap();
    let preview = plan("p", &std::fs::read_to_string(&path).unwrap(), RULE).unwrap();
    std::fs::write(&path, "permissions:\n  allow:\n    - mcp__x__z\n").unwrap();
    assert!(matches!(write(&path, RULE, Some(&preview.base)), Err(FileError::Changed { .. })));
    let done = write(&path, RULE, None).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), done.after);
    assert!(done.after.contains("mcp__x__z"));
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(left.len(), 1, "no temporary file is left: {left:?}");
}
