//! Which grammar reads which program.

use super::spec::Grammar;
use super::{
    coreutils, files, find, getopt, git, grep, listing, make, net, printing, scripts, search, shell,
    subcommands, tar, util,
};
use super::{Item, Reading, Role, Unread};

/// How a program's words are read.
pub(crate) enum Kind {
    /// By the shared getopt reader.
    Getopt(&'static Grammar),
    /// By the getopt reader after an obsolete first word (`head -5`, `tail +3`), which the
    /// function recognises.
    Obsolete(&'static Grammar, fn(&[String]) -> bool),
    /// By a reader of its own (find's expressions, echo, git's subcommands).
    Custom(for<'a> fn(&'a [String]) -> Result<Reading<'a>, Unread>),
}

pub(crate) fn lookup(program: &str) -> Option<Kind> {
    use Kind::{Custom, Getopt, Obsolete};
    Some(match program {
        "cat" => Getopt(&coreutils::CAT),
        "head" => Obsolete(&coreutils::HEAD, coreutils::head_obsolete),
        "tail" => Obsolete(&coreutils::TAIL, coreutils::tail_obsolete),
        "wc" => Getopt(&coreutils::WC),
        "sort" => Getopt(&coreutils::SORT),
        "uniq" => Getopt(&coreutils::UNIQ),
        "base64" | "base32" => Getopt(&coreutils::BASE64),
        "basenc" => Getopt(&coreutils::BASENC),
        "cut" => Getopt(&coreutils::CUT),
        "tac" => Getopt(&coreutils::TAC),
        "paste" => Getopt(&coreutils::PASTE),
        "nl" => Getopt(&coreutils::NL),
        "fold" => Getopt(&coreutils::FOLD),
        "expand" => Getopt(&coreutils::EXPAND),
        "comm" => Getopt(&coreutils::COMM),
        "tr" => Getopt(&coreutils::TR),
        "basename" => Getopt(&coreutils::BASENAME),
        "dirname" => Getopt(&coreutils::DIRNAME),
        "realpath" => Getopt(&coreutils::REALPATH),
        "readlink" => Getopt(&coreutils::READLINK),
        "md5sum" | "sha1sum" | "sha224sum" | "sha256sum" | "sha384sum" | "sha512sum" => {
            Getopt(&printing::DIGEST)
        }
        "b2sum" => Getopt(&printing::B2SUM),
        "cksum" => Getopt(&printing::CKSUM),
        "sum" => Getopt(&printing::SUM),
        "od" => Getopt(&printing::OD),
        "pr" => Getopt(&printing::PR),
        "fmt" => Getopt(&printing::FMT),
        "unexpand" => Getopt(&printing::UNEXPAND),
        "seq" => Getopt(&printing::SEQ),
        "shuf" => Getopt(&printing::SHUF),
        "split" => Getopt(&printing::SPLIT),
        "join" => Getopt(&printing::JOIN),
        "df" => Getopt(&printing::DF),
        "tty" => Getopt(&printing::TTY),
        "groups" => Getopt(&shell::PLAIN),
        "uptime" => Getopt(&printing::UPTIME),
        "cmp" => Getopt(&util::CMP),
        "rev" => Getopt(&util::REV),
        "strings" => Getopt(&util::STRINGS),
        "hexdump" => Getopt(&util::HEXDUMP),
        "column" => Getopt(&util::COLUMN),
        "file" => Getopt(&util::FILE),
        "hostname" => Getopt(&util::HOSTNAME),
        "whereis" => Getopt(&util::WHEREIS),
        "type" => Getopt(&shell::TYPE),
        "which" => Getopt(&shell::WHICH),
        "hash" => Getopt(&shell::HASH),
        "help" => Getopt(&shell::HELP),
        "cd" => Custom(shell::cd),
        "pushd" => Custom(shell::pushd),
        "popd" => Custom(shell::popd),
        "dirs" => Custom(shell::dirs),
        "ls" | "dir" | "vdir" => Getopt(&listing::LS),
        "du" => Getopt(&listing::DU),
        "stat" => Getopt(&listing::STAT),
        "date" => Getopt(&listing::DATE),
        "grep" | "egrep" | "fgrep" => Getopt(&grep::GREP),
        "diff" => Getopt(&grep::DIFF),
        "find" => Custom(find::read),
        "rg" => Getopt(&search::RG),
        "fd" | "fdfind" => Getopt(&search::FD),
        "tree" => Custom(search::tree),
        "sed" => Getopt(&scripts::SED),
        "awk" | "gawk" | "mawk" | "nawk" => Getopt(&scripts::AWK),
        "jq" => Getopt(&scripts::JQ),
        "git" => Custom(git::read),
        "rm" => Getopt(&files::RM),
        "cp" => Getopt(&files::CP),
        "mv" => Getopt(&files::MV),
        "ln" => Getopt(&files::LN),
        "mkdir" => Getopt(&files::MKDIR),
        "rmdir" => Getopt(&files::RMDIR),
        "touch" => Getopt(&files::TOUCH),
        "chmod" => Getopt(&files::CHMOD),
        "chown" => Getopt(&files::CHOWN),
        "chgrp" => Getopt(&files::CHGRP),
        "tee" => Getopt(&files::TEE),
        "truncate" => Getopt(&files::TRUNCATE),
        "mktemp" => Getopt(&files::MKTEMP),
        "install" => Getopt(&files::INSTALL),
        "dd" => Custom(files::dd),
        "tar" => Custom(tar::read),
        "make" | "gmake" => Getopt(&make::MAKE),
        "curl" => Getopt(&net::CURL),
        "wget" => Getopt(&net::WGET),
        "echo" => Custom(shell::echo),
        "printf" => Custom(shell::printf),
        "test" => Custom(shell::test),
        "[" => Custom(shell::bracket),
        "true" | "false" | ":" => Custom(shell::ignores),
        "pwd" => Getopt(&shell::PWD),
        "uname" => Getopt(&shell::UNAME),
        "id" => Getopt(&shell::ID),
        "nproc" => Getopt(&shell::NPROC),
        "sleep" | "whoami" | "logname" | "yes" | "arch" => Getopt(&shell::PLAIN),
        _ => return None,
    })
}

/// Read a program with an obsolete first word.
pub(crate) fn obsolete<'a>(
    grammar: &Grammar,
    is_obsolete: fn(&[String]) -> bool,
    args: &'a [String],
) -> Result<Vec<Item<'a>>, Unread> {
    if !is_obsolete(args) {
        return getopt::read(grammar, args);
    }
    let mut parsed = getopt::split(grammar, args, 1)?;
    (grammar.operands)(&mut parsed)?;
    let first = Item { text: &args[0], role: Role::Inert, option: Some("NUM") };
    Ok(std::iter::once(first).chain(parsed.items).collect())
}

pub(crate) fn subcommand<'a>(program: &str, args: &'a [String]) -> Option<Reading<'a>> {
    match program {
        "git" => git::subcommand(args),
        _ => subcommands::place(program, args),
    }
}
