//! Builtins and small programs that print facts or their arguments: echo, printf, test, `[`,
//! true, pwd, uname, id and the like. Their operands name nothing (test's file operands are
//! only examined, not read).

use super::spec::{f, gnu, inert, none, v, Grammar, Longs, Order};
use super::{Item, Reading, Role, Unread};

use Role::{Flag, Inert};

/// bash's `echo`: leading words made only of `-n`, `-e`, `-E` letters are options; everything
/// else (including `--`) is printed.
pub(crate) fn echo(args: &[String]) -> Result<Reading<'_>, Unread> {
    let mut options = true;
    let items = args
        .iter()
        .map(|a| {
            let letters = a.strip_prefix('-').filter(|l| !l.is_empty());
            options &= letters.is_some_and(|l| l.chars().all(|c| "neE".contains(c)));
            let role = if options { Flag } else { Inert };
            Item { text: a, role, option: options.then_some("echo") }
        })
        .collect();
    Ok(Reading::plain(items))
}

/// bash's `printf FORMAT [ARGS]`: `-v NAME` assigns a shell variable (and evaluates array
/// subscripts), so it is not read; `--` may precede the format.
pub(crate) fn printf(args: &[String]) -> Result<Reading<'_>, Unread> {
    let mut items = Vec::new();
    let mut rest = args;
    if let Some((first, after)) = args.split_first() {
        if first == "--" {
            items.push(Item { text: first, role: Flag, option: Some("--") });
            rest = after;
        } else if first.len() > 1 && first.starts_with('-') {
            return Err(Unread::UnknownOption(first.clone()));
        }
    }
    items.extend(rest.iter().map(|a| Item { text: a, role: Inert, option: None }));
    Ok(Reading::plain(items))
}

/// `test EXPR` and `[ EXPR ]`: every word is an operator or a string. `-v` and `-R` name
/// shell variables, whose array subscripts bash evaluates (`-v 'a[$(id)]'`): not read.
pub(crate) fn test(args: &[String]) -> Result<Reading<'_>, Unread> {
    expression(args)
}

pub(crate) fn bracket(args: &[String]) -> Result<Reading<'_>, Unread> {
    match args.split_last() {
        Some((last, expr)) if last == "]" => {
            let mut reading = expression(expr)?;
            reading.items.push(Item { text: last, role: Flag, option: Some("]") });
            Ok(reading)
        }
        _ => Err(Unread::MissingValue("]".into())),
    }
}

fn expression(args: &[String]) -> Result<Reading<'_>, Unread> {
    if let Some(a) = args.iter().find(|a| *a == "-v" || *a == "-R") {
        return Err(Unread::UnknownOption(a.clone()));
    }
    let items = args.iter().map(|a| Item { text: a, role: Inert, option: None }).collect();
    Ok(Reading::plain(items))
}

/// `true`, `false`, `:` ignore their arguments.
pub(crate) fn ignores(args: &[String]) -> Result<Reading<'_>, Unread> {
    let items = args.iter().map(|a| Item { text: a, role: Inert, option: None }).collect();
    Ok(Reading::plain(items))
}

/// bash's `pwd [-LP]`.
pub(crate) const PWD: Grammar = Grammar {
    options: &[f("L", ""), f("P", "")],
    longs: Longs::Exact,
    order: Order::Posix,
    digits: false,
    operands: none,
};

pub(crate) const UNAME: Grammar = gnu(
    &[
        f("a", "all"),
        f("s", "kernel-name"),
        f("s", "sysname").named("kernel-name"),
        f("n", "nodename"),
        f("r", "kernel-release"),
        f("r", "release").named("kernel-release"),
        f("v", "kernel-version"),
        f("m", "machine"),
        f("p", "processor"),
        f("i", "hardware-platform"),
        f("o", "operating-system"),
        f("", "help"),
        f("", "version"),
    ],
    none,
);

pub(crate) const ID: Grammar = gnu(
    &[
        f("a", ""),
        f("Z", "context"),
        f("g", "group"),
        f("G", "groups"),
        f("n", "name"),
        f("r", "real"),
        f("u", "user"),
        f("z", "zero"),
        f("", "help"),
        f("", "version"),
    ],
    inert,
);

/// Programs with only `--help` / `--version` and string operands (`sleep 1`, `whoami`).
pub(crate) const PLAIN: Grammar = gnu(&[f("", "help"), f("", "version")], inert);

