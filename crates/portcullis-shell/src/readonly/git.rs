//! Which git invocations only read.
//!
//! Git has many ways to run a program from its argv: `-c core.pager=…`, `--config-env`,
//! `--exec-path`, `-p` (force the pager), `--output`, `--ext-diff`, `grep -O`, aliases. So the
//! global options are an allowlist, the subcommands are an allowlist of readers, and the
//! subcommands that also write (`branch`, `tag`, `stash`, `config`, `remote`) are accepted only
//! in their listing forms. What git runs from its *existing* configuration (`core.fsmonitor`,
//! textconv drivers) is the repository's own state, not the command's, and is out of scope.

use super::flags::{deny, long, operands, short};

/// Long options that make a reading subcommand write or run something.
const DENIED_LONG: &[&str] =
    &["output", "ext-diff", "exec", "open-files-in-pager", "upload-pack", "receive-pack", "paginate"];

pub(super) fn check(args: &[String]) -> Result<(), String> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.as_str() {
            // Like `cd DIR && git …`, and judged as `cd` is: not home, root or a parent.
            "-C" => match args.get(i + 1) {
                Some(dir) if super::secrets::is_broad_root(dir) => return Err(format!("git -C {dir}")),
                Some(_) => i += 1,
                None => return Err("git -C without a directory".into()),
            },
            "--no-pager"
            | "-P"
            | "--no-optional-locks"
            | "--no-replace-objects"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--no-advice" => {}
            "--version" if args.len() == 1 => return Ok(()),
            a if a.starts_with('-') => return Err(format!("git option {a}")),
            _ => break,
        }
        i += 1;
    }
    let Some(sub) = args.get(i) else {
        return Err("git without a subcommand".into());
    };
    let rest = &args[i + 1..];
    deny(rest, "", DENIED_LONG)?;
    match sub.as_str() {
        "status" | "log" | "show" | "diff" | "whatchanged" | "shortlog" | "blame" | "annotate"
        | "ls-files" | "ls-tree" | "rev-parse" | "rev-list" | "describe" | "cat-file" | "merge-base"
        | "name-rev" | "for-each-ref" | "show-ref" | "count-objects" | "check-ignore" | "check-attr"
        | "cherry" | "show-branch" | "diff-tree" | "diff-files" | "diff-index" | "version" => Ok(()),
        // `--no-index` (and `--untracked`) search the working tree's files, hidden ones included,
        // as `grep -r .` does.
        "grep" => deny(rest, "O", &["no-index", "untracked"]),
        "branch" => branch(rest),
        "tag" => tag(rest),
        "stash" => match rest.first().map(String::as_str) {
            Some("list" | "show") => Ok(()),
            _ => Err("git stash changes the stash".into()),
        },
        "remote" => match rest.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            [] | ["-v"] | ["--verbose"] => Ok(()),
            ["get-url", ..] => Ok(()),
            _ => Err("git remote beyond listing".into()),
        },
        "reflog" => match rest.first().map(String::as_str) {
            None | Some("show") => Ok(()),
            Some(a) if a.starts_with('-') => Ok(()),
            Some(a) => Err(format!("git reflog {a}")),
        },
        "worktree" => match rest.first().map(String::as_str) {
            Some("list") => Ok(()),
            _ => Err("git worktree beyond listing".into()),
        },
        "config" => config(rest),
        other => Err(format!("git {other} is not a known read-only subcommand")),
    }
}

