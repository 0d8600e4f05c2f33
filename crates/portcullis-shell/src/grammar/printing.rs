//! More GNU coreutils that read and print: checksums (whose `--check` opens the files a
//! list names), od, pr, fmt, unexpand, seq, df and the like.

use super::spec::{f, gnu, inert, none, o, reads, v, Grammar, Order, Parsed};
use super::{Role, Unread};

use Role::{Inert, NamesFiles, Reads};

/// md5sum, sha*sum, b2sum (`src/digest.c`): `-c` reads a list of checksums and file names and
/// opens every file it names.
pub(crate) const DIGEST: Grammar = gnu(
    &[
        f("b", "binary"),
        f("c", "check"),
        f("", "tag"),
        f("t", "text"),
        f("z", "zero"),
        f("", "ignore-missing"),
        f("", "quiet"),
        f("", "status"),
        f("", "strict"),
        f("w", "warn"),
        f("", "help"),
        f("", "version"),
    ],
    checked_lists,
);

/// b2sum adds `-l BITS`.
pub(crate) const B2SUM: Grammar = gnu(
    &[
        f("b", "binary"),
        f("c", "check"),
        v("l", "length", Inert),
        f("", "tag"),
        f("t", "text"),
        f("z", "zero"),
        f("", "ignore-missing"),
        f("", "quiet"),
        f("", "status"),
        f("", "strict"),
        f("w", "warn"),
        f("", "help"),
        f("", "version"),
    ],
    checked_lists,
);

pub(crate) const CKSUM: Grammar = gnu(
    &[
        v("a", "algorithm", Inert),
        f("b", ""),
        f("t", ""),
        f("c", "check"),
        v("l", "length", Inert),
        f("", "tag"),
        f("", "untagged"),
        f("z", "zero"),
        f("", "ignore-missing"),
        f("", "quiet"),
        f("", "status"),
        f("", "strict"),
        f("w", "warn"),
        f("", "debug"),
        f("", "help"),
        f("", "version"),
    ],
    checked_lists,
);

fn checked_lists(p: &mut Parsed<'_>) -> Result<(), Unread> {
    p.all(if p.has("check") { NamesFiles } else { Reads });
    Ok(())
}

pub(crate) const SUM: Grammar = gnu(&[f("r", ""), f("s", "sysv"), f("", "help"), f("", "version")], reads);

pub(crate) const OD: Grammar = gnu(
    &[
        v("j", "skip-bytes", Inert),
        v("A", "address-radix", Inert),
        v("N", "read-bytes", Inert),
        v("t", "format", Inert),
        f("v", "output-duplicates"),
        o("", "strings", Inert),
        v("S", "", Inert).named("strings"),
        f("", "traditional"),
        o("", "width", Inert),
        o("w", "", Inert).named("width"),
        v("", "endian", Inert),
        f("a", ""),
        f("B", ""),
        f("b", ""),
        f("c", ""),
        f("D", ""),
        f("d", ""),
        f("e", ""),
        f("F", ""),
        f("f", ""),
        f("H", ""),
        f("h", ""),
        f("I", ""),
        f("i", ""),
        f("L", ""),
        f("l", ""),
        f("O", ""),
        f("o", ""),
        f("s", ""),
        f("X", ""),
        f("x", ""),
        f("", "help"),
        f("", "version"),
    ],
    reads,
);

pub(crate) const PR: Grammar = Grammar {
    digits: true,
    ..gnu(
        &[
            v("", "pages", Inert),
            v("", "columns", Inert),
            f("a", "across"),
            f("b", ""),
            f("c", "show-control-chars"),
            f("d", "double-space"),
            v("D", "date-format", Inert),
            o("e", "expand-tabs", Inert),
            f("f", "form-feed"),
            f("F", "").named("form-feed"),
            v("h", "header", Inert),
            o("i", "output-tabs", Inert),
            f("J", "join-lines"),
            v("l", "length", Inert),
            f("m", "merge"),
            o("n", "number-lines", Inert),
            v("N", "first-line-number", Inert),
            v("o", "indent", Inert),
            f("r", "no-file-warnings"),
            o("s", "separator", Inert),
            o("S", "sep-string", Inert),
            f("t", "omit-header"),
            f("T", "omit-pagination"),
            f("v", "show-nonprinting"),
            v("w", "width", Inert),
            v("W", "page-width", Inert),
            f("", "help"),
            f("", "version"),
        ],
        reads,
    )
};

