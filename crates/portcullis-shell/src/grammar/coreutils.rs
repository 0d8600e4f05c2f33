//! GNU coreutils that read files and print: their option tables, from the `long_options`
//! arrays and getopt strings of coreutils' `src/*.c`.

use super::spec::{f, gnu, inert, o, reads, v, Grammar, Parsed};
use super::{Role, Unread};

use Role::{Executes, Inert, NamesFiles, Reads, Writes};

pub(crate) const CAT: Grammar = gnu(
    &[
        f("b", "number-nonblank"),
        f("n", "number"),
        f("s", "squeeze-blank"),
        f("v", "show-nonprinting"),
        f("E", "show-ends"),
        f("T", "show-tabs"),
        f("A", "show-all"),
        f("e", ""),
        f("t", ""),
        f("u", ""),
        f("", "help"),
        f("", "version"),
    ],
    reads,
);

pub(crate) const HEAD: Grammar = Grammar {
    digits: true,
    ..gnu(
        &[
            v("c", "bytes", Inert),
            v("n", "lines", Inert),
            f("", "-presume-input-pipe"),
            f("q", "quiet"),
            f("q", "silent").named("quiet"),
            f("v", "verbose"),
            f("z", "zero-terminated"),
            f("", "help"),
            f("", "version"),
        ],
        reads,
    )
};

/// `head -5c file`: the obsolete first-word count, a dash, digits, then letters.
pub(crate) fn head_obsolete(args: &[String]) -> bool {
    let Some(rest) = args.first().and_then(|a| a.strip_prefix('-')) else {
        return false;
    };
    let letters = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    letters.len() < rest.len() && letters.chars().all(|c| "cbkmlqvz".contains(c))
}

pub(crate) const TAIL: Grammar = Grammar {
    digits: true,
    ..gnu(
        &[
            v("c", "bytes", Inert),
            o("", "follow", Inert),
            f("f", "").named("follow"),
            f("F", ""),
            v("n", "lines", Inert),
            v("", "max-unchanged-stats", Inert),
            f("", "-disable-inotify"),
            v("", "pid", Inert),
            f("", "-presume-input-pipe"),
            f("q", "quiet"),
            f("q", "silent").named("quiet"),
            f("", "retry"),
            v("s", "sleep-interval", Inert),
            f("v", "verbose"),
            f("z", "zero-terminated"),
            f("", "help"),
            f("", "version"),
        ],
        reads,
    )
};

