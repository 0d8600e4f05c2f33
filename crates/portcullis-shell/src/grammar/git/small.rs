//! The smaller reading subcommands of git: status, blame, branch (listing), rev-parse,
//! ls-files, ls-tree, grep, describe, merge-base, rev-list, show-ref, cat-file, version.

use super::super::spec::{f, o, v, Grammar, Longs, OperandRule, Order, Parsed};
use super::super::{Role, Unread};
use super::revisions_and_paths;

use Role::{Inert, Reads, ReadsTree};

const fn exact(options: &'static [super::super::spec::Opt], operands: OperandRule) -> Grammar {
    Grammar { options, longs: Longs::Exact, order: Order::Permute, digits: false, operands }
}

fn inert(p: &mut Parsed<'_>) -> Result<(), Unread> {
    p.all(Inert);
    Ok(())
}

pub(crate) const STATUS: Grammar = exact(
    &[
        f("s", "short"),
        f("b", "branch"),
        f("", "show-stash"),
        o("", "porcelain", Inert),
        f("", "long"),
        f("v", "verbose"),
        o("u", "untracked-files", Inert),
        o("", "ignored", Inert),
        o("", "ignore-submodules", Inert),
        f("z", ""),
        o("", "column", Inert),
        f("", "no-column"),
        f("", "ahead-behind"),
        f("", "no-ahead-behind"),
        f("", "renames"),
        f("", "no-renames"),
        o("", "find-renames", Inert),
    ],
    revisions_and_paths,
);

pub(crate) const BLAME: Grammar = exact(
    &[
        f("b", ""),
        f("", "root"),
        f("", "show-stats"),
        f("", "progress"),
        f("", "no-progress"),
        f("", "score-debug"),
        f("f", "show-name"),
        f("n", "show-number"),
        f("p", "porcelain"),
        f("", "line-porcelain"),
        f("c", ""),
        f("t", ""),
        f("l", ""),
        f("s", ""),
        f("e", "show-email"),
        f("w", ""),
        o("", "ignore-rev", Inert),
        v("", "ignore-revs-file", Reads),
        o("", "color-lines", Inert),
        f("", "color-by-age"),
        f("", "minimal"),
        v("S", "", Reads),
        v("", "contents", Reads),
        o("", "date", Inert),
        o("M", "", Inert),
        o("C", "", Inert),
        o("L", "", Inert),
        o("", "abbrev", Inert),
        f("", "incremental"),
        f("", "reverse"),
        f("", "first-parent"),
    ],
    revisions_and_paths,
);

/// `git branch` lists only in its listing modes: with `--list`, `-a`, `-r`, a filter such as
/// `--contains`, or no operand at all. `git branch NAME` creates a branch: not read.
pub(crate) const BRANCH: Grammar = exact(
    &[
        f("l", "list"),
        f("a", "all"),
        f("r", "remotes"),
        f("v", "verbose"),
        f("", "show-current"),
        o("", "contains", Inert),
        o("", "no-contains", Inert),
        o("", "merged", Inert),
        o("", "no-merged", Inert),
        o("", "points-at", Inert),
        o("", "sort", Inert),
        o("", "format", Inert),
        o("", "color", Inert),
        f("", "no-color"),
        o("", "column", Inert),
        f("", "no-column"),
        o("", "abbrev", Inert),
        f("", "no-abbrev"),
        f("i", "ignore-case"),
        f("", "omit-empty"),
        f("q", "quiet"),
    ],
    branch_operands,
);

fn branch_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    let listing = ["list", "all", "remotes", "contains", "no-contains", "merged", "no-merged", "points-at"];
    match p.operands.first() {
        Some(&i) if !listing.iter().any(|l| p.has(l)) => Err(Unread::Unplaced(p.items[i].text.to_string())),
        _ => inert(p),
    }
}

pub(crate) const REV_PARSE: Grammar = exact(
    &[
        f("", "show-toplevel"),
        f("", "git-dir"),
        f("", "absolute-git-dir"),
        f("", "git-common-dir"),
        o("", "abbrev-ref", Inert),
        o("", "short", Inert),
        f("", "verify"),
        f("q", "quiet"),
        f("", "is-inside-work-tree"),
        f("", "is-inside-git-dir"),
        f("", "is-bare-repository"),
        f("", "is-shallow-repository"),
        f("", "show-prefix"),
        f("", "show-cdup"),
        f("", "symbolic"),
        f("", "symbolic-full-name"),
        f("", "all"),
        o("", "branches", Inert),
        o("", "tags", Inert),
        o("", "remotes", Inert),
        o("", "glob", Inert),
        f("", "revs-only"),
        f("", "no-revs"),
        f("", "flags"),
        f("", "no-flags"),
        f("", "sq"),
        f("", "not"),
        f("", "local-env-vars"),
        o("", "show-object-format", Inert),
        f("", "show-ref-format"),
        f("", "shared-index-path"),
        f("", "show-superproject-working-tree"),
        o("", "default", Inert),
        o("", "since", Inert),
        o("", "after", Inert),
        o("", "until", Inert),
        o("", "before", Inert),
        o("", "path-format", Inert),
        o("", "disambiguate", Inert),
    ],
    inert,
);

pub(crate) const LS_FILES: Grammar = exact(
    &[
        f("c", "cached"),
        f("d", "deleted"),
        f("m", "modified"),
        f("o", "others"),
        f("i", "ignored"),
        f("s", "stage"),
        f("u", "unmerged"),
        f("k", "killed"),
        f("z", ""),
        f("t", ""),
        f("v", ""),
        f("f", ""),
        f("", "directory"),
        f("", "no-empty-directory"),
        f("", "eol"),
        f("", "full-name"),
        o("x", "exclude", Inert),
        v("X", "exclude-from", Reads),
        o("", "exclude-per-directory", Inert),
        f("", "exclude-standard"),
        f("", "error-unmatch"),
        f("", "recurse-submodules"),
        o("", "abbrev", Inert),
        o("", "format", Inert),
        f("", "deduplicate"),
        f("", "sparse"),
        o("", "with-tree", Inert),
    ],
    revisions_and_paths,
);

