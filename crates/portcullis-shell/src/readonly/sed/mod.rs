//! Which sed invocations only print.
//!
//! sed is a small language with a shell escape (`e`, `s///e`), file writes (`w`, `W`, `s///w`,
//! opened when the script is *compiled*, so even `--version` after them truncates the file),
//! file reads (`r`, `R`) and in-place editing (`-i`). Rather than hunt for those, the options are
//! read the way GNU getopt reads them (abbreviations, clusters, permuted operands), every script
//! is parsed with GNU sed's own grammar ([`parse`]), and the line is proven only if every command
//! is from the printing subset: addresses, `{ }`, labels and branches, `a i c` text,
//! `= d D F g G h H n N p P x z l q Q`, `y`, and `s` without the `e` or `w` flags.
//! A script sed would refuse, or one given by `-f`, is not proven.

mod error;
mod parse;
mod text;

#[cfg(test)]
mod differential;
#[cfg(test)]
mod render;
#[cfg(test)]
mod tests;

use parse::{parse, Command, Op};

/// What a long option does, once getopt has resolved its (possibly abbreviated) name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Long {
    /// Changes only how input is split or output printed.
    Harmless,
    /// Takes a value that changes only formatting (`--line-length`).
    HarmlessValued,
    Expression,
    File,
    InPlace,
}

/// GNU sed 4.9's long options (`sed/sed.c`), with what each does here.
const LONG_OPTIONS: &[(&str, Long)] = &[
    ("binary", Long::Harmless),
    ("debug", Long::Harmless),
    ("expression", Long::Expression),
    ("file", Long::File),
    ("follow-symlinks", Long::Harmless),
    ("help", Long::Harmless),
    ("in-place", Long::InPlace),
    ("line-length", Long::HarmlessValued),
    ("null-data", Long::Harmless),
    ("zero-terminated", Long::Harmless),
    ("posix", Long::Harmless),
    ("quiet", Long::Harmless),
    ("silent", Long::Harmless),
    ("regexp-extended", Long::Harmless),
    ("sandbox", Long::Harmless),
    ("separate", Long::Harmless),
    ("unbuffered", Long::Harmless),
    ("version", Long::Harmless),
];

/// getopt_long's resolution: an exact name, else a unique prefix (`--exp`, `--in`); `--s` is
/// ambiguous (silent, sandbox, separate) and sed refuses it.
fn resolve(name: &str) -> Result<Long, String> {
    if let Some((_, what)) = LONG_OPTIONS.iter().find(|(n, _)| *n == name) {
        return Ok(*what);
    }
    let mut hits = LONG_OPTIONS.iter().filter(|(n, _)| n.starts_with(name));
    match (hits.next(), hits.next()) {
        (Some((_, what)), None) if !name.is_empty() => Ok(*what),
        _ => Err(format!("sed option --{name}")),
    }
}

/// Check `sed [options] [script] [files]`.
pub(in crate::readonly) fn check(args: &[String]) -> Result<(), String> {
    let mut scripts: Vec<&str> = Vec::new();
    let mut operands: Vec<&str> = Vec::new();
    // Under POSIXLY_CORRECT getopt stops at the first operand, which is then the script even if
    // `-e` follows; both readings are checked.
    let mut script_after_operand = false;
    let mut iter = args.iter().map(String::as_str);
    while let Some(a) = iter.next() {
        if a == "--" {
            operands.extend(iter.by_ref());
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            match resolve(name)? {
                Long::Harmless if value.is_none() => {}
                Long::Harmless => return Err(format!("sed option {a} takes no value")),
                Long::HarmlessValued => {
                    if value.is_none() {
                        iter.next().ok_or("sed option without its value")?;
                    }
                }
                Long::Expression => {
                    let script = match value {
                        Some(v) => v,
                        None => iter.next().ok_or("sed --expression without a script")?,
                    };
                    script_after_operand |= !operands.is_empty();
                    scripts.push(script);
                }
                Long::File => return Err("sed reads its script from a file".into()),
                Long::InPlace => return Err("sed edits files in place".into()),
            }
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let cluster = &a[1..];
            for (at, c) in cluster.char_indices() {
                match c {
                    'n' | 'E' | 'r' | 's' | 'u' | 'z' | 'b' => {}
                    'e' | 'l' => {
                        let rest = &cluster[at + 1..];
                        let value = match rest.is_empty() {
                            true => iter.next().ok_or("sed option without its value")?,
                            false => rest,
                        };
                        if c == 'e' {
                            script_after_operand |= !operands.is_empty();
                            scripts.push(value);
                        }
                        break;
                    }
                    'f' => return Err("sed reads its script from a file".into()),
                    'i' => return Err("sed edits files in place".into()),
                    _ => return Err(format!("sed option -{c}")),
                }
            }
            continue;
        }
        operands.push(a);
    }
    if scripts.is_empty() || script_after_operand {
        match operands.first() {
            Some(first) => scripts.insert(0, first),
            None => return Err("sed without a script".into()),
        }
    }
    // The `-e` scripts are one program, joined by newlines (`-e 'a\' -e text` continues).
    let program = scripts.join("\n");
    for command in parse(program.as_bytes()).map_err(|e| e.to_string())? {
        prints_only(&command)?;
    }
    Ok(())
}

/// The printing subset.
fn prints_only(command: &Command) -> Result<(), String> {
    match &command.op {
        Op::Exec(_) => Err("sed e runs a shell command".into()),
        Op::File(b'w' | b'W', name) => Err(format!("sed w writes {}", String::from_utf8_lossy(name))),
        Op::File(_, name) => Err(format!("sed r reads {}", String::from_utf8_lossy(name))),
        Op::Subst { flags, .. } if flags.eval => Err("sed s///e runs the pattern space".into()),
        Op::Subst { flags, .. } if flags.write.is_some() => Err("sed s///w writes a file".into()),
        // Harmless, but rare enough that proving it is not worth a rule.
        Op::Version => Err("sed v".into()),
        Op::Block
        | Op::EndBlock
        | Op::Label(_)
        | Op::Branch(..)
        | Op::Text(..)
        | Op::Simple(_)
        | Op::Numbered(..)
        | Op::Subst { .. }
        | Op::Translit { .. } => Ok(()),
    }
}
