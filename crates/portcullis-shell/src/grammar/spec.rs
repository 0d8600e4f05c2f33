//! How a program's options are declared: each option's spellings and what its value means.

use super::{Item, Role, Unread};

/// How many values an option takes, and what they mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arity {
    /// No value (`-n`, `--number`).
    Flag,
    /// A value, glued (`-ofile`, `--output=file`) or in the next word.
    Required(Role),
    /// A value only when glued (`-i.bak`, `--color=auto`).
    Optional(Role),
    /// Two values in the next two words (`jq --arg NAME VALUE`).
    Pair(Role, Role),
}

/// One option: its short letter, its long name and its value.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Opt {
    pub short: Option<char>,
    /// The long spelling without `--` (or without `-` for single-dash programs); empty if none.
    pub long: &'static str,
    /// The canonical name reported in [`Item::option`]: the long name, or the letter. Two
    /// entries with the same name and arity are one option spelled two ways (`--recursive` /
    /// `-r`), so an abbreviation matching both is not ambiguous.
    pub name: &'static str,
    pub arity: Arity,
}

const fn first_char(s: &'static str) -> Option<char> {
    match s.as_bytes() {
        [] => None,
        [b, ..] => Some(*b as char),
    }
}

const fn opt(short: &'static str, long: &'static str, arity: Arity) -> Opt {
    let name = if long.is_empty() { short } else { long };
    Opt { short: first_char(short), long, name, arity }
}

/// An option without a value. `short` is one ASCII letter or empty; `long` may be empty.
pub(crate) const fn f(short: &'static str, long: &'static str) -> Opt {
    opt(short, long, Arity::Flag)
}

/// An option with a required value.
pub(crate) const fn v(short: &'static str, long: &'static str, role: Role) -> Opt {
    opt(short, long, Arity::Required(role))
}

/// An option with an optional (glued-only) value.
pub(crate) const fn o(short: &'static str, long: &'static str, role: Role) -> Opt {
    opt(short, long, Arity::Optional(role))
}

/// An option with two values in the next two words.
pub(crate) const fn pair(short: &'static str, long: &'static str, first: Role, second: Role) -> Opt {
    opt(short, long, Arity::Pair(first, second))
}

impl Opt {
    /// The same option under another canonical name (an alias spelling of `name`).
    pub(crate) const fn named(mut self, name: &'static str) -> Opt {
        self.name = name;
        self
    }
}

/// How long options may be spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Longs {
    /// GNU getopt_long: `--name`, any unique prefix, `--name=value`.
    Gnu,
    /// Only the exact name, with `--name=value` allowed (clap, git's revision parser).
    Exact,
    /// Only the exact name; `--name=value` is not split (jq, curl).
    ExactNoEquals,
}

/// Whether options may follow operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// GNU getopt permutes: options anywhere until `--`.
    Permute,
    /// Options end at the first operand (POSIX, BSD, `env`-like programs).
    Posix,
}

/// Options read so far and the operands, which a program's operand rule gives roles.
pub(crate) struct Parsed<'a> {
    /// Every item in argv order; operands carry `option: None` and role [`Role::Reads`]
    /// until the program's rule assigns theirs.
    pub items: Vec<Item<'a>>,
    /// Indexes into `items` of the operands, in order.
    pub operands: Vec<usize>,
}

impl<'a> Parsed<'a> {
    /// Whether an option of this canonical name was given.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.items.iter().any(|i| i.option == Some(name))
    }

    /// The values given to the option `name`.
    pub(crate) fn values<'s>(&'s self, name: &'s str) -> impl Iterator<Item = &'a str> + 's {
        self.items.iter().filter(move |i| i.option == Some(name) && i.role != Role::Flag).map(|i| i.text)
    }

    /// Give every operand `role`.
    pub(crate) fn all(&mut self, role: Role) {
        for &i in &self.operands {
            self.items[i].role = role;
        }
    }

    /// Give the operand at position `n` (in operand order) `role`.
    pub(crate) fn set(&mut self, n: usize, role: Role) {
        if let Some(&i) = self.operands.get(n) {
            self.items[i].role = role;
        }
    }

    /// Append an item the program uses without its being written (`grep -r` searches `.`).
    pub(crate) fn implicit(&mut self, text: &'static str, role: Role) {
        self.items.push(Item { text, role, option: None });
    }
}

/// Gives the operands their roles (and may refuse an operand layout it does not understand).
pub(crate) type OperandRule = fn(&mut Parsed<'_>) -> Result<(), Unread>;

/// A getopt-style program's grammar.
pub(crate) struct Grammar {
    pub options: &'static [Opt],
    pub longs: Longs,
    pub order: Order,
    /// Digits in a short cluster are a number (`grep -5`, `head -n5` is not this): Inert.
    pub digits: bool,
    pub operands: OperandRule,
}

/// A GNU getopt_long program: abbreviations, permutation, no digit options.
pub(crate) const fn gnu(options: &'static [Opt], operands: OperandRule) -> Grammar {
    Grammar { options, longs: Longs::Gnu, order: Order::Permute, digits: false, operands }
}

/// Every operand is a file the program reads.
pub(crate) fn reads(p: &mut Parsed<'_>) -> Result<(), Unread> {
    p.all(Role::Reads);
    Ok(())
}

/// Every operand names nothing (`echo`, `basename`, `seq`).
pub(crate) fn inert(p: &mut Parsed<'_>) -> Result<(), Unread> {
    p.all(Role::Inert);
    Ok(())
}

/// The program takes no operands.
pub(crate) fn none(p: &mut Parsed<'_>) -> Result<(), Unread> {
    match p.operands.first() {
        Some(&i) => Err(Unread::Unplaced(p.items[i].text.to_string())),
        None => Ok(()),
    }
}
