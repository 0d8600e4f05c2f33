//! Programs that list or measure files: ls, du, stat, date. Recursive listings read every
//! name below their operands; no operand lists the working directory.

use super::spec::{f, gnu, o, v, Grammar, Parsed};
use super::{Role, Unread};

use Role::{Inert, NamesFiles, Reads, ReadsTree};

pub(crate) const LS: Grammar = gnu(
    &[
        f("a", "all"),
        f("b", "escape"),
        f("d", "directory"),
        f("D", "dired"),
        f("", "full-time"),
        f("", "group-directories-first"),
        f("h", "human-readable"),
        f("i", "inode"),
        f("k", "kibibytes"),
        f("n", "numeric-uid-gid"),
        f("G", "no-group"),
        f("q", "hide-control-chars"),
        f("r", "reverse"),
        f("s", "size"),
        v("w", "width", Inert),
        f("A", "almost-all"),
        f("B", "ignore-backups"),
        o("F", "classify", Inert),
        f("", "file-type"),
        f("", "si"),
        f("H", "dereference-command-line"),
        f("", "dereference-command-line-symlink-to-dir"),
        v("", "hide", Inert),
        v("I", "ignore", Inert),
        v("", "indicator-style", Inert),
        f("L", "dereference"),
        f("N", "literal"),
        f("Q", "quote-name"),
        v("", "quoting-style", Inert),
        f("R", "recursive"),
        v("", "format", Inert),
        f("", "show-control-chars"),
        v("", "sort", Inert),
        v("T", "tabsize", Inert),
        v("", "time", Inert),
        v("", "time-style", Inert),
        f("", "zero"),
        o("", "color", Inert),
        o("", "hyperlink", Inert),
        v("", "block-size", Inert),
        f("Z", "context"),
        f("", "author"),
        f("c", ""),
        f("C", ""),
        f("f", ""),
        f("g", ""),
        f("l", ""),
        f("m", ""),
        f("o", ""),
        f("p", ""),
        f("S", ""),
        f("t", ""),
        f("u", ""),
        f("U", ""),
        f("v", ""),
        f("x", ""),
        f("X", ""),
        f("1", ""),
        f("", "help"),
        f("", "version"),
    ],
    ls_operands,
);

/// `ls -R` reads every name below its operands; `ls` alone lists `.`.
fn ls_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    let role = if p.has("recursive") { ReadsTree } else { Reads };
    p.all(role);
    if p.operands.is_empty() {
        p.implicit(".", role);
    }
    Ok(())
}

pub(crate) const DU: Grammar = gnu(
    &[
        f("a", "all"),
        f("", "apparent-size"),
        v("B", "block-size", Inert),
        f("b", "bytes"),
        f("l", "count-links"),
        f("L", "dereference"),
        f("D", "dereference-args"),
        f("H", "").named("dereference-args"),
        v("", "exclude", Inert),
        v("X", "exclude-from", Reads),
        v("", "files0-from", NamesFiles),
        f("h", "human-readable"),
        f("", "inodes"),
        f("", "si"),
        v("d", "max-depth", Inert),
        f("0", "null"),
        f("P", "no-dereference"),
        f("x", "one-file-system"),
        f("S", "separate-dirs"),
        f("s", "summarize"),
        f("c", "total"),
        v("t", "threshold", Inert),
        o("", "time", Inert),
        v("", "time-style", Inert),
        f("k", ""),
        f("m", ""),
        f("", "help"),
        f("", "version"),
    ],
    du_operands,
);

/// du walks every operand; with none (and no `--files0-from`) it walks `.`.
fn du_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    p.all(ReadsTree);
    if p.operands.is_empty() && !p.has("files0-from") {
        p.implicit(".", ReadsTree);
    }
    Ok(())
}

pub(crate) const STAT: Grammar = gnu(
    &[
        f("L", "dereference"),
        f("f", "file-system"),
        v("c", "format", Inert),
        v("", "printf", Inert),
        f("t", "terse"),
        v("", "cached", Inert),
        f("", "help"),
        f("", "version"),
    ],
    super::spec::reads,
);

/// date: `-f FILE` reads dates from a file, `-r FILE` stats one; `-s` and a bare
/// `MMDDhhmm` operand set the clock, which this reading cannot express, so they are refused.
pub(crate) const DATE: Grammar = gnu(
    &[
        v("d", "date", Inert),
        f("", "debug"),
        v("f", "file", Reads),
        o("I", "iso-8601", Inert),
        v("r", "reference", Reads),
        f("", "resolution"),
        f("R", "rfc-email"),
        f("R", "rfc-822").named("rfc-email"),
        f("R", "rfc-2822").named("rfc-email"),
        v("", "rfc-3339", Inert),
        f("u", "utc"),
        f("u", "uct").named("utc"),
        f("u", "universal").named("utc"),
        f("", "help"),
        f("", "version"),
    ],
    date_operands,
);

fn date_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    super::coreutils::too_many(p, 1)?;
    match p.operands.first().map(|&i| p.items[i].text) {
        Some(format) if !format.starts_with('+') => Err(Unread::Unplaced(format.to_string())),
        _ => {
            p.all(Inert);
            Ok(())
        }
    }
}
