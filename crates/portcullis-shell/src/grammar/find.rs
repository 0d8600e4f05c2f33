//! GNU find: leading options, starting points, then an expression of primaries with fixed
//! arities (`findutils/find/parser.c`). Starting points end at the first word that looks like
//! an expression; `-exec … ;` runs a command whose words are all [`Role::Executes`].

use super::{Item, Reading, Role, Unread};

use Role::{Executes, Flag, Inert, NamesFiles, Reads, ReadsTree, Writes};

/// What a primary takes after it.
#[derive(Clone, Copy)]
enum Takes {
    Nothing,
    One(Role),
    Two(Role, Role),
    /// `-exec`-style: a command up to `;` (or `{} +`).
    Command,
}

/// Every primary and operator with what it takes (`find --help`, `parser.c`'s `parse_table`).
#[rustfmt::skip]
const PRIMARIES: &[(&str, Takes)] = {
    use Takes::{Command, Nothing, One, Two};
    &[
        ("-depth", Nothing), ("-d", Nothing), ("-follow", Nothing), ("-ignore_readdir_race", Nothing),
        ("-noignore_readdir_race", Nothing), ("-mount", Nothing), ("-xdev", Nothing), ("-noleaf", Nothing),
        ("-warn", Nothing), ("-nowarn", Nothing), ("-daystart", Nothing), ("-true", Nothing),
        ("-false", Nothing), ("-empty", Nothing), ("-executable", Nothing), ("-readable", Nothing),
        ("-writable", Nothing), ("-nouser", Nothing), ("-nogroup", Nothing), ("-print", Nothing),
        ("-print0", Nothing), ("-ls", Nothing), ("-prune", Nothing), ("-quit", Nothing),
        ("-help", Nothing), ("--help", Nothing), ("-version", Nothing), ("--version", Nothing),
        ("-not", Nothing), ("-a", Nothing), ("-and", Nothing), ("-o", Nothing), ("-or", Nothing),
        ("!", Nothing), ("(", Nothing), (")", Nothing), (",", Nothing),
        // Deletes what it matches: the starting points become written trees.
        ("-delete", Nothing),
        ("-maxdepth", One(Inert)), ("-mindepth", One(Inert)), ("-regextype", One(Inert)),
        ("-amin", One(Inert)), ("-atime", One(Inert)), ("-cmin", One(Inert)), ("-ctime", One(Inert)),
        ("-fstype", One(Inert)), ("-gid", One(Inert)), ("-group", One(Inert)), ("-ilname", One(Inert)),
        ("-iname", One(Inert)), ("-inum", One(Inert)), ("-ipath", One(Inert)), ("-iregex", One(Inert)),
        ("-iwholename", One(Inert)), ("-links", One(Inert)), ("-lname", One(Inert)), ("-mmin", One(Inert)),
        ("-mtime", One(Inert)), ("-name", One(Inert)), ("-path", One(Inert)), ("-perm", One(Inert)),
        ("-regex", One(Inert)), ("-size", One(Inert)), ("-type", One(Inert)), ("-uid", One(Inert)),
        ("-used", One(Inert)), ("-user", One(Inert)), ("-wholename", One(Inert)), ("-xtype", One(Inert)),
        ("-context", One(Inert)), ("-printf", One(Inert)),
        ("-anewer", One(Reads)), ("-cnewer", One(Reads)), ("-newer", One(Reads)), ("-samefile", One(Reads)),
        ("-files0-from", One(NamesFiles)),
        ("-fprint", One(Writes)), ("-fprint0", One(Writes)), ("-fls", One(Writes)),
        ("-fprintf", Two(Writes, Inert)),
        ("-exec", Command), ("-execdir", Command), ("-ok", Command), ("-okdir", Command),
    ]
};

/// The canonical name and arity of a primary.
fn primary(name: &str) -> Option<(&'static str, Takes)> {
    match PRIMARIES.iter().find(|(n, _)| *n == name) {
        Some(&(n, takes)) => Some((n, takes)),
        None => newer_xy(name).map(|takes| ("-newerXY", takes)),
    }
}

/// `-newerXY REF`: a date when Y is `t`, else a file whose time is compared.
fn newer_xy(name: &str) -> Option<Takes> {
    let xy = name.strip_prefix("-newer")?.as_bytes();
    match xy {
        [x, y] if b"aBcm".contains(x) && b"aBcmt".contains(y) => {
            Some(Takes::One(if *y == b't' { Inert } else { Reads }))
        }
        _ => None,
    }
}

/// findutils' `looks_like_expression`.
fn expression_starts(word: &str, leading: bool) -> bool {
    match word {
        "!" | "(" => true,
        ")" | "," => !leading,
        w => w.len() > 1 && w.starts_with('-'),
    }
}

