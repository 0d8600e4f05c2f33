//! GNU make: it runs the recipes of a makefile, so the makefile (`-f`, else `Makefile` in the
//! working directory after `-C`: `GNUmakefile`, `makefile` or `Makefile`) is [`Role::Executes`], and so is every `VAR=value` operand
//! (`make SHELL=/tmp/x`, `CC=…` choose the programs recipes run). Targets are names. The table
//! is partial and read by GNU rules (see `net.rs` on why that is safe).

use super::spec::{f, gnu, o, v, Grammar, Parsed};
use super::{Role, Unread};

use Role::{Chdir, Executes, Inert, Reads, Writes};

pub(crate) const MAKE: Grammar = gnu(
    &[
        f("b", ""),
        f("m", ""),
        f("B", "always-make"),
        v("C", "directory", Chdir),
        f("d", ""),
        o("", "debug", Inert),
        f("e", "environment-overrides"),
        v("E", "eval", Executes),
        v("f", "file", Executes),
        v("", "makefile", Executes).named("file"),
        f("h", "help"),
        f("i", "ignore-errors"),
        v("I", "include-dir", Reads),
        o("j", "jobs", Inert),
        f("k", "keep-going"),
        o("l", "load-average", Inert),
        o("", "max-load", Inert).named("load-average"),
        f("L", "check-symlink-times"),
        f("n", "just-print"),
        f("", "dry-run").named("just-print"),
        f("", "recon").named("just-print"),
        v("o", "old-file", Inert),
        v("", "assume-old", Inert).named("old-file"),
        o("O", "output-sync", Inert),
        f("p", "print-data-base"),
        f("q", "question"),
        f("r", "no-builtin-rules"),
        f("R", "no-builtin-variables"),
        f("s", "silent"),
        f("", "quiet").named("silent"),
        f("", "no-silent"),
        f("S", "no-keep-going"),
        f("", "stop").named("no-keep-going"),
        // Touches the targets instead of making them.
        f("t", "touch"),
        f("", "trace"),
        f("v", "version"),
        f("w", "print-directory"),
        f("", "no-print-directory"),
        v("W", "what-if", Inert),
        v("", "new-file", Inert).named("what-if"),
        v("", "assume-new", Inert).named("what-if"),
        f("", "warn-undefined-variables"),
    ],
    make_operands,
);

fn make_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    let touches = p.has("touch");
    for n in 0..p.operands.len() {
        let text = p.items[p.operands[n]].text;
        let role = if text.contains('=') {
            Executes
        } else if touches {
            Writes
        } else {
            Inert
        };
        p.set(n, role);
    }
    if !p.has("file") {
        // The first of these that exists is the makefile.
        for name in ["GNUmakefile", "makefile", "Makefile"] {
            p.implicit(name, Executes);
        }
    }
    Ok(())
}