pub(crate) const FMT: Grammar = Grammar {
    digits: true,
    ..gnu(
        &[
            f("c", "crown-margin"),
            v("p", "prefix", Inert),
            f("s", "split-only"),
            f("t", "tagged-paragraph"),
            f("u", "uniform-spacing"),
            v("w", "width", Inert),
            v("g", "goal", Inert),
            f("", "help"),
            f("", "version"),
        ],
        reads,
    )
};

pub(crate) const UNEXPAND: Grammar = Grammar {
    digits: true,
    ..gnu(
        &[v("t", "tabs", Inert), f("a", "all"), f("", "first-only"), f("", "help"), f("", "version")],
        reads,
    )
};

/// seq's operands are numbers (`seq -5 5` is refused: `-5` reads as an option).
pub(crate) const SEQ: Grammar = Grammar {
    order: Order::Posix,
    ..gnu(
        &[
            f("w", "equal-width"),
            v("f", "format", Inert),
            v("s", "separator", Inert),
            f("", "help"),
            f("", "version"),
        ],
        inert,
    )
};

/// df's operands are files whose file system is shown (examined, not read).
pub(crate) const DF: Grammar = gnu(
    &[
        f("a", "all"),
        v("B", "block-size", Inert),
        f("i", "inodes"),
        f("h", "human-readable"),
        f("H", "si"),
        f("l", "local"),
        o("", "output", Inert),
        f("P", "portability"),
        f("T", "print-type"),
        f("", "sync"),
        f("", "no-sync"),
        f("", "total"),
        v("t", "type", Inert),
        v("x", "exclude-type", Inert),
        v("F", "", Inert),
        f("k", ""),
        f("m", ""),
        f("v", ""),
        f("", "help"),
        f("", "version"),
    ],
    inert,
);

pub(crate) const TTY: Grammar =
    gnu(&[f("s", "silent"), f("s", "quiet").named("silent"), f("", "help"), f("", "version")], none);

/// procps' uptime.
pub(crate) const UPTIME: Grammar =
    gnu(&[f("p", "pretty"), f("s", "since"), f("h", "help"), f("V", "version")], none);

/// shuf: `-e` shuffles its operands (strings), `-i` a range; otherwise one input file.
pub(crate) const SHUF: Grammar = gnu(
    &[
        f("e", "echo"),
        v("i", "input-range", Inert),
        v("n", "head-count", Inert),
        v("o", "output", Role::Writes),
        v("", "random-source", Reads),
        f("r", "repeat"),
        f("z", "zero-terminated"),
        f("", "help"),
        f("", "version"),
    ],
    shuf_operands,
);

fn shuf_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    p.all(if p.has("echo") { Inert } else { Reads });
    Ok(())
}

/// split: `split [INPUT]` writes `xaa`, `xab`… in the working directory; `--filter` hands each
/// piece to a shell command instead. `split INPUT PREFIX` writes files whose names only start
/// with PREFIX, which no item can name: not read.
pub(crate) const SPLIT: Grammar = Grammar {
    digits: true,
    ..gnu(
        &[
            v("b", "bytes", Inert),
            v("l", "lines", Inert),
            v("C", "line-bytes", Inert),
            v("n", "number", Inert),
            f("e", "elide-empty-files"),
            f("u", "unbuffered"),
            v("a", "suffix-length", Inert),
            v("", "additional-suffix", Inert),
            o("", "numeric-suffixes", Inert),
            f("d", "").named("numeric-suffixes"),
            o("", "hex-suffixes", Inert),
            f("x", "").named("hex-suffixes"),
            v("", "filter", Role::Executes),
            f("", "verbose"),
            v("t", "separator", Inert),
            v("", "-io-blksize", Inert),
            f("", "help"),
            f("", "version"),
        ],
        split_operands,
    )
};

fn split_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    super::coreutils::too_many(p, 1)?;
    p.set(0, Reads);
    if !p.has("filter") {
        p.implicit(".", Role::Writes);
    }
    Ok(())
}

/// join: two input files; `-o` is an output format, not a file.
pub(crate) const JOIN: Grammar = gnu(
    &[
        v("a", "", Inert),
        v("e", "", Inert),
        f("i", "ignore-case"),
        v("1", "", Inert),
        v("2", "", Inert),
        v("j", "", Inert),
        v("o", "", Inert),
        v("t", "", Inert),
        v("v", "", Inert),
        f("z", "zero-terminated"),
        f("", "check-order"),
        f("", "nocheck-order"),
        f("", "header"),
        f("", "help"),
        f("", "version"),
    ],
    reads,
);
