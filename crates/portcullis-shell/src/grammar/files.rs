//! GNU coreutils that create, change or remove files: what each operand becomes.

use super::coreutils::too_many;
use super::spec::{f, gnu, o, v, Grammar, Parsed};
use super::{Item, Reading, Role, Unread};

use Role::{Executes, Inert, Reads, ReadsTree, Writes};

pub(crate) const RM: Grammar = gnu(
    &[
        f("f", "force"),
        f("i", ""),
        f("I", ""),
        o("", "interactive", Inert),
        f("", "one-file-system"),
        f("", "no-preserve-root"),
        o("", "preserve-root", Inert),
        f("", "-presume-input-tty"),
        f("r", "recursive"),
        f("R", "").named("recursive"),
        f("d", "dir"),
        f("v", "verbose"),
        f("", "help"),
        f("", "version"),
    ],
    writes,
);

/// Every operand is created, changed or removed.
fn writes(p: &mut Parsed<'_>) -> Result<(), Unread> {
    p.all(Writes);
    Ok(())
}

pub(crate) const CP: Grammar = gnu(
    &[
        f("a", "archive"),
        f("", "attributes-only"),
        o("", "backup", Inert),
        f("b", "").named("backup"),
        f("", "copy-contents"),
        o("", "context", Inert),
        f("L", "dereference"),
        f("f", "force"),
        f("i", "interactive"),
        f("H", ""),
        f("l", "link"),
        f("n", "no-clobber"),
        f("P", "no-dereference"),
        v("", "no-preserve", Inert),
        f("T", "no-target-directory"),
        f("x", "one-file-system"),
        f("", "parents"),
        f("", "path").named("parents"),
        o("", "preserve", Inert),
        f("p", ""),
        f("R", "recursive"),
        f("r", "").named("recursive"),
        f("", "remove-destination"),
        v("", "sparse", Inert),
        o("", "reflink", Inert),
        f("", "strip-trailing-slashes"),
        v("S", "suffix", Inert),
        f("s", "symbolic-link"),
        v("t", "target-directory", Writes),
        o("", "update", Inert),
        f("u", "").named("update"),
        f("v", "verbose"),
        f("d", ""),
        f("Z", "").named("context"),
        f("", "help"),
        f("", "version"),
    ],
    copy_operands,
);

/// Sources are read (recursively with `-r`, `-a`), the last operand is written, unless
/// `-t DIR` names the destination.
fn copy_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    let recursive = p.has("recursive") || p.has("archive");
    p.all(if recursive { ReadsTree } else { Reads });
    if !p.has("target-directory") {
        let last = p.operands.len().saturating_sub(1);
        p.set(last, Writes);
    }
    Ok(())
}

pub(crate) const MV: Grammar = gnu(
    &[
        o("", "backup", Inert),
        f("b", "").named("backup"),
        f("f", "force"),
        f("i", "interactive"),
        f("n", "no-clobber"),
        f("T", "no-target-directory"),
        f("", "strip-trailing-slashes"),
        v("S", "suffix", Inert),
        v("t", "target-directory", Writes),
        o("", "update", Inert),
        f("u", "").named("update"),
        f("v", "verbose"),
        f("Z", "context"),
        f("", "help"),
        f("", "version"),
    ],
    writes,
);

pub(crate) const LN: Grammar = gnu(
    &[
        o("", "backup", Inert),
        f("b", "").named("backup"),
        f("F", "directory"),
        f("d", "").named("directory"),
        f("n", "no-dereference"),
        f("T", "no-target-directory"),
        f("f", "force"),
        f("i", "interactive"),
        v("S", "suffix", Inert),
        v("t", "target-directory", Writes),
        f("L", "logical"),
        f("P", "physical"),
        f("r", "relative"),
        f("s", "symbolic"),
        f("v", "verbose"),
        f("", "help"),
        f("", "version"),
    ],
    link_operands,
);

/// `ln TARGET... LINK`: the targets are linked to (read through the new name later), the last
/// operand is created; `ln TARGET` alone creates the link in the working directory.
fn link_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    p.all(Reads);
    if p.has("target-directory") {
        return Ok(());
    }
    match p.operands.len() {
        0 => Ok(()),
        1 => {
            p.implicit(".", Writes);
            Ok(())
        }
        n => {
            p.set(n - 1, Writes);
            Ok(())
        }
    }
}

pub(crate) const MKDIR: Grammar = gnu(
    &[
        v("m", "mode", Inert),
        f("p", "parents"),
        f("v", "verbose"),
        f("Z", ""),
        o("", "context", Inert),
        f("", "help"),
        f("", "version"),
    ],
    writes,
);

pub(crate) const RMDIR: Grammar = gnu(
    &[
        f("", "ignore-fail-on-non-empty"),
        f("p", "parents"),
        f("p", "path").named("parents"),
        f("v", "verbose"),
        f("", "help"),
        f("", "version"),
    ],
    writes,
);

pub(crate) const TOUCH: Grammar = gnu(
    &[
        f("a", ""),
        f("m", ""),
        f("f", ""),
        v("", "time", Inert),
        f("c", "no-create"),
        v("d", "date", Inert),
        v("r", "reference", Reads),
        v("t", "", Inert),
        f("h", "no-dereference"),
        f("", "help"),
        f("", "version"),
    ],
    writes,
);

