//! sed, awk and jq: programs whose first operand (or `-e`) is program text in their own
//! language ([`Role::Script`], judged by that language's checker), and whose options load
//! more program text from files ([`Role::Executes`]).

use super::spec::{f, gnu, o, pair, v, Grammar, Longs, Order, Parsed};
use super::{Role, Unread};

use Role::{Executes, Inert, Reads, Script, Writes};

/// GNU sed 4.x (`sed/sed.c`).
pub(crate) const SED: Grammar = gnu(
    &[
        f("n", "quiet"),
        f("n", "silent").named("quiet"),
        f("", "debug"),
        v("e", "expression", Script),
        v("f", "file", Executes),
        f("", "follow-symlinks"),
        // The suffix names the backup files written beside each input (`-i'bak/*'`).
        o("i", "in-place", Writes),
        v("l", "line-length", Inert),
        f("", "posix"),
        f("E", "regexp-extended"),
        f("r", "").named("regexp-extended"),
        f("s", "separate"),
        f("b", "binary"),
        f("", "sandbox"),
        f("u", "unbuffered"),
        f("z", "null-data"),
        f("", "help"),
        f("", "version"),
    ],
    sed_operands,
);

/// The first operand is the script unless `-e`/`-f` gave one; `-i` rewrites every file. A
/// backup suffix writes FILE+SUFFIX beside each file; one with `/` or `*` (`-i'bak/*'`) puts
/// the backups elsewhere, which no item names: not read.
fn sed_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    if let Some(suffix) = p.values("in-place").find(|s| s.contains(['/', '*'])) {
        return Err(Unread::Unplaced(suffix.to_string()));
    }
    let role = if p.has("in-place") { Writes } else { Reads };
    p.all(role);
    if !p.has("expression") && !p.has("file") {
        p.set(0, Script);
    }
    Ok(())
}

/// POSIX awk: `-F FS`, `-v var=val`, `-f progfile`, then the program unless `-f` gave one.
/// Implementation-specific options (gawk's long options, `-W`) are not read: which awk runs is
/// not known.
pub(crate) const AWK: Grammar = Grammar {
    options: &[v("F", "", Inert), v("v", "", Inert), v("f", "", Executes)],
    longs: Longs::Exact,
    order: Order::Posix,
    digits: false,
    operands: awk_operands,
};

/// After the program, `name=value` operands are assignments, the rest input files.
fn awk_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    for n in 0..p.operands.len() {
        let text = p.items[p.operands[n]].text;
        let role = if is_assignment(text) { Inert } else { Reads };
        p.set(n, role);
    }
    if !p.has("f") {
        p.set(0, Script);
    }
    Ok(())
}

/// awk's operand assignment: an identifier, then `=`.
fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            let mut chars = name.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// jq 1.6/1.7 (`src/main.c`): exact long names, no `=`, options anywhere.
pub(crate) const JQ: Grammar = Grammar {
    options: &[
        f("s", "slurp"),
        f("r", "raw-output"),
        f("j", "join-output"),
        f("a", "ascii-output"),
        f("c", "compact-output"),
        f("C", "color-output"),
        f("M", "monochrome-output"),
        f("S", "sort-keys"),
        f("R", "raw-input"),
        f("n", "null-input"),
        // The first operand is then a file of jq program text.
        f("f", "from-file"),
        v("L", "", Executes),
        f("e", "exit-status"),
        f("", "tab"),
        v("", "indent", Inert),
        f("", "unbuffered"),
        f("", "seq"),
        f("", "stream"),
        f("", "stream-errors"),
        pair("", "arg", Inert, Inert),
        pair("", "argjson", Inert, Inert),
        pair("", "slurpfile", Inert, Reads),
        pair("", "argfile", Inert, Reads),
        pair("", "rawfile", Inert, Reads),
        f("", "args"),
        f("", "jsonargs"),
        f("h", "help"),
        f("V", "version"),
    ],
    longs: Longs::ExactNoEquals,
    order: Order::Permute,
    digits: false,
    operands: jq_operands,
};

/// The filter (or, with `-f`, the file holding it), then input files — or, after `--args` /
/// `--jsonargs`, string values. jq's `--` differs across versions, so it is not read.
fn jq_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    if p.has("--") {
        return Err(Unread::UnknownOption("--".into()));
    }
    let rest = if p.has("args") || p.has("jsonargs") { Inert } else { Reads };
    p.all(rest);
    p.set(0, if p.has("from-file") { Executes } else { Script });
    Ok(())
}