pub(crate) const LS_TREE: Grammar = exact(
    &[
        f("d", ""),
        f("r", ""),
        f("t", ""),
        f("l", "long"),
        f("z", ""),
        f("", "name-only"),
        f("", "name-status"),
        f("", "object-only"),
        f("", "full-name"),
        f("", "full-tree"),
        o("", "format", Inert),
        o("", "abbrev", Inert),
    ],
    revisions_and_paths,
);

/// `git grep` searches tracked files; `--no-index` and `--untracked` search the working
/// tree's files instead, hidden ones included.
pub(crate) const GREP: Grammar = exact(
    &[
        f("", "cached"),
        f("", "no-index"),
        f("", "untracked"),
        f("", "no-exclude-standard"),
        f("", "exclude-standard"),
        f("", "recurse-submodules"),
        f("a", "text"),
        f("i", "ignore-case"),
        f("I", ""),
        o("", "max-depth", Inert),
        f("r", "recursive"),
        f("w", "word-regexp"),
        f("v", "invert-match"),
        f("h", ""),
        f("H", ""),
        f("", "full-name"),
        f("E", "extended-regexp"),
        f("G", "basic-regexp"),
        f("F", "fixed-strings"),
        f("P", "perl-regexp"),
        f("n", "line-number"),
        f("", "column"),
        f("l", "files-with-matches"),
        f("", "name-only"),
        f("L", "files-without-match"),
        f("z", "null"),
        f("o", "only-matching"),
        f("c", "count"),
        o("", "color", Inert),
        f("", "no-color"),
        f("", "break"),
        f("", "heading"),
        f("p", "show-function"),
        o("A", "after-context", Inert),
        o("B", "before-context", Inert),
        o("C", "context", Inert),
        f("W", "function-context"),
        o("m", "max-count", Inert),
        o("", "threads", Inert),
        v("f", "", Reads),
        v("e", "", Inert),
        f("", "and"),
        f("", "or"),
        f("", "not"),
        f("", "all-match"),
        f("q", "quiet"),
    ],
    git_grep_operands,
);

fn git_grep_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    let working_tree = p.has("no-index") || p.has("untracked");
    p.all(if working_tree { ReadsTree } else { Reads });
    if !p.has("e") && !p.has("f") {
        p.set(0, Inert);
    }
    let files = if p.has("e") || p.has("f") { 0 } else { 1 };
    if working_tree && p.operands.len() <= files {
        p.implicit(".", ReadsTree);
    }
    Ok(())
}

pub(crate) const DESCRIBE: Grammar = exact(
    &[
        f("", "all"),
        f("", "tags"),
        f("", "contains"),
        o("", "abbrev", Inert),
        o("", "candidates", Inert),
        f("", "exact-match"),
        f("", "debug"),
        f("", "long"),
        o("", "match", Inert),
        o("", "exclude", Inert),
        f("", "always"),
        f("", "first-parent"),
        o("", "dirty", Inert),
        o("", "broken", Inert),
    ],
    inert,
);

pub(crate) const MERGE_BASE: Grammar = exact(
    &[f("a", "all"), f("", "octopus"), f("", "independent"), f("", "is-ancestor"), f("", "fork-point")],
    inert,
);

pub(crate) const REV_LIST: Grammar = exact(
    &[
        f("", "all"),
        f("", "count"),
        o("n", "max-count", Inert),
        o("", "skip", Inert),
        f("", "reverse"),
        f("", "first-parent"),
        f("", "merges"),
        f("", "no-merges"),
        f("", "left-right"),
        f("", "parents"),
        f("", "children"),
        f("", "topo-order"),
        f("", "date-order"),
        f("", "objects"),
        f("", "timestamp"),
        o("", "since", Inert),
        o("", "until", Inert),
        o("", "author", Inert),
        f("", "not"),
        f("", "quiet"),
        o("", "abbrev", Inert),
        f("", "abbrev-commit"),
        o("", "format", Inert),
        f("", "oneline"),
        o("", "branches", Inert),
        o("", "tags", Inert),
        o("", "remotes", Inert),
        f("", "ancestry-path"),
        f("", "boundary"),
        f("", "cherry-pick"),
        f("", "cherry-mark"),
        f("", "left-only"),
        f("", "right-only"),
    ],
    revisions_and_paths,
);

pub(crate) const SHOW_REF: Grammar = exact(
    &[
        f("", "head"),
        f("", "heads"),
        f("", "branches"),
        f("", "tags"),
        f("d", "dereference"),
        o("s", "hash", Inert),
        f("", "verify"),
        f("", "exists"),
        o("", "abbrev", Inert),
        f("q", "quiet"),
    ],
    inert,
);

/// `cat-file` prints objects; `--textconv` and `--filters` run configured programs and are not
/// listed, nor are `--batch*` (which read object names from standard input).
pub(crate) const CAT_FILE: Grammar = exact(
    &[
        f("t", ""),
        f("s", ""),
        f("e", ""),
        f("p", ""),
        f("", "allow-unknown-type"),
        f("", "use-mailmap"),
        f("", "mailmap"),
    ],
    inert,
);

pub(crate) const VERSION: Grammar = exact(&[f("", "build-options")], super::super::spec::none);