/// chmod, chown, chgrp: the first operand is the mode or owner unless `--reference` gives it.
/// chmod's mode letters as options (`chmod -w f`) are not read.
pub(crate) const CHMOD: Grammar = gnu(
    &[
        f("c", "changes"),
        f("R", "recursive"),
        f("", "no-preserve-root"),
        f("", "preserve-root"),
        f("f", "quiet"),
        f("f", "silent").named("quiet"),
        v("", "reference", Reads),
        f("v", "verbose"),
        f("", "help"),
        f("", "version"),
    ],
    mode_then_files,
);

pub(crate) const CHOWN: Grammar = gnu(
    &[
        f("R", "recursive"),
        f("c", "changes"),
        f("", "dereference"),
        v("", "from", Inert),
        f("h", "no-dereference"),
        f("", "no-preserve-root"),
        f("", "preserve-root"),
        f("f", "quiet"),
        f("f", "silent").named("quiet"),
        v("", "reference", Reads),
        f("v", "verbose"),
        f("H", ""),
        f("L", ""),
        f("P", ""),
        f("", "help"),
        f("", "version"),
    ],
    mode_then_files,
);

/// chgrp: chown's options but `--from`.
pub(crate) const CHGRP: Grammar = gnu(
    &[
        f("R", "recursive"),
        f("c", "changes"),
        f("", "dereference"),
        f("h", "no-dereference"),
        f("", "no-preserve-root"),
        f("", "preserve-root"),
        f("f", "quiet"),
        f("f", "silent").named("quiet"),
        v("", "reference", Reads),
        f("v", "verbose"),
        f("H", ""),
        f("L", ""),
        f("P", ""),
        f("", "help"),
        f("", "version"),
    ],
    mode_then_files,
);

fn mode_then_files(p: &mut Parsed<'_>) -> Result<(), Unread> {
    p.all(Writes);
    if !p.has("reference") {
        p.set(0, Inert);
    }
    Ok(())
}

pub(crate) const TEE: Grammar = gnu(
    &[
        f("a", "append"),
        f("i", "ignore-interrupts"),
        o("", "output-error", Inert),
        f("p", "").named("output-error"),
        f("", "help"),
        f("", "version"),
    ],
    writes,
);

pub(crate) const TRUNCATE: Grammar = gnu(
    &[
        f("c", "no-create"),
        f("o", "io-blocks"),
        v("r", "reference", Reads),
        v("s", "size", Inert),
        f("", "help"),
        f("", "version"),
    ],
    writes,
);

/// mktemp creates its file from TEMPLATE, in `-p DIR` / `--tmpdir`, or in `$TMPDIR` (`/tmp`).
pub(crate) const MKTEMP: Grammar = gnu(
    &[
        f("d", "directory"),
        f("q", "quiet"),
        f("u", "dry-run"),
        v("", "suffix", Inert),
        o("", "tmpdir", Writes),
        v("p", "", Writes).named("tmpdir"),
        f("t", ""),
        f("V", ""),
        f("", "help"),
        f("", "version"),
    ],
    mktemp_operands,
);

fn mktemp_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    too_many(p, 1)?;
    p.all(Writes);
    if p.operands.is_empty() || p.has("tmpdir") || p.has("t") {
        p.implicit("/tmp", Writes);
    }
    Ok(())
}

pub(crate) const INSTALL: Grammar = gnu(
    &[
        o("", "backup", Inert),
        f("b", "").named("backup"),
        f("c", ""),
        f("C", "compare"),
        f("d", "directory"),
        f("D", ""),
        v("g", "group", Inert),
        v("m", "mode", Inert),
        f("T", "no-target-directory"),
        v("o", "owner", Inert),
        f("p", "preserve-timestamps"),
        f("", "preserve-context"),
        f("s", "strip"),
        v("", "strip-program", Executes),
        v("S", "suffix", Inert),
        v("t", "target-directory", Writes),
        f("v", "verbose"),
        f("Z", ""),
        o("", "context", Inert),
        f("", "help"),
        f("", "version"),
    ],
    install_operands,
);

/// `install -d DIR...` creates every operand; otherwise it copies as cp does.
fn install_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    if p.has("directory") {
        return writes(p);
    }
    copy_operands(p)
}

/// dd: `KEY=VALUE` operands; `if=` is read, `of=` written, the rest are numbers and flags.
pub(crate) fn dd(args: &[String]) -> Result<Reading<'_>, Unread> {
    const INERT: &[&str] = &[
        "bs", "cbs", "conv", "count", "ibs", "iflag", "obs", "oflag", "seek", "skip", "status", "iseek",
        "oseek",
    ];
    let mut items = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if i == 0 && args.len() == 1 && (a == "--help" || a == "--version") {
            items.push(Item { text: a, role: Role::Flag, option: Some("help") });
            continue;
        }
        let (key, value) = a.split_once('=').ok_or_else(|| Unread::Unplaced(a.clone()))?;
        let (name, role) = match key {
            "if" => ("if", Reads),
            "of" => ("of", Writes),
            k => (*INERT.iter().find(|n| **n == k).ok_or_else(|| Unread::Unplaced(a.clone()))?, Inert),
        };
        items.push(Item { text: value, role, option: Some(name) });
    }
    Ok(Reading::plain(items))
}
