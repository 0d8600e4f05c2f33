//! Per-program argv rules: which invocations of which programs only read.
//!
//! A program is listed only if every option it has was checked for writes, command execution
//! and network access; anything unlisted is not proven. Options that do any of those are denied
//! by name (and by abbreviation). Secrets, redirections and wrappers are checked by the caller,
//! for every program alike.

use super::flags::{deny, operands};
use super::{git, scripts, secrets, sed};

/// How to judge one program's arguments.
pub(super) struct Policy {
    pub check: fn(&[String]) -> Result<(), String>,
    pub globs: Globs,
}

/// What unquoted globs in the arguments may do. A glob expands after this check ran, to names
/// of files anyone could have created (`--pre=sh`, `-delete`, `-o`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Globs {
    /// Not proven with a glob.
    No,
    /// Harmless as file names (the program only lists or measures files), but not as options:
    /// `tree -o`, `du --files0-from=.env` and `wc --files0-from=.env` write or reveal.
    Names,
    /// Harmless even when a name becomes an option: no option of the program writes, runs or
    /// reads a file it names.
    Options,
}

const fn policy(check: fn(&[String]) -> Result<(), String>, globs: bool) -> Option<Policy> {
    Some(Policy { check, globs: if globs { Globs::Names } else { Globs::No } })
}

/// The policy for `program`, if it is a known reader.
pub(super) fn lookup(program: &str) -> Option<Policy> {
    match program {
        // List or measure files; no option writes or runs anything.
        "stat" | "echo" | "realpath" | "readlink" => Some(Policy { check: any, globs: Globs::Options }),
        "wc" => policy(any, true),
        // Recursive listings must not walk home or root (every secret's name and size); a
        // globbed `-R` lists the working directory, which is what `ls *` lists anyway.
        "ls" | "dir" | "vdir" => Some(Policy { check: ls, globs: Globs::Options }),
        "du" => policy(no_broad_root, true),
        "tree" => policy(|a| deny(a, "oR", &["output"]).and_then(|()| no_broad_root(a)), true),
        // Print facts about the system or their arguments.
        "pwd" | "true" | "false" | ":" | "whoami" | "id" | "groups" | "logname" | "uname" | "arch"
        | "nproc" | "uptime" | "tty" | "sleep" | "basename" | "dirname" | "seq" | "yes" | "df" | "type"
        | "which" | "whereis" | "help" | "popd" | "dirs" => policy(any, false),
        // Read files (whose names the caller checks for secrets) and print them.
        "cat" | "tac" | "nl" | "head" | "tail" | "cut" | "paste" | "fold" | "fmt" | "pr" | "expand"
        | "unexpand" | "rev" | "tr" | "comm" | "cmp" | "od" | "hexdump" | "strings" | "column" | "md5sum"
        | "sha1sum" | "sha224sum" | "sha256sum" | "sha384sum" | "sha512sum" | "b2sum" | "cksum" | "sum" => {
            policy(any, false)
        }
        "grep" | "egrep" | "fgrep" => policy(grep, false),
        "diff" => policy(no_broad_root, false),
        "rg" => policy(rg, false),
        "ag" => policy(ag, false),
        "pt" => policy(pt, false),
        "fd" | "fdfind" => {
            policy(|a| deny(a, "xX", &["exec", "exec-batch"]).and_then(|()| no_broad_root(a)), false)
        }
        "find" => policy(find, false),
        "sort" => policy(|a| deny(a, "o", &["output", "compress-program"]), false),
        "uniq" => policy(uniq, false),
        "base64" | "base32" | "basenc" => policy(|a| deny(a, "o", &["output"]), false),
        "file" => policy(|a| deny(a, "C", &["compile"]), false),
        "date" => policy(date, false),
        "printf" => policy(printf, false),
        "test" | "[" => policy(test, false),
        "cd" | "pushd" => policy(cd, false),
        "hash" => policy(hash, false),
        "command" => policy(command_lookup, false),
        "hostname" => policy(|a| no_args(a, "hostname"), false),
        "sed" => policy(sed::check, false),
        "awk" | "gawk" | "mawk" | "nawk" => policy(scripts::awk, false),
        "jq" => policy(scripts::jq, false),
        "git" => policy(git::check, false),
        // Mutating coreutils print their help and exit before doing anything.
        "rm" | "cp" | "mv" | "mkdir" | "rmdir" | "touch" | "chmod" | "chown" | "chgrp" | "ln" | "install"
        | "shred" | "truncate" | "tee" | "dd" | "mktemp" => policy(help_only, false),
        _ => None,
    }
}

fn any(_: &[String]) -> Result<(), String> {
    Ok(())
}

