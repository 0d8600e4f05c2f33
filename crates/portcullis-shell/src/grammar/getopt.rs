//! The shared option reader: GNU getopt_long's rules (abbreviations, glued and separate
//! values, `--`, permutation), parameterised by a program's [`Grammar`].

use super::spec::{Arity, Grammar, Longs, Opt, Order, Parsed};
use super::{Item, Role, Unread};

/// Read `args` by `grammar`, then give the operands their roles.
pub(crate) fn read<'a>(grammar: &Grammar, args: &'a [String]) -> Result<Vec<Item<'a>>, Unread> {
    let mut parsed = split(grammar, args, 0)?;
    (grammar.operands)(&mut parsed)?;
    Ok(parsed.items)
}

/// Read the options and operands of `args[from..]` without giving operands their roles.
pub(crate) fn split<'a>(grammar: &Grammar, args: &'a [String], from: usize) -> Result<Parsed<'a>, Unread> {
    let mut p = Parsed { items: Vec::new(), operands: Vec::new() };
    let mut ended = false;
    let mut i = from;
    while let Some(word) = args.get(i) {
        i += 1;
        let w = word.as_str();
        if ended || w == "-" || !w.starts_with('-') {
            p.operands.push(p.items.len());
            p.items.push(Item { text: w, role: Role::Reads, option: None });
            ended |= grammar.order == Order::Posix;
            continue;
        }
        if w == "--" {
            p.items.push(Item { text: w, role: Role::Flag, option: Some("--") });
            ended = true;
            continue;
        }
        match w.strip_prefix("--") {
            Some(long) => i = long_option(grammar, args, i, w, long, &mut p.items)?,
            None => i = cluster(grammar, args, i, w, &mut p.items)?,
        }
    }
    Ok(p)
}

/// The option a long spelling names: an exact match, else (GNU) the one option all the
/// names it abbreviates belong to.
pub(crate) fn resolve(options: &'static [Opt], longs: Longs, given: &str) -> Result<&'static Opt, Unread> {
    let unknown = || Unread::UnknownOption(format!("--{given}"));
    if given.is_empty() {
        return Err(unknown());
    }
    if let Some(exact) = options.iter().find(|o| o.long == given) {
        return Ok(exact);
    }
    if longs != Longs::Gnu {
        return Err(unknown());
    }
    let mut hits = options.iter().filter(|o| !o.long.is_empty() && o.long.starts_with(given));
    let first = hits.next().ok_or_else(unknown)?;
    match hits.all(|o| o.name == first.name && o.arity == first.arity) {
        true => Ok(first),
        false => Err(Unread::Ambiguous(format!("--{given}"))),
    }
}

/// `--name`, `--name=value`, `--name value`; returns the index of the next word to read.
fn long_option<'a>(
    grammar: &Grammar,
    args: &'a [String],
    next: usize,
    word: &'a str,
    long: &'a str,
    items: &mut Vec<Item<'a>>,
) -> Result<usize, Unread> {
    let (name, glued) = match long.split_once('=') {
        Some((n, value)) if grammar.longs != Longs::ExactNoEquals => (n, Some(value)),
        _ => (long, None),
    };
    let opt = resolve(grammar.options, grammar.longs, name)?;
    let option = Some(opt.name);
    match (opt.arity, glued) {
        (Arity::Flag, None) => items.push(Item { text: word, role: Role::Flag, option }),
        (Arity::Flag, Some(_)) => return Err(Unread::UnexpectedValue(word.to_string())),
        (Arity::Optional(role) | Arity::Required(role), Some(value)) => {
            items.push(Item { text: value, role, option })
        }
        (Arity::Optional(_), None) => items.push(Item { text: word, role: Role::Flag, option }),
        (Arity::Required(role), None) => {
            let value = args.get(next).ok_or_else(|| Unread::MissingValue(word.to_string()))?;
            items.push(Item { text: value, role, option });
            return Ok(next + 1);
        }
        (Arity::Pair(first, second), None) => return pair(args, next, word, first, second, option, items),
        (Arity::Pair(..), Some(_)) => return Err(Unread::UnexpectedValue(word.to_string())),
    }
    Ok(next)
}

fn pair<'a>(
    args: &'a [String],
    next: usize,
    word: &'a str,
    first: Role,
    second: Role,
    option: Option<&'static str>,
    items: &mut Vec<Item<'a>>,
) -> Result<usize, Unread> {
    match (args.get(next), args.get(next + 1)) {
        (Some(a), Some(b)) => {
            items.push(Item { text: a, role: first, option });
            items.push(Item { text: b, role: second, option });
            Ok(next + 2)
        }
        _ => Err(Unread::MissingValue(word.to_string())),
    }
}

/// `-abc`: letters until one takes a value, which is the rest of the word or the next word.
fn cluster<'a>(
    grammar: &Grammar,
    args: &'a [String],
    next: usize,
    word: &'a str,
    items: &mut Vec<Item<'a>>,
) -> Result<usize, Unread> {
    let letters = &word[1..];
    for (at, c) in letters.char_indices() {
        let end = at + c.len_utf8();
        let letter = &letters[at..end];
        if grammar.digits && c.is_ascii_digit() {
            items.push(Item { text: letter, role: Role::Inert, option: Some("NUM") });
            continue;
        }
        let opt = grammar
            .options
            .iter()
            .find(|o| o.short == Some(c))
            .ok_or_else(|| Unread::UnknownOption(format!("-{c}")))?;
        let option = Some(opt.name);
        let rest = &letters[end..];
        match opt.arity {
            Arity::Flag => items.push(Item { text: letter, role: Role::Flag, option }),
            Arity::Optional(role) if !rest.is_empty() => {
                items.push(Item { text: rest, role, option });
                return Ok(next);
            }
            Arity::Optional(_) => items.push(Item { text: letter, role: Role::Flag, option }),
            Arity::Required(role) if !rest.is_empty() => {
                items.push(Item { text: rest, role, option });
                return Ok(next);
            }
            Arity::Required(role) => {
                let value = args.get(next).ok_or_else(|| Unread::MissingValue(word.to_string()))?;
                items.push(Item { text: value, role, option });
                return Ok(next + 1);
            }
            Arity::Pair(..) if !rest.is_empty() => return Err(Unread::UnexpectedValue(word.to_string())),
            Arity::Pair(first, second) => return pair(args, next, word, first, second, option, items),
        }
    }
    Ok(next)
}
