//! git's other listing subcommands: tag (listing), for-each-ref, check-ignore, check-attr,
//! name-rev, cherry, show-branch, count-objects, the plumbing diffs, and the listing forms of
//! stash and remote (two-word subcommands, see [`super::read`]).

use super::super::spec::{f, o, v, Grammar, Longs, Opt, Order, Parsed};
use super::super::{Role, Unread};
use super::revisions_and_paths;

use Role::Inert;

const fn exact(options: &'static [Opt], operands: super::super::spec::OperandRule) -> Grammar {
    Grammar { options, longs: Longs::Exact, order: Order::Permute, digits: false, operands }
}

fn inert(p: &mut Parsed<'_>) -> Result<(), Unread> {
    p.all(Inert);
    Ok(())
}

/// `git tag` lists with `-l`/`--list`, a filter, or no operand; `git tag NAME` creates one.
pub(crate) const TAG: Grammar = exact(
    &[
        f("l", "list"),
        o("n", "", Inert),
        o("", "sort", Inert),
        o("", "contains", Inert),
        o("", "no-contains", Inert),
        o("", "points-at", Inert),
        o("", "merged", Inert),
        o("", "no-merged", Inert),
        o("", "format", Inert),
        o("", "column", Inert),
        f("", "no-column"),
        f("i", "ignore-case"),
        o("", "color", Inert),
        f("", "omit-empty"),
    ],
    tag_operands,
);

fn tag_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    let listing = ["list", "contains", "no-contains", "points-at", "merged", "no-merged"];
    match p.operands.first() {
        Some(&i) if !listing.iter().any(|l| p.has(l)) => Err(Unread::Unplaced(p.items[i].text.to_string())),
        _ => inert(p),
    }
}

pub(crate) const FOR_EACH_REF: Grammar = exact(
    &[
        o("", "count", Inert),
        f("s", "shell"),
        f("p", "perl"),
        f("", "python"),
        f("", "tcl"),
        o("", "sort", Inert),
        o("", "format", Inert),
        o("", "color", Inert),
        o("", "points-at", Inert),
        o("", "merged", Inert),
        o("", "no-merged", Inert),
        o("", "contains", Inert),
        o("", "no-contains", Inert),
        f("", "ignore-case"),
        f("", "omit-empty"),
        o("", "exclude", Inert),
    ],
    inert,
);

pub(crate) const CHECK_IGNORE: Grammar = exact(
    &[f("q", "quiet"), f("v", "verbose"), f("n", "non-matching"), f("z", ""), f("", "no-index")],
    revisions_and_paths,
);

pub(crate) const CHECK_ATTR: Grammar =
    exact(&[f("a", "all"), f("", "cached"), f("z", ""), o("", "source", Inert)], revisions_and_paths);

pub(crate) const NAME_REV: Grammar = exact(
    &[
        f("", "name-only"),
        f("", "tags"),
        o("", "refs", Inert),
        o("", "exclude", Inert),
        f("", "all"),
        f("", "undefined"),
        f("", "always"),
    ],
    inert,
);

pub(crate) const CHERRY: Grammar = exact(&[f("v", ""), o("", "abbrev", Inert)], inert);

pub(crate) const SHOW_BRANCH: Grammar = exact(
    &[
        f("a", "all"),
        f("r", "remotes"),
        f("", "list"),
        f("", "topo-order"),
        f("", "date-order"),
        o("", "more", Inert),
        f("", "sha1-name"),
        f("", "current"),
        f("", "no-name"),
        f("", "independent"),
        f("", "merge-base"),
        f("", "sparse"),
        o("", "color", Inert),
        f("", "no-color"),
    ],
    inert,
);

pub(crate) const COUNT_OBJECTS: Grammar =
    exact(&[f("v", "verbose"), f("H", "human-readable")], super::super::spec::none);

/// `git remote` and `git remote -v` list the remotes.
pub(crate) const REMOTE: Grammar = exact(&[f("v", "verbose")], super::super::spec::none);

/// `git remote get-url [--push] [--all] NAME`.
pub(crate) const REMOTE_GET_URL: Grammar = exact(&[f("", "push"), f("", "all")], inert);

/// `git stash show` takes the diff options and a stash name.
pub(crate) const STASH_SHOW: Grammar = exact(
    &[
        f("p", "patch"),
        f("", "stat"),
        f("", "name-only"),
        f("", "name-status"),
        f("", "numstat"),
        f("", "shortstat"),
        f("u", "include-untracked"),
        f("", "only-untracked"),
        f("", "no-include-untracked"),
        o("", "color", Inert),
        f("", "no-color"),
        o("", "word-diff", Inert),
        f("", "raw"),
        o("U", "unified", Inert),
        v("", "output", Role::Writes),
    ],
    inert,
);