pub(crate) fn read(args: &[String]) -> Result<Reading<'_>, Unread> {
    let mut items = Vec::new();
    let mut i = 0;
    // Leading options: -H -L -P, -D LIST, -O[LEVEL], and `--`.
    while let Some(w) = args.get(i).map(String::as_str) {
        match w {
            "-H" | "-L" | "-P" => {
                let name = ["H", "L", "P"].into_iter().find(|n| w.ends_with(n));
                items.push(Item { text: w, role: Flag, option: name });
            }
            "-D" => {
                let list = args.get(i + 1).ok_or_else(|| Unread::MissingValue(w.into()))?;
                items.push(Item { text: list, role: Inert, option: Some("D") });
                i += 1;
            }
            "--" => {
                items.push(Item { text: w, role: Flag, option: Some("--") });
                i += 1;
                break;
            }
            _ if w.starts_with("-O") => items.push(Item { text: &w[2..], role: Inert, option: Some("O") }),
            _ => break,
        }
        i += 1;
    }
    let mut starts = Vec::new();
    while let Some(w) = args.get(i).map(String::as_str) {
        if expression_starts(w, true) {
            break;
        }
        starts.push(items.len());
        items.push(Item { text: w, role: ReadsTree, option: None });
        i += 1;
    }
    let mut deletes = false;
    while let Some(w) = args.get(i).map(String::as_str) {
        i += 1;
        let (name, takes) = primary(w).ok_or_else(|| Unread::UnknownOption(w.into()))?;
        let option = Some(name);
        deletes |= name == "-delete";
        let missing = || Unread::MissingValue(w.into());
        match takes {
            Takes::Nothing => items.push(Item { text: w, role: Flag, option }),
            Takes::One(role) => {
                items.push(Item { text: args.get(i).ok_or_else(missing)?, role, option });
                i += 1;
            }
            Takes::Two(a, b) => {
                let (Some(x), Some(y)) = (args.get(i), args.get(i + 1)) else {
                    return Err(missing());
                };
                items.push(Item { text: x, role: a, option });
                items.push(Item { text: y, role: b, option });
                i += 2;
            }
            Takes::Command => i = command(args, i, w, option, &mut items)?,
        }
    }
    if starts.is_empty() {
        items.push(Item { text: ".", role: ReadsTree, option: None });
        starts.push(items.len() - 1);
    }
    if deletes {
        for s in starts {
            items[s].role = Writes;
        }
    }
    Ok(Reading::plain(items))
}

/// `-exec CMD ARGS ;` or `-exec CMD ARGS {} +`: returns the index after the terminator.
fn command<'a>(
    args: &'a [String],
    from: usize,
    primary: &str,
    option: Option<&'static str>,
    items: &mut Vec<Item<'a>>,
) -> Result<usize, Unread> {
    let mut j = from;
    while let Some(w) = args.get(j).map(String::as_str) {
        let plus_ends = w == "+" && j > from && args[j - 1] == "{}";
        if w == ";" || plus_ends {
            if j == from {
                return Err(Unread::MissingValue(primary.into()));
            }
            items.push(Item { text: w, role: Flag, option });
            return Ok(j + 1);
        }
        let role = if w == "{}" { Inert } else { Executes };
        items.push(Item { text: w, role, option });
        j += 1;
    }
    Err(Unread::MissingValue(primary.into()))
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};

    use super::{Takes, PRIMARIES};

    /// Every primary the table lists, with values of its arity, is known to the installed find
    /// and takes no more values than listed (run in a scratch directory; those that run commands
    /// or delete are not run).
    #[test]
    fn the_installed_find_knows_every_primary_the_table_lists() {
        let ok =
            Command::new("find").arg("--version").stdout(Stdio::null()).status().is_ok_and(|s| s.success());
        if !ok {
            eprintln!("find differential: find not installed, skipped");
            return;
        }
        let dir = std::env::temp_dir().join(format!("portcullis-grammar-find-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        std::fs::write(dir.join("ref"), "").expect("reference file");
        let control = Command::new("find").args([".", "-portcullis-frob"]).current_dir(&dir).output();
        let err = control.map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).unwrap_or_default();
        assert!(err.contains("unknown predicate"), "find control not refused: {err}");
        let (mut checked, mut unknown) = (0, Vec::new());
        for (primary, takes) in PRIMARIES {
            let values: &[&str] = match takes {
                Takes::Nothing => &[],
                Takes::One(_) => &["1"],
                Takes::Two(..) => &["out", "%p"],
                Takes::Command => continue,
            };
            if matches!(
                *primary,
                "-delete" | "-ok" | "-okdir" | "!" | "(" | ")" | "," | "-not" | "-a" | "-and" | "-o" | "-or"
            ) {
                continue;
            }
            let value: Vec<&str> = match *primary {
                "-anewer" | "-cnewer" | "-newer" | "-samefile" | "-files0-from" => vec!["ref"],
                "-regextype" => vec!["posix-basic"],
                "-type" | "-xtype" => vec!["f"],
                "-user" => vec!["root"],
                "-group" => vec!["root"],
                _ => values.to_vec(),
            };
            checked += 1;
            let out = Command::new("find")
                .arg(".")
                .arg(primary)
                .args(&value)
                .current_dir(&dir)
                .env("LC_ALL", "C")
                .stdin(Stdio::null())
                .output();
            let err = out.map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).unwrap_or_default();
            let misread = ["unknown predicate", "missing argument", "paths must precede", "unexpected extra"];
            if misread.iter().any(|m| err.contains(m)) {
                unknown.push(format!("{primary} {value:?}: {err}"));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        eprintln!("find differential: {checked} primaries checked, {} unknown to find", unknown.len());
        assert!(unknown.is_empty(), "{}", unknown.join("\n"));
    }
}