fn no_args(args: &[String], program: &str) -> Result<(), String> {
    match args.is_empty() {
        true => Ok(()),
        false => Err(format!("{program} with arguments can change the system")),
    }
}

fn help_only(args: &[String]) -> Result<(), String> {
    match args {
        [one] if one == "--help" || one == "--version" => Ok(()),
        _ => Err("changes files".into()),
    }
}

/// Recursive searches must not start at home, root or `/etc`, where the secrets live, nor at a
/// parent directory (`..`). Option values count (`--search-path=~`, `--base-directory /`): an
/// operand is any argument not starting with `-`, and whatever follows an option's `=`.
fn no_broad_root(args: &[String]) -> Result<(), String> {
    let broad = |a: &&String| match a.strip_prefix('-') {
        Some(option) => option.split_once('=').is_some_and(|(_, value)| secrets::is_broad_root(value)),
        None => secrets::is_broad_root(a),
    };
    match args.iter().find(broad) {
        Some(root) => Err(format!("searches all of {root}")),
        None => Ok(()),
    }
}

/// `ls -R` walks its operands.
fn ls(args: &[String]) -> Result<(), String> {
    match super::flags::short(args, "R").is_some() || super::flags::long(args, &["recursive"]).is_some() {
        true => no_broad_root(args),
        false => Ok(()),
    }
}

/// grep: recursion reads hidden files too (`.env`), so a recursive search must name the
/// directories it searches, and none of them may be home, root, `/etc` or the working directory.
fn grep(args: &[String]) -> Result<(), String> {
    let recursive = super::flags::short(args, "rR").is_some()
        || super::flags::long(args, &["recursive", "dereference-recursive"]).is_some()
        || args.iter().any(|a| a == "--directories=recurse" || a == "recurse");
    if !recursive {
        return Ok(());
    }
    no_broad_root(args)?;
    let mut files = operands(args, "efmABCdD", GREP_VALUED);
    let pattern_given =
        super::flags::short(args, "ef").is_some() || super::flags::long(args, &["regexp", "file"]).is_some();
    if !pattern_given && !files.is_empty() {
        files.remove(0);
    }
    // `./.`, `src/..`: the working directory by another name.
    let cwd = files.is_empty() || files.iter().any(|f| super::paths::normalize(f) == ".");
    if cwd {
        return Err("searches the working directory, hidden files included".into());
    }
    // The secret policy's tree rule: a named directory below the working directory only.
    match files.iter().find_map(|f| secrets::tree_reaches_secret(f, true)) {
        Some(secret) => Err(format!("searches {secret}")),
        None => Ok(()),
    }
}

/// grep's long options that take a separate value.
const GREP_VALUED: &[&str] = &[
    "regexp",
    "file",
    "max-count",
    "context",
    "after-context",
    "before-context",
    "label",
    "include",
    "exclude",
    "exclude-from",
    "exclude-dir",
    "devices",
    "directories",
    "binary-files",
];

/// ripgrep: `--pre` and `-z` run programs, `--hostname-bin` runs one; hidden and ignored files
/// (`.env`, keys) are where secrets live, so searching them is not proven either.
fn rg(args: &[String]) -> Result<(), String> {
    deny(
        args,
        "zu",
        &["pre", "pre-glob", "search-zip", "hostname-bin", "hidden", "no-ignore*", "unrestricted"],
    )?;
    no_broad_root(args)
}

fn ag(args: &[String]) -> Result<(), String> {
    deny(args, "uUz", &["pager", "hidden", "unrestricted", "skip-vcs-ignores", "search-zip"])?;
    no_broad_root(args)
}

fn pt(args: &[String]) -> Result<(), String> {
    deny(args, "U", &["hidden", "skip-vcs-ignores"])?;
    no_broad_root(args)
}

/// find: the actions that run, delete or write are denied by prefix (`-execdir`, `-fprint0`).
/// Its starting points must not be home, root or a parent (`find ~ -name id_rsa`).
fn find(args: &[String]) -> Result<(), String> {
    const ACTIONS: [&str; 5] = ["-exec", "-ok", "-delete", "-fprint", "-fls"];
    match args.iter().find(|a| ACTIONS.iter().any(|action| a.starts_with(action))) {
        Some(action) => Err(format!("{action} runs or writes")),
        // `-files0-from F` takes the starting points from a file.
        None if args.iter().any(|a| a == "-files0-from") => {
            Err("find -files0-from reads its starting points".into())
        }
        None => no_broad_root(args),
    }
}

/// uniq writes its second operand.
fn uniq(args: &[String]) -> Result<(), String> {
    let files = operands(args, "fsw", &["skip-fields", "skip-chars", "check-chars"]);
    match files.len() {
        0 | 1 => Ok(()),
        _ => Err(format!("writes {}", files[1])),
    }
}

