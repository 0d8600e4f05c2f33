//! GNU tar: the operation decides what the archive and the operands are. `-c`/`-r`/`-u`
//! write the archive and read the operands as trees; `-x` reads the archive and writes below
//! the working directory (after `-C`, which applies to what follows it); `-t`/`-d` only read.
//! The old form `tar xzf a.tgz` (letters without a dash, values from the following words) is
//! read too. The table is partial and read by GNU rules (see `net.rs` on why that is safe).

use super::getopt;
use super::spec::{f, gnu, o, v, Grammar, Parsed};
use super::{Item, Reading, Role, Unread};

use Role::{Chdir, Connects, Executes, Inert, NamesFiles, Reads, ReadsTree, Writes};

pub(crate) const TAR: Grammar = gnu(
    &[
        f("c", "create"),
        f("x", "extract"),
        f("x", "get").named("extract"),
        f("t", "list"),
        f("r", "append"),
        f("u", "update"),
        f("A", "catenate"),
        f("A", "concatenate").named("catenate"),
        f("d", "diff"),
        f("d", "compare").named("diff"),
        f("", "delete"),
        v("f", "file", Reads),
        v("C", "directory", Chdir),
        v("T", "files-from", NamesFiles),
        v("X", "exclude-from", Reads),
        v("", "exclude", Inert),
        f("", "exclude-vcs"),
        v("I", "use-compress-program", Executes),
        v("", "to-command", Executes),
        v("", "rsh-command", Executes),
        f("", "force-local"),
        f("z", "gzip"),
        f("j", "bzip2"),
        f("J", "xz"),
        f("", "zstd"),
        f("a", "auto-compress"),
        f("v", "verbose"),
        f("p", "preserve-permissions"),
        f("k", "keep-old-files"),
        f("", "skip-old-files"),
        f("", "overwrite"),
        f("O", "to-stdout"),
        f("P", "absolute-names"),
        f("h", "dereference"),
        f("", "no-same-owner"),
        f("", "numeric-owner"),
        v("", "strip-components", Inert),
        v("", "transform", Inert),
        v("", "xform", Inert).named("transform"),
        v("", "owner", Inert),
        v("", "group", Inert),
        v("", "mode", Inert),
        v("", "mtime", Inert),
        v("", "sort", Inert),
        f("", "wildcards"),
        f("", "no-recursion"),
        o("", "totals", Inert),
        f("", "help"),
        f("", "version"),
    ],
    tar_operands,
);

fn tar_operands(p: &mut Parsed<'_>) -> Result<(), Unread> {
    let writes_archive = ["create", "append", "update", "catenate", "delete"].iter().any(|o| p.has(o));
    let extracts = p.has("extract");
    p.all(if p.has("create") || p.has("append") || p.has("update") { ReadsTree } else { Inert });
    let local = p.has("force-local");
    for item in p.items.iter_mut().filter(|i| i.option == Some("file")) {
        // `host:path` (a colon before any slash) is a remote archive, reached with rsh/ssh.
        let remote = !local && item.text.split('/').next().is_some_and(|head| head.contains(':'));
        item.role = match (remote, writes_archive) {
            (true, _) => Connects,
            (false, true) => Writes,
            (false, false) => Reads,
        };
    }
    if p.has("catenate") {
        p.all(Reads);
    }
    if extracts && !p.has("to-stdout") {
        p.implicit(if p.has("absolute-names") { "/" } else { "." }, Writes);
    }
    Ok(())
}

/// `tar xzf a.tgz b`: the first word without a dash is a cluster of letters whose values are
/// the next words, in order.
pub(crate) fn read(args: &[String]) -> Result<Reading<'_>, Unread> {
    let Some(first) = args.first().filter(|a| !a.starts_with('-') && !a.is_empty()) else {
        return Ok(Reading::plain(getopt::read(&TAR, args)?));
    };
    // Rewrite into dashed words the shared reader understands, remembering where each came from.
    let mut rewritten: Vec<String> = Vec::new();
    let mut next = 1;
    for c in first.chars() {
        let opt = TAR
            .options
            .iter()
            .find(|o| o.short == Some(c))
            .ok_or_else(|| Unread::UnknownOption(format!("{c}")))?;
        rewritten.push(format!("-{c}"));
        if matches!(opt.arity, super::spec::Arity::Required(_)) {
            let value = args.get(next).ok_or_else(|| Unread::MissingValue(format!("{c}")))?;
            rewritten.push(value.clone());
            next += 1;
        }
    }
    rewritten.extend(args[next..].iter().cloned());
    let items = getopt::read(&TAR, &rewritten)?;
    // Point every item back at the caller's words (values and operands are copied whole).
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let text = locate(args, first, item.text).ok_or_else(|| Unread::Unplaced(item.text.to_string()))?;
        out.push(Item { text, ..item });
    }
    Ok(Reading::plain(out))
}

/// The caller's word equal to `text`, or the letter of the cluster, or an implicit item.
fn locate<'a>(args: &'a [String], cluster: &'a str, text: &str) -> Option<&'a str> {
    if let Some(word) = args.iter().find(|a| *a == text) {
        return Some(word);
    }
    if let Some(at) = cluster.find(text) {
        return Some(&cluster[at..at + text.len()]);
    }
    match text {
        "." => Some("."),
        "/" => Some("/"),
        _ => None,
    }
}
