//! git readings: global options placed, subcommands read exactly, and the installed git
//! accepting every option spelling the tables list.

use std::process::{Command, Stdio};

use super::super::spec::Arity;
use super::super::{read, subcommand, Role, Unread};

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

#[test]
fn global_options_are_skipped_by_gits_own_grammar() {
    let stash = words("stash list -3");
    assert_eq!(read("git", &stash).map(|r| r.subcommand), Ok(vec!["stash", "list"]));
    let cases: [(&str, &[&str]); 6] = [
        ("-C . -c color.ui=never --no-pager --git-dir=x push -f", &["push"]),
        ("--work-tree w --namespace n log", &["log"]),
        ("-P status", &["status"]),
        ("--exec-path=/tmp/x status", &["status"]),
        ("--help", &["--help"]),
        ("", &[]),
    ];
    for (line, expected) in cases {
        let args = words(line);
        let r = subcommand("git", &args).unwrap_or_else(|| panic!("{line}"));
        assert_eq!(r.subcommand, expected, "{line}");
    }
    let args = words("-C log log -p");
    assert_eq!(subcommand("git", &args).and_then(|r| r.subcommand_at), Some(2));
    for line in ["--frobnicate push", "-Cdir push", "-c", "--git-dir"] {
        assert!(subcommand("git", &words(line)).is_none(), "{line}");
    }
}

#[test]
fn global_options_carry_their_effects() {
    use Role::*;
    let cases = [
        ("-C sub status", "sub", Chdir),
        ("-c core.pager=sh status", "core.pager=sh", Executes),
        ("-c core.fsmonitor=x status", "core.fsmonitor=x", Executes),
        ("-c alias.st=!sh st", "alias.st=!sh", Executes),
        ("-c Color.UI=never status", "Color.UI=never", Inert),
        ("-c advice.detachedHead=false status", "advice.detachedHead=false", Inert),
        ("--git-dir=/tmp/evil status", "/tmp/evil", Executes),
        ("--exec-path=/tmp/bin status", "/tmp/bin", Executes),
        ("--config-env=core.pager=EVIL log", "core.pager=EVIL", Executes),
        ("--work-tree=/ status", "/", ReadsTree),
    ];
    for (line, text, role) in cases {
        let args = words(line);
        let r = subcommand("git", &args).unwrap_or_else(|| panic!("{line}"));
        assert!(r.items.iter().any(|i| i.text == text && i.role == role), "{line}: {:?}", r.items);
    }
}

#[test]
fn reading_subcommands_are_read_exactly() {
    use Role::*;
    let found = [
        ("log --oneline -5 -- src", "src", Reads),
        ("diff --output=out.txt", "out.txt", Writes),
        ("diff --output out.txt HEAD", "out.txt", Writes),
        ("diff --no-index a b", "b", ReadsTree),
        ("diff -O/etc/order", "/etc/order", Reads),
        ("grep --no-index -e x", ".", ReadsTree),
        ("grep --untracked x", ".", ReadsTree),
        ("grep -n TODO src", "src", Reads),
        ("blame --contents /etc/shadow f", "/etc/shadow", Reads),
        ("-C repo branch -a", "repo", Chdir),
        ("status -sb", "b", Flag),
        ("ls-files -X ex", "ex", Reads),
        ("stash show -p --output=o stash@{0}", "o", Writes),
        ("reflog -5 HEAD", "HEAD", Reads),
        ("tag -l v1*", "v1*", Inert),
        ("remote get-url origin", "origin", Inert),
        ("check-ignore -v .env", ".env", Reads),
    ];
    for (line, text, role) in found {
        let args = words(line);
        let r = read("git", &args).unwrap_or_else(|e| panic!("{line}: {e:?}"));
        assert!(r.items.iter().any(|i| i.text == text && i.role == role), "{line}: {:?}", r.items);
    }
    let refused = [
        ("diff --out=x", Unread::UnknownOption("--out".into())),
        ("diff --ext-diff", Unread::UnknownOption("--ext-diff".into())),
        ("log --textconv -p", Unread::UnknownOption("--textconv".into())),
        ("grep -O x", Unread::UnknownOption("-O".into())),
        ("grep --open-files-in-pager x", Unread::UnknownOption("--open-files-in-pager".into())),
        ("branch new", Unread::Unplaced("new".into())),
        ("branch -D old", Unread::UnknownOption("-D".into())),
        ("push origin", Unread::UnknownSubcommand("push".into())),
        ("stash", Unread::UnknownSubcommand("stash".into())),
        ("stash pop", Unread::UnknownSubcommand("stash".into())),
        ("remote add x y", Unread::UnknownSubcommand("remote".into())),
        ("remote show origin", Unread::UnknownSubcommand("remote".into())),
        ("reflog expire --all", Unread::UnknownSubcommand("reflog".into())),
        ("tag v1", Unread::Unplaced("v1".into())),
        ("st", Unread::UnknownSubcommand("st".into())),
        ("-p --frob log", Unread::UnknownOption("--frob".into())),
    ];
    for (line, expected) in refused {
        assert_eq!(read("git", &words(line)).map(|_| ()), Err(expected), "{line}");
    }
}