/// Listing options of `git branch`; those taking a value may also take the next argument.
const BRANCH_LISTING: &[&str] = &[
    "--all",
    "--remotes",
    "--list",
    "--verbose",
    "--quiet",
    "--show-current",
    "--no-color",
    "--no-column",
    "--no-abbrev",
    "--ignore-case",
    "--omit-empty",
];
const BRANCH_VALUED: &[&str] = &[
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
    "--sort",
    "--format",
    "--color",
    "--column",
    "--abbrev",
];
/// Options that put `branch` / `tag` into list mode, so operands are patterns.
const LIST_MODE: &[&str] =
    &["-l", "--list", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"];

fn branch(args: &[String]) -> Result<(), String> {
    listing(args, "arlvqi", BRANCH_LISTING, BRANCH_VALUED, "branch")
}

fn tag(args: &[String]) -> Result<(), String> {
    const TAG_LISTING: &[&str] = &["--list", "--no-color", "--no-column", "--ignore-case", "--omit-empty"];
    listing(args, "lin0123456789", TAG_LISTING, BRANCH_VALUED, "tag")
}

/// Accept only listing options; operands only in explicit list mode (else they create).
fn listing(args: &[String], shorts: &str, flags: &[&str], valued: &[&str], what: &str) -> Result<(), String> {
    let mut list_mode = false;
    let mut has_operand = false;
    let mut iter = args.iter().map(String::as_str);
    while let Some(a) = iter.next() {
        let key = a.split_once('=').map_or(a, |(k, _)| k);
        if LIST_MODE.contains(&key) {
            list_mode = true;
        }
        if a.starts_with("--") {
            if valued.contains(&key) {
                if !a.contains('=') && key != "--color" && key != "--column" && key != "--abbrev" {
                    iter.next();
                }
            } else if !flags.contains(&a) {
                return Err(format!("git {what} {a}"));
            }
        } else if let Some(cluster) = a.strip_prefix('-') {
            if cluster.is_empty() || !cluster.chars().all(|c| shorts.contains(c)) {
                return Err(format!("git {what} {a}"));
            }
            list_mode |= cluster.contains('l');
        } else {
            has_operand = true;
        }
    }
    if has_operand && !list_mode {
        return Err(format!("git {what} with a name creates it"));
    }
    Ok(())
}

/// Configuration keys that hold credentials or tokens.
fn is_sensitive_key(key: &str) -> bool {
    let key = key.to_lowercase();
    key.starts_with("credential")
        || key.starts_with("http.")
        || key.starts_with("url.")
        || ["token", "password", "passwd", "secret", "auth", "cookie", "extraheader", "pass"]
            .iter()
            .any(|w| key.contains(w))
}

/// `git config --get KEY` (or `git config get KEY`) for a key that holds no credential.
fn config(args: &[String]) -> Result<(), String> {
    const SCOPE: &[&str] = &[
        "--global",
        "--local",
        "--system",
        "--worktree",
        "--show-origin",
        "--show-scope",
        "--null",
        "-z",
        "--bool",
        "--int",
        "--path",
        "--bool-or-int",
        "--expiry-date",
        "--all",
    ];
    let (getting, rest) = match args.first().map(String::as_str) {
        Some("get") => (true, &args[1..]),
        _ => (false, args),
    };
    let mut got = getting;
    for a in rest.iter().filter(|a| a.starts_with('-')) {
        let key = a.split_once('=').map_or(a.as_str(), |(k, _)| k);
        match key {
            "--get" | "--get-all" => got = true,
            "--type" | "--default" if a.contains('=') => {}
            k if SCOPE.contains(&k) => {}
            _ => return Err(format!("git config {a}")),
        }
    }
    if !got {
        return Err("git config without --get".into());
    }
    if short(rest, "lef").is_some() || long(rest, &["list", "edit", "file", "blob"]).is_some() {
        return Err("git config beyond a single key".into());
    }
    match operands(rest, "", &[]).as_slice() {
        [key] | [key, _] if !is_sensitive_key(key) => Ok(()),
        [key] | [key, _] => Err(format!("git config {key} may hold a credential")),
        _ => Err("git config with unexpected operands".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(line: &str) -> Result<(), String> {
        let args: Vec<String> = line.split_whitespace().skip(1).map(str::to_string).collect();
        check(&args)
    }

    #[test]
    fn reading_git_commands_are_proven() {
        for line in [
            "git status --short --branch",
            "git log -p -1",
            "git log --oneline -10",
            "git log --output-indicator-new=+",
            "git show ab9811cb90",
            "git diff HEAD~1 --stat",
            "git grep TODO src",
            "git ls-files --exclude target src",
            "git branch",
            "git branch -a",
            "git branch --show-current",
            "git branch -vv --contains HEAD",
            "git branch --list 'feat*'",
            "git tag",
            "git tag -l v1*",
            "git stash list",
            "git remote -v",
            "git config --get remote.origin.url",
            "git config get user.name",
            "git --version",
            "git -C ../other log",
            "git --no-pager diff",
        ] {
            assert_eq!(judge(line), Ok(()), "{line}");
        }
    }

    #[test]
    fn git_commands_that_write_or_run_programs_are_not() {
        for line in [
            "git",
            "git --help",
            "git -c core.pager=cat status",
            "git -ccore.pager=cat status",
            "git --config-env=core.pager=PAGER show",
            "git --work-tree=. status",
            "git --git-dir=x log",
            "git --exec-path=/tmp log",
            "git --super-prefix x/ show",
            "git -p log",
            "git --paginate show",
            "git show --output=/tmp/x HEAD",
            "git log --out=/tmp/x",
            "git diff --ext-diff",
            "git show --exec=sh",
            "git grep -O TODO",
            "git grep -Ovim TODO",
            "git grep --open-files-in-pager=vim TODO",
            "git branch new-branch",
            "git branch -d feature",
            "git branch -vd feature",
            "git branch -D x",
            "git branch -m a b",
            "git branch --set-upstream-to=x",
            "git tag v1.0.0",
            "git tag -d v1",
            "git stash",
            "git stash pop",
            "git remote add x y",
            "git remote show origin",
            "git reflog expire --all",
            "git config core.hooksPath /tmp/hooks",
            "git config --global alias.st x",
            "git config --list",
            "git config -l",
            "git config --get credential.helper",
            "git config --get http.extraheader",
            "git config --get github.token",
            "git reset --hard",
            "git checkout reset",
            "git push",
            "git st",
        ] {
            assert!(judge(line).is_err(), "{line}");
        }
    }
}