/// date sets the clock with `-s` or a bare `MMDDhhmm` operand.
fn date(args: &[String]) -> Result<(), String> {
    deny(args, "s", &["set"])?;
    match operands(args, "dfr", &["date", "file", "reference"]).into_iter().find(|o| !o.starts_with('+')) {
        Some(o) => Err(format!("operand {o} sets the clock")),
        None => Ok(()),
    }
}

/// `printf -v 'a[$(cmd)]'` evaluates a subscript.
fn printf(args: &[String]) -> Result<(), String> {
    match args.first().map(String::as_str) {
        Some("-v") => Err("assigns a variable".into()),
        _ => Ok(()),
    }
}

/// `test -v` evaluates array subscripts; expansion-like text is not risked.
fn test(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "-v" || a == "-R") {
        return Err("tests a variable by name".into());
    }
    if args.iter().any(|a| a.contains(['$', '`'])) {
        return Err("expansion-like text in a test".into());
    }
    Ok(())
}

/// `cd` is harmless itself, but moving to home or root makes the next recursive read broad.
fn cd(args: &[String]) -> Result<(), String> {
    let targets = operands(args, "", &[]);
    match targets.first() {
        None => Err("changes to the home directory".into()),
        Some(&"-") => Err("changes to an unknown directory".into()),
        Some(t) if secrets::is_broad_root(t) => Err(format!("changes to {t}")),
        Some(_) => Ok(()),
    }
}

/// `hash name` only looks names up; its options change the table.
fn hash(args: &[String]) -> Result<(), String> {
    match args.iter().find(|a| a.starts_with('-')) {
        Some(o) => Err(format!("hash {o}")),
        None => Ok(()),
    }
}

/// `command -v` / `-V` only look a name up (other forms were unwrapped as wrappers).
fn command_lookup(args: &[String]) -> Result<(), String> {
    match args.iter().any(|a| a == "-v" || a == "-V") {
        true => Ok(()),
        false => Err("runs a command".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(line: &str) -> Result<(), String> {
        let mut words = line.split_whitespace().map(str::to_string);
        let program = words.next().unwrap_or_default();
        let args: Vec<String> = words.collect();
        match lookup(&program) {
            Some(p) => (p.check)(&args),
            None => Err("unknown".into()),
        }
    }

    #[test]
    fn readers_pass_and_their_writing_options_do_not() {
        let proven = [
            "ls -la",
            "tree -L 2",
            "rg -n foo -g*.py",
            "rg --files",
            "rg --pretty x",
            "grep -rn TODO src",
            "grep -R -e x lib tests",
            "grep -n TODO",
            "diff -r a b",
            "find . -name x -print",
            "fd -t f src/",
            "sort -n data.txt",
            "uniq -c data.txt",
            "uniq -f 2 data.txt",
            "base64 -w0 file",
            "date +%s",
            "date -d yesterday +%F",
            "file x",
            "cd src",
            "cd -- -weird",
            "command -v rm",
            "hash git",
            "test -f x",
            "rm --help",
            "printf %s x",
            "hostname",
            "ag TODO src",
        ];
        for line in proven {
            assert_eq!(judge(line), Ok(()), "{line}");
        }
        let refused = [
            "tree -o out.txt",
            "tree -Ro x",
            "rg --pre cat x",
            "rg --pre=cat x",
            "rg -z x",
            "rg -uu x",
            "rg --no-ignore-vcs x",
            "rg --hostname-bin=x y",
            "rg password ~",
            "grep -r password /",
            "grep -R x ~",
            "grep -R Cargo.toml -n",
            "grep -r x .",
            "grep -r -e x ./",
            "diff -r ~ /tmp/mirror",
            "find . -exec rm {} ;",
            "find . -execdir x",
            "find . -okdir x",
            "find . -delete",
            "find . -fprint0 /etc/x",
            "find . -fls out",
            "fd -x rm",
            "fd --exec-batch rm",
            "sort -o out in",
            "sort -no out in",
            "sort --out=x",
            "sort --compress-program=sh",
            "uniq in out",
            "base64 -ob64.txt",
            "base64 --output=x",
            "file -C -m magic",
            "date -s 2020-01-01",
            "date 010100002020",
            "printf -v x y",
            "test -v x",
            "test $x",
            "cd",
            "cd ~",
            "cd /",
            "cd -",
            "hash -r",
            "command git",
            "hostname evil",
            "rm -rf x",
            "rm --help x",
            "ag --pager=less x",
            "env",
            "printenv",
            "less README.md",
        ];
        for line in refused {
            assert!(judge(line).is_err(), "{line}");
        }
    }
}
