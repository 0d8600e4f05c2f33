//! ripgrep, fd and tree: recursive searches and listings of their path operands, or of the
//! working directory when none is given. Their parsers are their own (lexopt, clap, tree's
//! loop): long names are exact, `--name=value` or the next word. Not installed here, so their
//! tables come from their documentation and are not checked against the programs; options that
//! run programs other than the ones named (`rg -z`, `fd -x`, `fd -l`) are left out.

use super::getopt;
use super::spec::{f, o, v, Grammar, Longs, Order, Parsed};
use super::{Reading, Role, Unread};

use Role::{Chdir, Executes, Inert, Reads, ReadsTree, Writes};

const fn exact(options: &'static [super::spec::Opt], operands: super::spec::OperandRule) -> Grammar {
    Grammar { options, longs: Longs::Exact, order: Order::Permute, digits: false, operands }
}

pub(crate) const RG: Grammar = exact(
    &[
        v("e", "regexp", Inert),
        v("f", "file", Reads),
        v("g", "glob", Inert),
        v("", "iglob", Inert),
        v("t", "type", Inert),
        v("T", "type-not", Inert),
        v("", "type-add", Inert),
        v("", "type-clear", Inert),
        v("A", "after-context", Inert),
        v("B", "before-context", Inert),
        v("C", "context", Inert),
        v("m", "max-count", Inert),
        v("d", "max-depth", Inert),
        v("", "maxdepth", Inert),
        v("j", "threads", Inert),
        v("M", "max-columns", Inert),
        v("", "max-filesize", Inert),
        v("r", "replace", Inert),
        v("", "color", Inert),
        v("", "colors", Inert),
        v("", "sort", Inert),
        v("", "sortr", Inert),
        v("", "path-separator", Inert),
        v("", "field-match-separator", Inert),
        v("", "field-context-separator", Inert),
        v("", "context-separator", Inert),
        v("E", "encoding", Inert),
        v("", "engine", Inert),
        v("", "ignore-file", Reads),
        v("", "pre", Executes),
        v("", "pre-glob", Inert),
        v("", "hostname-bin", Executes),
        v("", "hyperlink-format", Inert),
        v("", "dfa-size-limit", Inert),
        v("", "regex-size-limit", Inert),
        f("i", "ignore-case"),
        f("s", "case-sensitive"),
        f("S", "smart-case"),
        f("n", "line-number"),
        f("N", "no-line-number"),
        f("l", "files-with-matches"),
        f("", "files-without-match"),
        f("c", "count"),
        f("", "count-matches"),
        f("v", "invert-match"),
        f("w", "word-regexp"),
        f("x", "line-regexp"),
        f("F", "fixed-strings"),
        f("o", "only-matching"),
        f("H", "with-filename"),
        f("I", "no-filename"),
        f("", "hidden"),
        f("", "no-hidden"),
        f("L", "follow"),
        f("", "no-ignore"),
        f("", "no-ignore-vcs"),
        f("", "no-ignore-dot"),
        f("", "no-ignore-global"),
        f("", "no-ignore-parent"),
        f("", "no-ignore-exclude"),
        f("", "no-ignore-files"),
        f("u", "unrestricted"),
        f("a", "text"),
        f("", "binary"),
        f("", "files"),
        f("", "type-list"),
        f("", "json"),
        f("", "no-heading"),
        f("", "heading"),
        f("", "vimgrep"),
        f("p", "pretty"),
        f("b", "byte-offset"),
        f("", "column"),
        f("", "no-column"),
        f("", "trim"),
        f("U", "multiline"),
        f("", "multiline-dotall"),
        f("P", "pcre2"),
        f("", "no-config"),
        f("", "no-messages"),
        f("q", "quiet"),
        f("", "stats"),
        f("", "debug"),
        f("", "trace"),
        f("0", "null"),
        f("", "null-data"),
        f("", "one-file-system"),
        f("", "sort-files"),
        f("", "no-unicode"),
        f("", "crlf"),
        f("", "passthru"),
        f("", "line-buffered"),
        f("", "block-buffered"),
        f("", "no-require-git"),
        f("", "glob-case-insensitive"),
        f("", "include-zero"),
        f("", "max-columns-preview"),
        f("h", "help"),
        f("V", "version"),
    ],
    rg_operands,
);

