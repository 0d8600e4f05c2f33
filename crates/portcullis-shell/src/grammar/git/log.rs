//! `git log`/`show`/`diff`: the revision walker's and the diff machinery's options
//! (`revision.c`, `diff.c`) that only choose what to print. Value options whose value names a
//! file take it glued, after `=` or in the next word; others are read only glued or after `=`,
//! so a following word is taken for a revision or path (read), never silently skipped.
//! `--ext-diff`, `--textconv` and `--open-files-in-pager` run programs and are not listed.

use super::super::spec::{f, o, v, Grammar, Longs, Order, Parsed};
use super::super::{Role, Unread};

use Role::{Inert, Reads, ReadsTree, Writes};

/// Options the diff machinery shares between log, show and diff.
macro_rules! diff_options {
    ($($extra:expr),* $(,)?) => {
        &[
            f("p", "patch"), f("u", ""), f("s", "no-patch"), o("U", "unified", Inert), f("W", "function-context"),
            f("", "raw"), f("", "patch-with-raw"), f("", "patch-with-stat"), f("", "numstat"), f("", "shortstat"),
            o("X", "dirstat", Inert), f("", "cumulative"), o("", "dirstat-by-file", Inert), f("", "check"),
            f("", "summary"), f("", "name-only"), f("", "name-status"), o("", "stat", Inert),
            o("", "stat-width", Inert), o("", "stat-name-width", Inert), o("", "stat-graph-width", Inert),
            o("", "stat-count", Inert), f("", "compact-summary"), f("", "binary"), f("", "full-index"),
            o("", "color", Inert), f("", "no-color"), o("", "ws-error-highlight", Inert), o("", "src-prefix", Inert),
            o("", "dst-prefix", Inert), o("", "line-prefix", Inert), f("", "no-prefix"), f("", "default-prefix"),
            o("", "inter-hunk-context", Inert), o("B", "break-rewrites", Inert), o("M", "find-renames", Inert),
            f("D", "irreversible-delete"), o("C", "find-copies", Inert), f("", "find-copies-harder"),
            f("", "no-renames"), f("", "rename-empty"), f("", "no-rename-empty"), f("", "follow"), f("", "minimal"),
            f("w", "ignore-all-space"), f("b", "ignore-space-change"), f("", "ignore-space-at-eol"),
            f("", "ignore-cr-at-eol"), f("", "ignore-blank-lines"), o("I", "ignore-matching-lines", Inert),
            f("", "indent-heuristic"), f("", "no-indent-heuristic"), f("", "patience"), f("", "histogram"),
            o("", "diff-algorithm", Inert), o("", "anchored", Inert), o("", "word-diff", Inert),
            o("", "word-diff-regex", Inert), o("", "color-words", Inert), o("", "color-moved", Inert),
            f("", "no-color-moved"), o("", "color-moved-ws", Inert), o("", "relative", Inert), f("", "no-relative"),
            f("a", "text"), f("", "exit-code"), f("", "quiet"), f("", "no-ext-diff"), f("", "no-textconv"),
            o("", "ignore-submodules", Inert), o("", "submodule", Inert), f("", "pickaxe-all"),
            f("", "pickaxe-regex"), o("", "rotate-to", Inert), o("", "skip-to", Inert), o("", "find-object", Inert),
            o("", "diff-filter", Inert), f("R", ""), v("O", "", Reads),
            o("S", "", Inert), o("G", "", Inert), o("l", "", Inert), f("z", ""), f("", "no-abbrev"),
            o("", "abbrev", Inert),
            v("", "output", Writes),
            $($extra),*
        ]
    };
}

pub(crate) const LOG: Grammar = Grammar {
    options: diff_options![
        f("", "oneline"),
        f("", "graph"),
        f("", "no-graph"),
        o("", "decorate", Inert),
        f("", "no-decorate"),
        o("", "decorate-refs", Inert),
        o("", "decorate-refs-exclude", Inert),
        f("", "abbrev-commit"),
        f("", "no-abbrev-commit"),
        f("", "all"),
        o("", "branches", Inert),
        o("", "tags", Inert),
        o("", "remotes", Inert),
        o("", "glob", Inert),
        o("", "exclude", Inert),
        f("", "reverse"),
        f("", "first-parent"),
        f("", "merges"),
        f("", "no-merges"),
        o("", "date", Inert),
        o("", "pretty", Inert),
        v("", "format", Inert),
        o("", "since", Inert),
        o("", "after", Inert),
        o("", "until", Inert),
        o("", "before", Inert),
        o("", "author", Inert),
        o("", "committer", Inert),
        o("", "grep", Inert),
        f("i", "regexp-ignore-case"),
        f("E", "extended-regexp"),
        f("F", "fixed-strings"),
        f("P", "perl-regexp"),
        f("", "basic-regexp"),
        f("", "all-match"),
        f("", "invert-grep"),
        o("n", "max-count", Inert),
        o("", "skip", Inert),
        f("", "topo-order"),
        f("", "date-order"),
        f("", "author-date-order"),
        f("", "left-right"),
        f("", "left-only"),
        f("", "right-only"),
        f("", "cherry-pick"),
        f("", "cherry-mark"),
        f("", "cherry"),
        f("", "boundary"),
        f("", "parents"),
        f("", "children"),
        f("", "full-history"),
        f("", "simplify-merges"),
        f("", "simplify-by-decoration"),
        f("", "ancestry-path"),
        f("", "relative-date"),
        f("", "show-signature"),
        f("", "no-show-signature"),
        f("", "notes"),
        f("", "no-notes"),
        f("", "source"),
        f("", "mailmap"),
        f("", "no-mailmap"),
        f("", "use-mailmap"),
        f("", "log-size"),
        f("", "root"),
        f("", "no-walk"),
        f("", "do-walk"),
        f("", "count"),
        f("m", ""),
        f("c", ""),
        f("", "cc"),
        f("t", ""),
        f("r", ""),
        f("g", "walk-reflogs"),
        f("", "full-diff"),
        f("", "remove-empty"),
        f("", "dense"),
        f("", "sparse"),
        f("", "expand-tabs"),
        f("", "no-expand-tabs"),
        f("h", ""),
        o("L", "", Inert),
        f("", "not"),
        f("", "bisect"),
        f("", "stdin"),
    ],
    longs: Longs::Exact,
    order: Order::Permute,
    digits: true,
    operands: super::revisions_and_paths,
};

pub(crate) const DIFF: Grammar = Grammar {
    options: diff_options![
        f("", "cached"),
        f("", "staged"),
        f("", "no-index"),
        f("1", "base"),
        f("2", "ours"),
        f("3", "theirs"),
        f("0", ""),
    ],
    longs: Longs::Exact,
    order: Order::Permute,
    digits: false,
    operands: diff_operands,
};

/// `git diff --no-index A B` compares two paths outside any repository, recursing into
/// directories (hidden files included).
fn diff_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    let role = if p.has("no-index") { ReadsTree } else { Reads };
    p.all(role);
    Ok(())
}
