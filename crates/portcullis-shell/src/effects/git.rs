//! What git may run in place of the subcommand a line names: an alias (`git -c alias.pu=push
//! pu`, or one in a config file) or a command string (`rebase -x`, `submodule foreach`,
//! `bisect run`). Such a subcommand is not placed: any git command is possible.

/// git's own commands (`git --list-cmds=main,nohelpers`, git 2.47); any other word is an alias
/// or a `git-NAME` program on PATH.
const COMMANDS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archimport",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bugreport",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "credential",
    "credential-cache",
    "credential-store",
    "cvsexportcommit",
    "cvsimport",
    "cvsserver",
    "daemon",
    "describe",
    "diagnose",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "difftool",
    "fast-export",
    "fast-import",
    "fetch",
    "fetch-pack",
    "filter-branch",
    "fmt-merge-msg",
    "for-each-ref",
    "for-each-repo",
    "format-patch",
    "fsck",
    "fsck-objects",
    "gc",
    "get-tar-commit-id",
    "grep",
    "hash-object",
    "help",
    "hook",
    "http-backend",
    "http-fetch",
    "http-push",
    "imap-send",
    "index-pack",
    "init",
    "init-db",
    "instaweb",
    "interpret-trailers",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "mailinfo",
    "mailsplit",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-index",
    "merge-octopus",
    "merge-one-file",
    "merge-ours",
    "merge-recursive",
    "merge-recursive-ours",
    "merge-recursive-theirs",
    "merge-resolve",
    "merge-subtree",
    "merge-tree",
    "mergetool",
    "mktag",
    "mktree",
    "multi-pack-index",
    "mv",
    "name-rev",
    "notes",
    "p4",
    "pack-objects",
    "pack-redundant",
    "pack-refs",
    "patch-id",
    "pickaxe",
    "prune",
    "prune-packed",
    "pull",
    "push",
    "quiltimport",
    "range-diff",
    "read-tree",
    "rebase",
    "receive-pack",
    "reflog",
    "refs",
    "remote",
    "remote-ext",
    "remote-fd",
    "remote-ftp",
    "remote-ftps",
    "remote-http",
    "remote-https",
    "repack",
    "replace",
    "replay",
    "request-pull",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "send-email",
    "send-pack",
    "shell",
    "shortlog",
    "show",
    "show-branch",
    "show-index",
    "show-ref",
    "sparse-checkout",
    "stage",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "svn",
    "switch",
    "symbolic-ref",
    "tag",
    "unpack-file",
    "unpack-objects",
    "update-index",
    "update-ref",
    "update-server-info",
    "upload-archive",
    "upload-pack",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
];

/// Whether `words` (the subcommand and what follows it) may run another git command.
pub(super) fn may_run_another(words: &[String]) -> bool {
    let Some(sub) = words.first() else { return true };
    if COMMANDS.binary_search(&sub.as_str()).is_err() {
        return true;
    }
    let rest = &words[1..];
    match sub.as_str() {
        "rebase" => rest.iter().any(|w| {
            w == "-x"
                || w.starts_with("-x")
                || w.starts_with("--ex")
                || (w.starts_with('-') && !w.starts_with("--") && w.contains('x'))
        }),
        "submodule" => rest.iter().any(|w| w == "foreach"),
        "bisect" => rest.iter().any(|w| w == "run"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_list_is_sorted_for_binary_search() {
        assert!(COMMANDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn aliases_and_command_strings_may_run_any_git_command() {
        let w = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        for line in [
            "pu origin",
            "rebase -x 'git push' HEAD~1",
            "rebase --exec=x",
            "submodule foreach git push",
            "bisect run ./t",
        ] {
            assert!(may_run_another(&w(line)), "{line}");
        }
        for line in ["push origin", "status", "log -p", "rebase -i HEAD~2"] {
            assert!(!may_run_another(&w(line)), "{line}");
        }
    }
}
