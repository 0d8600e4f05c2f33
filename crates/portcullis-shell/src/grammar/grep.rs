//! grep and diff: searches and comparisons whose recursion (`-r`, `-d recurse`, `--dir=rec`)
//! turns their file operands into trees, and, for grep, the working directory by default.

use super::spec::{f, gnu, o, v, Grammar, Parsed};
use super::{Role, Unread};

use Role::{Inert, Reads, ReadsTree};

/// GNU grep 3.x (`src/grep.c`: `long_options`, `short_options`).
pub(crate) const GREP: Grammar = Grammar {
    digits: true,
    ..gnu(
        &[
            f("G", "basic-regexp"),
            f("E", "extended-regexp"),
            f("F", "fixed-regexp").named("fixed-strings"),
            f("F", "fixed-strings"),
            f("P", "perl-regexp"),
            v("A", "after-context", Inert),
            v("B", "before-context", Inert),
            v("", "binary-files", Inert),
            f("b", "byte-offset"),
            v("C", "context", Inert),
            o("", "color", Inert),
            o("", "colour", Inert).named("color"),
            f("c", "count"),
            v("D", "devices", Inert),
            v("d", "directories", Inert),
            f("R", "dereference-recursive"),
            v("", "exclude", Inert),
            v("", "exclude-from", Reads),
            v("", "exclude-dir", Inert),
            v("f", "file", Reads),
            f("l", "files-with-matches"),
            f("L", "files-without-match"),
            v("", "group-separator", Inert),
            f("", "help"),
            v("", "include", Inert),
            f("i", "ignore-case"),
            f("y", "").named("ignore-case"),
            f("", "no-ignore-case"),
            f("T", "initial-tab"),
            v("", "label", Inert),
            f("", "line-buffered"),
            f("n", "line-number"),
            f("x", "line-regexp"),
            v("m", "max-count", Inert),
            f("h", "no-filename"),
            f("", "no-group-separator"),
            f("s", "no-messages"),
            f("Z", "null"),
            f("z", "null-data"),
            f("o", "only-matching"),
            f("q", "quiet"),
            f("r", "recursive"),
            v("e", "regexp", Inert),
            f("v", "invert-match"),
            f("q", "silent").named("quiet"),
            f("a", "text"),
            f("U", "binary"),
            f("u", "unix-byte-offsets"),
            f("V", "version"),
            f("H", "with-filename"),
            f("w", "word-regexp"),
            v("X", "", Inert),
            f("I", ""),
        ],
        grep_operands,
    )
};

/// The first operand is the pattern unless `-e` or `-f` gave one. Recursion makes the files
/// trees, and with no file the working directory is searched, hidden files included.
fn grep_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    let pattern_given = p.has("regexp") || p.has("file");
    // `-d ACTION` takes any unambiguous abbreviation of read, skip or recurse; counting every
    // prefix of "recurse" (also the ambiguous `r`, `re`, which grep refuses) errs towards trees.
    let recursive = p.has("recursive")
        || p.has("dereference-recursive")
        || p.values("directories").any(|a| !a.is_empty() && "recurse".starts_with(a));
    let role = if recursive { ReadsTree } else { Reads };
    p.all(role);
    let files = if pattern_given { 0 } else { 1 };
    if !pattern_given {
        p.set(0, Inert);
    }
    if recursive && p.operands.len() <= files {
        p.implicit(".", ReadsTree);
    }
    Ok(())
}

/// GNU diff 3.x (`src/diff.c`).
pub(crate) const DIFF: Grammar = Grammar {
    digits: true,
    ..gnu(
        &[
            f("", "binary"),
            f("q", "brief"),
            v("", "changed-group-format", Inert),
            o("", "color", Inert),
            o("", "context", Inert),
            v("C", "", Inert).named("context"),
            f("c", ""),
            f("e", "ed"),
            v("x", "exclude", Inert),
            v("X", "exclude-from", Reads),
            f("t", "expand-tabs"),
            f("f", "forward-ed"),
            v("", "from-file", Reads),
            f("", "help"),
            v("", "horizon-lines", Inert),
            v("D", "ifdef", Inert),
            f("w", "ignore-all-space"),
            f("B", "ignore-blank-lines"),
            f("i", "ignore-case"),
            f("", "ignore-file-name-case"),
            v("I", "ignore-matching-lines", Inert),
            f("b", "ignore-space-change"),
            f("E", "ignore-tab-expansion"),
            f("Z", "ignore-trailing-space"),
            f("", "inhibit-hunk-merge"),
            f("T", "initial-tab"),
            v("L", "label", Inert),
            f("", "left-column"),
            v("", "line-format", Inert),
            f("d", "minimal"),
            f("N", "new-file"),
            v("", "new-group-format", Inert),
            v("", "new-line-format", Inert),
            f("", "no-dereference"),
            f("", "no-ignore-file-name-case"),
            f("", "normal"),
            v("", "old-group-format", Inert),
            v("", "old-line-format", Inert),
            // Pipes the output through `pr`, a fixed program.
            f("l", "paginate"),
            v("", "palette", Inert),
            f("n", "rcs"),
            f("r", "recursive"),
            f("s", "report-identical-files"),
            f("", "sdiff-merge-assist"),
            f("p", "show-c-function"),
            v("F", "show-function-line", Inert),
            f("y", "side-by-side"),
            f("H", "speed-large-files"),
            v("S", "starting-file", Inert),
            f("", "strip-trailing-cr"),
            f("", "suppress-blank-empty"),
            f("", "suppress-common-lines"),
            v("", "tabsize", Inert),
            f("a", "text"),
            v("", "to-file", Reads),
            v("", "unchanged-group-format", Inert),
            v("", "unchanged-line-format", Inert),
            f("P", "unidirectional-new-file"),
            o("", "unified", Inert),
            v("U", "", Inert).named("unified"),
            f("u", ""),
            f("v", "version"),
            v("W", "width", Inert),
            f("h", ""),
        ],
        diff_operands,
    )
};

/// Every operand is compared; `-r` compares directories recursively, and then the files
/// named by `--from-file` / `--to-file` are trees too.
fn diff_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    let role = if p.has("recursive") { ReadsTree } else { Reads };
    p.all(role);
    if role == ReadsTree {
        for item in p.items.iter_mut() {
            if matches!(item.option, Some("from-file" | "to-file")) {
                item.role = ReadsTree;
            }
        }
    }
    Ok(())
}