/// Run `git SUB WORD` in a fresh repository with no user or system configuration; whether git
/// refused the spelling as an unknown option.
fn git_refuses(repo: &std::path::Path, sub: &str, word: &str) -> bool {
    let out = Command::new("git")
        .args([sub, word])
        .current_dir(repo)
        .env("HOME", repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_PAGER", "cat")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output();
    let Ok(out) = out else { return true };
    let err = String::from_utf8_lossy(&out.stderr);
    ["unknown option", "unknown switch", "unrecognized argument", "invalid option"]
        .iter()
        .any(|m| err.contains(m))
}

#[test]
fn the_installed_git_accepts_every_option_spelling_the_tables_list() {
    if Command::new("git").arg("--version").stdout(Stdio::null()).status().is_err() {
        eprintln!("git differential: git not installed, skipped");
        return;
    }
    let repo = std::env::temp_dir().join(format!("portcullis-grammar-git-{}", std::process::id()));
    std::fs::create_dir_all(&repo).expect("scratch repository");
    // A commit, so that log, show and blame get as far as reading their options.
    std::fs::write(repo.join("f"), "x\n").expect("a file");
    for step in [
        &["init", "-q"][..],
        &["add", "f"],
        &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
    ] {
        let status = Command::new("git")
            .args(step)
            .current_dir(&repo)
            .env("HOME", &repo)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status();
        assert!(status.is_ok_and(|s| s.success()), "git {step:?}");
    }
    assert!(git_refuses(&repo, "log", "--portcullis-frob"), "git control not refused");
    assert!(git_refuses(&repo, "status", "--portcullis-frob"), "git control not refused");
    let (mut checked, mut wrong) = (0, Vec::new());
    for sub in [
        "log",
        "show",
        "diff",
        "status",
        "blame",
        "branch",
        "rev-parse",
        "ls-files",
        "ls-tree",
        "grep",
        "describe",
        "merge-base",
        "rev-list",
        "show-ref",
        "cat-file",
        "tag",
        "for-each-ref",
        "check-ignore",
        "check-attr",
        "name-rev",
        "cherry",
        "show-branch",
        "count-objects",
    ] {
        let Some(grammar) = super::grammar(sub) else { continue };
        for opt in grammar.options {
            let value = matches!(opt.arity, Arity::Required(_));
            let mut spellings = Vec::new();
            if !opt.long.is_empty() {
                spellings.push(if value { format!("--{}=x", opt.long) } else { format!("--{}", opt.long) });
            }
            if let Some(c) = opt.short {
                spellings.push(if value { format!("-{c}x") } else { format!("-{c}") });
            }
            for word in spellings {
                checked += 1;
                if git_refuses(&repo, sub, &word) {
                    wrong.push(format!("git {sub} {word}"));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&repo);
    eprintln!("git differential: {checked} spellings checked, {} refused by git", wrong.len());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