/// `tail -5f file`, `tail +3 file`: coreutils' `parse_obsolete_option`, which applies only
/// with one option word and at most one file.
pub(crate) fn tail_obsolete(args: &[String]) -> bool {
    let count_ok = match args {
        [_] => true,
        [_, file] => !(file.starts_with('-') && file.len() > 1),
        [_, dashes, ..] => args.len() <= 3 && dashes == "--",
        [] => false,
    };
    let Some(first) = args.first().filter(|_| count_ok) else {
        return false;
    };
    let rest = match first.as_bytes().first() {
        Some(b'+') => &first[1..],
        Some(b'-') => {
            let p = &first[1..];
            // "-" is standard input and "-c" wants a value, in the standard form.
            if p.is_empty() || p == "c" {
                return false;
            }
            p
        }
        _ => return false,
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    let rest = rest.strip_prefix(['b', 'c', 'l']).unwrap_or(rest);
    let rest = rest.strip_prefix('f').unwrap_or(rest);
    rest.is_empty()
}

pub(crate) const WC: Grammar = gnu(
    &[
        f("c", "bytes"),
        f("m", "chars"),
        f("l", "lines"),
        f("w", "words"),
        v("", "files0-from", NamesFiles),
        f("L", "max-line-length"),
        f("", "help"),
        f("", "version"),
    ],
    reads,
);

pub(crate) const SORT: Grammar = gnu(
    &[
        f("b", "ignore-leading-blanks"),
        o("", "check", Inert),
        f("c", "").named("check"),
        f("C", ""),
        v("", "compress-program", Executes),
        f("", "debug"),
        f("d", "dictionary-order"),
        f("f", "ignore-case"),
        v("", "files0-from", NamesFiles),
        f("g", "general-numeric-sort"),
        f("i", "ignore-nonprinting"),
        v("k", "key", Inert),
        f("m", "merge"),
        f("M", "month-sort"),
        f("n", "numeric-sort"),
        f("h", "human-numeric-sort"),
        f("V", "version-sort"),
        f("R", "random-sort"),
        v("", "random-source", Reads),
        v("", "sort", Inert),
        v("o", "output", Writes),
        f("r", "reverse"),
        f("s", "stable"),
        v("", "batch-size", Inert),
        v("S", "buffer-size", Inert),
        v("t", "field-separator", Inert),
        // Temporary files are created there.
        v("T", "temporary-directory", Writes),
        f("u", "unique"),
        f("z", "zero-terminated"),
        v("", "parallel", Inert),
        v("y", "", Inert),
        f("", "help"),
        f("", "version"),
    ],
    reads,
);

pub(crate) const UNIQ: Grammar = Grammar {
    digits: true,
    ..gnu(
        &[
            f("c", "count"),
            f("d", "repeated"),
            o("", "all-repeated", Inert),
            f("D", "").named("all-repeated"),
            o("", "group", Inert),
            f("i", "ignore-case"),
            f("u", "unique"),
            v("f", "skip-fields", Inert),
            v("s", "skip-chars", Inert),
            v("w", "check-chars", Inert),
            f("z", "zero-terminated"),
            f("", "help"),
            f("", "version"),
        ],
        input_output,
    )
};

/// `uniq [INPUT [OUTPUT]]`, `comm`-like programs with one output: the second operand is
/// written.
fn input_output(p: &mut Parsed<'_>) -> Result<(), Unread> {
    too_many(p, 2)?;
    p.set(0, Reads);
    p.set(1, Writes);
    Ok(())
}

/// Refuse more than `max` operands (the program refuses them too, but a reading that placed
/// them would be a guess).
pub(crate) fn too_many(p: &Parsed<'_>, max: usize) -> Result<(), Unread> {
    match p.operands.get(max) {
        Some(&i) => Err(Unread::Unplaced(p.items[i].text.to_string())),
        None => Ok(()),
    }
}

/// base64, base32: `-d -i -w COLS [FILE]`.
pub(crate) const BASE64: Grammar = gnu(
    &[f("d", "decode"), v("w", "wrap", Inert), f("i", "ignore-garbage"), f("", "help"), f("", "version")],
    one_file,
);

/// basenc adds the encodings as options.
pub(crate) const BASENC: Grammar = gnu(
    &[
        f("d", "decode"),
        v("w", "wrap", Inert),
        f("i", "ignore-garbage"),
        f("", "base64"),
        f("", "base64url"),
        f("", "base32"),
        f("", "base32hex"),
        f("", "base16"),
        f("", "base2msbf"),
        f("", "base2lsbf"),
        f("", "z85"),
        f("", "help"),
        f("", "version"),
    ],
    one_file,
);

fn one_file(p: &mut Parsed<'_>) -> Result<(), Unread> {
    too_many(p, 1)?;
    p.all(Reads);
    Ok(())
}

pub(crate) const CUT: Grammar = gnu(
    &[
        v("b", "bytes", Inert),
        v("c", "characters", Inert),
        v("f", "fields", Inert),
        v("d", "delimiter", Inert),
        f("n", ""),
        f("s", "only-delimited"),
        v("", "output-delimiter", Inert),
        f("", "complement"),
        f("z", "zero-terminated"),
        f("", "help"),
        f("", "version"),
    ],
    reads,
);

pub(crate) const TAC: Grammar = gnu(
    &[f("b", "before"), f("r", "regex"), v("s", "separator", Inert), f("", "help"), f("", "version")],
    reads,
);

pub(crate) const PASTE: Grammar = gnu(
    &[
        f("s", "serial"),
        v("d", "delimiters", Inert),
        f("z", "zero-terminated"),
        f("", "help"),
        f("", "version"),
    ],
    reads,
);

pub(crate) const NL: Grammar = gnu(
    &[
        v("h", "header-numbering", Inert),
        v("b", "body-numbering", Inert),
        v("f", "footer-numbering", Inert),
        v("v", "starting-line-number", Inert),
        v("i", "line-increment", Inert),
        f("p", "no-renumber"),
        v("l", "join-blank-lines", Inert),
        v("s", "number-separator", Inert),
        v("w", "number-width", Inert),
        v("n", "number-format", Inert),
        v("d", "section-delimiter", Inert),
        f("", "help"),
        f("", "version"),
    ],
    reads,
);

pub(crate) const FOLD: Grammar = Grammar {
    digits: true,
    ..gnu(
        &[f("b", "bytes"), f("s", "spaces"), v("w", "width", Inert), f("", "help"), f("", "version")],
        reads,
    )
};

pub(crate) const EXPAND: Grammar = Grammar {
    digits: true,
    ..gnu(&[v("t", "tabs", Inert), f("i", "initial"), f("", "help"), f("", "version")], reads)
};

pub(crate) const COMM: Grammar = gnu(
    &[
        f("1", ""),
        f("2", ""),
        f("3", ""),
        f("", "check-order"),
        f("", "nocheck-order"),
        v("", "output-delimiter", Inert),
        f("", "total"),
        f("z", "zero-terminated"),
        f("", "help"),
        f("", "version"),
    ],
    reads,
);

/// Programs whose operands are strings (`basename`, `dirname`, `seq`).
pub(crate) const BASENAME: Grammar = Grammar {
    order: super::spec::Order::Posix,
    ..gnu(
        &[f("a", "multiple"), v("s", "suffix", Inert), f("z", "zero"), f("", "help"), f("", "version")],
        inert,
    )
};

pub(crate) const DIRNAME: Grammar = gnu(&[f("z", "zero"), f("", "help"), f("", "version")], inert);

pub(crate) const REALPATH: Grammar = gnu(
    &[
        f("e", "canonicalize-existing"),
        f("m", "canonicalize-missing"),
        v("", "relative-to", Inert),
        v("", "relative-base", Inert),
        f("q", "quiet"),
        f("s", "strip"),
        f("s", "no-symlinks").named("strip"),
        f("z", "zero"),
        f("L", "logical"),
        f("P", "physical"),
        f("", "help"),
        f("", "version"),
    ],
    inert,
);

pub(crate) const READLINK: Grammar = gnu(
    &[
        f("f", "canonicalize"),
        f("e", "canonicalize-existing"),
        f("m", "canonicalize-missing"),
        f("n", "no-newline"),
        f("q", "quiet"),
        f("s", "silent"),
        f("v", "verbose"),
        f("z", "zero"),
        f("", "help"),
        f("", "version"),
    ],
    inert,
);

/// `tr [-cdst] SET1 [SET2]`: no file operands at all.
pub(crate) const TR: Grammar = Grammar {
    order: super::spec::Order::Posix,
    ..gnu(
        &[
            f("c", "complement"),
            f("C", ""),
            f("A", ""),
            f("d", "delete"),
            f("s", "squeeze-repeats"),
            f("t", "truncate-set1"),
            f("", "help"),
            f("", "version"),
        ],
        inert,
    )
};
