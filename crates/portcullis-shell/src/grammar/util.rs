//! Small readers from diffutils, util-linux, binutils and file(1): cmp, rev, strings,
//! hexdump, column, file, hostname, whereis.

use super::coreutils::too_many;
use super::spec::{f, gnu, none, o, reads, v, Grammar, Parsed};
use super::{Role, Unread};

use Role::{Inert, NamesFiles, Reads, Writes};

/// `cmp FILE1 [FILE2 [SKIP1 [SKIP2]]]`.
pub(crate) const CMP: Grammar = gnu(
    &[
        f("b", "print-bytes"),
        f("c", "print-chars"),
        v("i", "ignore-initial", Inert),
        f("l", "verbose"),
        v("n", "bytes", Inert),
        f("s", "quiet"),
        f("s", "silent").named("quiet"),
        f("", "help"),
        f("v", "version"),
    ],
    cmp_operands,
);

fn cmp_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    too_many(p, 4)?;
    p.all(Inert);
    p.set(0, Reads);
    p.set(1, Reads);
    Ok(())
}

pub(crate) const REV: Grammar = gnu(&[f("h", "help"), f("V", "version")], reads);

/// binutils strings: an operand `@FILE` is a file of further arguments (binutils expands it).
pub(crate) const STRINGS: Grammar = Grammar {
    digits: true,
    ..gnu(
        &[
            f("a", "all"),
            f("d", "data"),
            f("f", "print-file-name"),
            v("n", "bytes", Inert),
            v("t", "radix", Inert),
            f("w", "include-all-whitespace"),
            f("o", ""),
            v("T", "target", Inert),
            v("e", "encoding", Inert),
            v("U", "unicode", Inert),
            v("s", "output-separator", Inert),
            f("h", "help"),
            f("H", "").named("help"),
            f("v", "version"),
            f("V", "").named("version"),
        ],
        response_files,
    )
};

fn response_files(p: &mut Parsed<'_>) -> Result<(), Unread> {
    for &i in &p.operands {
        let item = &mut p.items[i];
        (item.text, item.role) = match item.text.strip_prefix('@') {
            Some(file) => (file, NamesFiles),
            None => (item.text, Reads),
        };
    }
    Ok(())
}

pub(crate) const HEXDUMP: Grammar = gnu(
    &[
        f("b", "one-byte-octal"),
        f("c", "one-byte-char"),
        f("C", "canonical"),
        f("d", "two-bytes-decimal"),
        f("o", "two-bytes-octal"),
        f("x", "two-bytes-hex"),
        o("L", "color", Inert),
        v("e", "format", Inert),
        v("f", "format-file", Reads),
        v("n", "length", Inert),
        v("s", "skip", Inert),
        f("v", "no-squeezing"),
        f("h", "help"),
        f("V", "version"),
    ],
    reads,
);

pub(crate) const COLUMN: Grammar = gnu(
    &[
        f("t", "table"),
        v("n", "table-name", Inert),
        v("O", "table-order", Inert),
        v("N", "table-columns", Inert),
        v("l", "table-columns-limit", Inert),
        v("E", "table-noextreme", Inert),
        f("d", "table-noheadings"),
        f("e", "table-header-repeat"),
        v("H", "table-hide", Inert),
        v("R", "table-right", Inert),
        v("T", "table-truncate", Inert),
        v("W", "table-wrap", Inert),
        f("L", "keep-empty-lines"),
        f("J", "json"),
        v("r", "tree", Inert),
        v("i", "tree-id", Inert),
        v("p", "tree-parent", Inert),
        v("c", "output-width", Inert),
        v("o", "output-separator", Inert),
        v("s", "separator", Inert),
        f("x", "fillrows"),
        f("h", "help"),
        f("V", "version"),
    ],
    reads,
);

/// file(1): `-C` compiles the magic files into `*.mgc` in the working directory.
pub(crate) const FILE: Grammar = gnu(
    &[
        v("m", "magic-file", Reads),
        f("z", "uncompress"),
        f("Z", "uncompress-noreport"),
        f("b", "brief"),
        f("c", "checking-printout"),
        v("e", "exclude", Inert),
        v("", "exclude-quiet", Inert),
        v("f", "files-from", NamesFiles),
        v("F", "separator", Inert),
        f("i", "mime"),
        f("", "apple"),
        f("", "extension"),
        f("", "mime-type"),
        f("", "mime-encoding"),
        f("k", "keep-going"),
        f("l", "list"),
        f("L", "dereference"),
        f("h", "no-dereference"),
        f("n", "no-buffer"),
        f("N", "no-pad"),
        f("0", "print0"),
        f("p", "preserve-date"),
        v("P", "parameter", Inert),
        f("r", "raw"),
        f("s", "special-files"),
        f("S", "no-sandbox"),
        f("C", "compile"),
        f("d", "debug"),
        f("E", ""),
        f("", "help"),
        f("v", "version"),
    ],
    file_operands,
);

fn file_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    p.all(Reads);
    if p.has("compile") {
        p.implicit(".", Writes);
    }
    Ok(())
}

/// hostname prints; an operand or `-F`/`-b` would set it, and are not read.
pub(crate) const HOSTNAME: Grammar = gnu(
    &[
        f("a", "alias"),
        f("A", "all-fqdns"),
        f("d", "domain"),
        f("f", "fqdn"),
        f("f", "long").named("fqdn"),
        f("i", "ip-address"),
        f("I", "all-ip-addresses"),
        f("s", "short"),
        f("y", "yp"),
        f("y", "nis").named("yp"),
        f("h", "help"),
        f("V", "version"),
    ],
    none,
);

/// whereis looks names up in fixed directories; `-B`/`-M`/`-S` lists are not read. Its
/// parser is its own (not getopt), so the differential test cannot check it.
pub(crate) const WHEREIS: Grammar = gnu(
    &[f("b", ""), f("m", ""), f("s", ""), f("u", ""), f("l", ""), f("h", "help"), f("V", "version")],
    super::spec::inert,
);