pub(crate) const NPROC: Grammar =
    gnu(&[f("", "all"), v("", "ignore", Inert), f("", "help"), f("", "version")], none);

/// bash's `type [-afptP] NAME...` and debianutils' `which [-as] NAME...`: names looked up.
pub(crate) const TYPE: Grammar = Grammar {
    options: &[f("a", ""), f("f", ""), f("p", ""), f("t", ""), f("P", "")],
    longs: Longs::Exact,
    order: Order::Posix,
    digits: false,
    operands: inert,
};

pub(crate) const WHICH: Grammar = Grammar {
    options: &[f("a", ""), f("s", "")],
    longs: Longs::Exact,
    order: Order::Posix,
    digits: false,
    operands: inert,
};

/// bash's `hash NAME...` remembers where programs are; its options change the table.
pub(crate) const HASH: Grammar =
    Grammar { options: &[], longs: Longs::Exact, order: Order::Posix, digits: false, operands: inert };

/// bash's `help [-dms] [PATTERN]`.
pub(crate) const HELP: Grammar = Grammar {
    options: &[f("d", ""), f("m", ""), f("s", "")],
    longs: Longs::Exact,
    order: Order::Posix,
    digits: false,
    operands: inert,
};

/// bash's `cd [-L|-P [-e]] [-@] [DIR]` and `pushd [-n] [DIR]`: DIR is where later relative
/// paths resolve; `cd` alone goes home (`~`). `cd -`, `pushd +N` go to a directory the words do
/// not name, and are not read.
pub(crate) fn cd(args: &[String]) -> Result<Reading<'_>, Unread> {
    change_directory(args, "LPe@", true)
}

pub(crate) fn pushd(args: &[String]) -> Result<Reading<'_>, Unread> {
    change_directory(args, "n", false)
}

fn change_directory<'a>(args: &'a [String], letters: &str, home: bool) -> Result<Reading<'a>, Unread> {
    let mut items = Vec::new();
    let mut rest = args;
    while let Some((w, after)) = rest.split_first() {
        if w == "--" {
            items.push(Item { text: w, role: Flag, option: Some("--") });
            rest = after;
            break;
        }
        let Some(cluster) = w.strip_prefix('-').filter(|c| !c.is_empty()) else { break };
        if let Some(c) = cluster.chars().find(|c| !letters.contains(*c)) {
            return Err(Unread::UnknownOption(format!("-{c}")));
        }
        items.push(Item { text: w, role: Flag, option: Some("cd") });
        rest = after;
    }
    match rest {
        [] if home => items.push(Item { text: "~", role: Role::Chdir, option: None }),
        [] => return Err(Unread::Unplaced("pushd".into())),
        [dir] if dir == "-" || dir.starts_with('+') => return Err(Unread::Unplaced(dir.clone())),
        [dir] => items.push(Item { text: dir, role: Role::Chdir, option: None }),
        [_, extra, ..] => return Err(Unread::Unplaced(extra.clone())),
    }
    Ok(Reading::plain(items))
}

/// bash's `dirs [-clpv] [+N|-N]` prints the directory stack (`-c` clears it).
pub(crate) fn dirs(args: &[String]) -> Result<Reading<'_>, Unread> {
    let mut items = Vec::new();
    for a in args {
        let rotation = (a.starts_with('+') || a.starts_with('-'))
            && a.len() > 1
            && a[1..].bytes().all(|b| b.is_ascii_digit());
        let letters = a.strip_prefix('-').filter(|l| !l.is_empty() && l.chars().all(|c| "clpv".contains(c)));
        match (rotation, letters) {
            (true, _) => items.push(Item { text: a, role: Inert, option: Some("N") }),
            (false, Some(_)) => items.push(Item { text: a, role: Flag, option: Some("dirs") }),
            (false, None) => return Err(Unread::UnknownOption(a.clone())),
        }
    }
    Ok(Reading::plain(items))
}

/// bash's `popd [-n] [+N|-N]`: only `-n` forms (which leave the directory alone) are read; a
/// popd that changes directory goes where the stack says, which the words do not.
pub(crate) fn popd(args: &[String]) -> Result<Reading<'_>, Unread> {
    match args.first().map(String::as_str) {
        Some("-n") => dirs(&args[1..]).map(|mut r| {
            r.items.insert(0, Item { text: &args[0], role: Flag, option: Some("n") });
            r
        }),
        _ => Err(Unread::Unplaced("popd".into())),
    }
}