/// The pattern (unless `-e`/`-f`, or a mode that takes none), then paths searched recursively.
fn rg_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    p.all(ReadsTree);
    let no_pattern = p.has("files") || p.has("type-list");
    let pattern_given = p.has("regexp") || p.has("file") || no_pattern;
    if !pattern_given {
        p.set(0, Inert);
    }
    let paths = p.operands.len().saturating_sub(usize::from(!pattern_given));
    if paths == 0 && !p.has("type-list") {
        p.implicit(".", ReadsTree);
    }
    Ok(())
}

pub(crate) const FD: Grammar = exact(
    &[
        f("H", "hidden"),
        f("I", "no-ignore"),
        f("", "no-ignore-vcs"),
        f("u", "unrestricted"),
        f("s", "case-sensitive"),
        f("i", "ignore-case"),
        f("g", "glob"),
        f("", "regex"),
        f("F", "fixed-strings"),
        f("a", "absolute-path"),
        f("L", "follow"),
        f("p", "full-path"),
        f("0", "print0"),
        f("1", ""),
        f("q", "quiet"),
        f("", "show-errors"),
        f("", "strip-cwd-prefix"),
        f("", "one-file-system"),
        f("h", "help"),
        f("V", "version"),
        v("d", "max-depth", Inert),
        v("", "min-depth", Inert),
        v("", "exact-depth", Inert),
        v("t", "type", Inert),
        v("e", "extension", Inert),
        v("E", "exclude", Inert),
        v("S", "size", Inert),
        v("", "changed-within", Inert),
        v("", "changed-before", Inert),
        v("o", "owner", Inert),
        v("c", "color", Inert),
        v("j", "threads", Inert),
        v("", "max-results", Inert),
        v("", "format", Inert),
        v("", "base-directory", Chdir),
        v("", "search-path", ReadsTree),
        v("", "ignore-file", Reads),
    ],
    fd_operands,
);

fn fd_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    p.all(ReadsTree);
    p.set(0, Inert);
    if p.operands.len() < 2 && !p.has("search-path") {
        p.implicit(".", ReadsTree);
    }
    Ok(())
}

/// tree: `-o FILE` writes the listing; `-R` (with `-H`) writes `00Tree.html` in every directory.
pub(crate) const TREE: Grammar = exact(
    &[
        f("a", ""),
        f("d", ""),
        f("l", ""),
        f("f", ""),
        f("x", ""),
        v("L", "", Inert),
        f("R", ""),
        v("P", "", Inert),
        v("I", "", Inert),
        f("", "gitignore"),
        f("", "ignore-case"),
        f("", "matchdirs"),
        f("", "metafirst"),
        f("", "prune"),
        f("", "info"),
        f("", "noreport"),
        v("", "charset", Inert),
        v("", "filelimit", Inert),
        f("", "dirsfirst"),
        f("", "filesfirst"),
        v("o", "", Writes),
        f("i", ""),
        f("A", ""),
        f("S", ""),
        f("n", ""),
        f("C", ""),
        f("X", ""),
        f("J", ""),
        v("H", "", Inert),
        v("T", "", Inert),
        f("", "nolinks"),
        f("s", ""),
        f("h", ""),
        f("", "si"),
        f("", "du"),
        f("D", ""),
        v("", "timefmt", Inert),
        f("p", ""),
        f("u", ""),
        f("g", ""),
        f("Q", ""),
        f("N", ""),
        f("q", ""),
        f("F", ""),
        f("", "inodes"),
        f("", "device"),
        f("v", ""),
        f("t", ""),
        f("c", ""),
        f("U", ""),
        f("r", ""),
        o("", "sort", Inert),
        f("", "version"),
        f("", "help"),
    ],
    tree_operands,
);

fn tree_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    let role = if p.has("R") { Writes } else { ReadsTree };
    p.all(role);
    if p.operands.is_empty() {
        p.implicit(".", role);
    }
    Ok(())
}

/// tree takes an option's value from the next word even in the middle of a cluster (`-oq f`
/// writes `f`), so a value letter is read only at the end of its cluster.
pub(crate) fn tree(args: &[String]) -> Result<Reading<'_>, Unread> {
    for w in args.iter().filter(|w| w.starts_with('-') && !w.starts_with("--")) {
        let letters: Vec<char> = w.chars().skip(1).collect();
        if let Some(c) = letters.iter().rev().skip(1).find(|c| "LPIoHT".contains(**c)) {
            return Err(Unread::UnknownOption(format!("-{c}")));
        }
    }
    Ok(Reading::plain(getopt::read(&TREE, args)?))
}
