//! A GNU sed program, read the way GNU sed 4.9 reads it (`compile_program` in `sed/compile.c`).
//!
//! The grammar has traps a regex-level scan misses: a label ends at a blank, `;`, `}` or `#`,
//! and whatever follows is the next command (`:a e touch x` is a label and an `e`); the
//! filename of `r R w W` and `s///w` runs to the end of the line, `;` and `}` included; a
//! bracket expression in a regex hides the delimiter (`s/[/]/x/`); a text ending in a backslash
//! continues on the next line, even into the next `-e`. The parser follows those rules byte by
//! byte and answers an error wherever sed would refuse the script, so a proof is only ever given
//! for a program sed would compile to exactly the commands returned here.

mod pieces;

use super::error::{ParseError, Parsed};
use super::text::{normalize, version_at_most_4_9, Text};

/// One address: what sed's `compile_address` accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Address {
    Line(u64),
    /// `first~step` with a non-zero step.
    Step(u64, u64),
    Last,
    /// `/re/` or `\cREc`, the pattern as sed stores it, with its `I` / `M` flags.
    Regex {
        pattern: Vec<u8>,
        icase: bool,
        multiline: bool,
    },
    /// `addr1,+N` (second address only).
    Plus(u64),
    /// `addr1,~N` (second address only).
    Multiple(u64),
    /// `+0` / `~0`: sed keeps it as a null address that ends the range at once.
    Null,
}

/// The flags of `s///`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SubstFlags {
    pub global: bool,
    pub print: bool,
    pub eval: bool,
    pub icase: bool,
    pub multiline: bool,
    pub number: Option<u64>,
    /// `w FILE`: the file is opened for writing when the script is compiled.
    pub write: Option<Vec<u8>>,
}

/// What one command does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Op {
    Block,
    EndBlock,
    Label(Vec<u8>),
    /// `b`, `t`, `T` with their (possibly empty) label.
    Branch(u8, Vec<u8>),
    /// `a`, `i`, `c` with their text as sed stores it.
    Text(u8, Vec<u8>),
    /// `e COMMAND`, or `e` alone (runs the pattern space).
    Exec(Vec<u8>),
    /// `= d D F g G h H n N p P x z`.
    Simple(u8),
    /// `l L q Q` with their optional number.
    Numbered(u8, Option<u64>),
    /// `r R w W` and their file.
    File(u8, Vec<u8>),
    Subst {
        pattern: Vec<u8>,
        replacement: Vec<u8>,
        flags: SubstFlags,
    },
    Translit {
        from: Vec<u8>,
        to: Vec<u8>,
    },
    /// `v [VERSION]`: compiles to nothing in sed (kept so a policy can see it).
    Version,
}

/// One command with its addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Command {
    pub a1: Option<Address>,
    pub a2: Option<Address>,
    pub bang: bool,
    pub op: Op,
}

/// Parse a whole program: the `-e` scripts joined with newlines, as sed joins them.
pub(crate) fn parse(script: &[u8]) -> Parsed<Vec<Command>> {
    if !script.is_ascii() {
        // In a multibyte locale (Shift-JIS, Big5) a `\` or delimiter byte can be the tail of a
        // character sed skips; which locale the executor uses is not known here.
        return Err(ParseError("non-ASCII bytes (multibyte locales are not modelled)"));
    }
    if script.contains(&0) {
        return Err(ParseError("NUL byte"));
    }
    Parser { src: script, at: 0 }.program()
}

struct Parser<'a> {
    src: &'a [u8],
    at: usize,
}

fn is_blank(c: Option<u8>) -> bool {
    matches!(c, Some(b' ' | b'\t'))
}

fn is_space(c: Option<u8>) -> bool {
    matches!(c, Some(b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'))
}

impl Parser<'_> {
    fn inchar(&mut self) -> Option<u8> {
        let c = self.src.get(self.at).copied();
        if c.is_some() {
            self.at += 1;
        }
        c
    }

    /// Put back the character just read (`savchar`); EOF puts back nothing.
    fn savchar(&mut self, c: Option<u8>) {
        if c.is_some() {
            self.at -= 1;
        }
    }

    fn in_nonblank(&mut self) -> Option<u8> {
        loop {
            let c = self.inchar();
            if !is_blank(c) {
                return c;
            }
        }
    }

    fn in_integer(&mut self, first: Option<u8>) -> Parsed<u64> {
        let mut n: u64 = 0;
        let mut c = first;
        while let Some(d @ b'0'..=b'9') = c {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u64::from(d - b'0')))
                .ok_or(ParseError("number overflows"))?;
            c = self.inchar();
        }
        self.savchar(c);
        Ok(n)
    }

    fn program(&mut self) -> Parsed<Vec<Command>> {
        let mut out = Vec::new();
        let mut depth = 0usize;
        loop {
            let mut c = self.inchar();
            while c == Some(b';') || is_space(c) {
                c = self.inchar();
            }
            let Some(_) = c else { break };
            let mut a1 = None;
            let mut a2 = None;
            if let Some(a) = self.address(c)? {
                if matches!(a, Address::Plus(_) | Address::Multiple(_)) {
                    return Err(ParseError("+N or ~N as first address"));
                }
                a1 = Some(a);
                c = self.in_nonblank();
                if c == Some(b',') {
                    let next = self.in_nonblank();
                    a2 = Some(self.address(next)?.ok_or(ParseError("unexpected ,"))?);
                    c = self.in_nonblank();
                }
                if a1 == Some(Address::Line(0))
                    && ((a2.is_none() && c != Some(b'r'))
                        || a2.as_ref().is_some_and(|a| !matches!(a, Address::Regex { .. })))
                {
                    return Err(ParseError("invalid usage of line address 0"));
                }
            }
            let mut bang = false;
            if c == Some(b'!') {
                bang = true;
                c = self.in_nonblank();
                if c == Some(b'!') {
                    return Err(ParseError("multiple !s"));
                }
            }
            let has_addr = a1.is_some();
            let op = match c.ok_or(ParseError("missing command"))? {
                b'#' => {
                    if has_addr {
                        return Err(ParseError("comments don't accept addresses"));
                    }
                    while !matches!(self.inchar(), None | Some(b'\n')) {}
                    continue;
                }
                b'v' => {
                    // A version check; `v` compiles to nothing (4.9 accepts up to its own version).
                    let version = self.read_label();
                    if !version.is_empty() && !version_at_most_4_9(&version) {
                        return Err(ParseError("expected newer version of sed"));
                    }
                    Op::Version
                }
                b'{' => {
                    depth += 1;
                    Op::Block
                }
                b'}' => {
                    if depth == 0 {
                        return Err(ParseError("unexpected }"));
                    }
                    if has_addr {
                        return Err(ParseError("} doesn't want any addresses"));
                    }
                    self.end_of_command()?;
                    depth -= 1;
                    Op::EndBlock
                }
                b'e' => {
                    let next = self.in_nonblank();
                    match next {
                        None | Some(b'\n') => Op::Exec(Vec::new()),
                        _ => Op::Exec(self.text_after(next)?),
                    }
                }
                letter @ (b'a' | b'i' | b'c') => {
                    let next = self.in_nonblank();
                    Op::Text(letter, self.text_after(next)?)
                }
                b':' => {
                    if has_addr {
                        return Err(ParseError(": doesn't want any addresses"));
                    }
                    let label = self.read_label();
                    if label.is_empty() {
                        return Err(ParseError("\":\" lacks a label"));
                    }
                    Op::Label(label)
                }
                letter @ (b'b' | b't' | b'T') => Op::Branch(letter, self.read_label()),
                letter @ (b'q' | b'Q' | b'l' | b'L') => {
                    if matches!(letter, b'q' | b'Q') && a2.is_some() {
                        return Err(ParseError("command only uses one address"));
                    }
                    let next = self.in_nonblank();
                    let n = match next {
                        Some(b'0'..=b'9') => Some(self.in_integer(next)?),
                        _ => {
                            self.savchar(next);
                            None
                        }
                    };
                    self.end_of_command()?;
                    Op::Numbered(letter, n)
                }
                letter @ (b'=' | b'd' | b'D' | b'F' | b'g' | b'G' | b'h' | b'H' | b'n' | b'N' | b'p'
                | b'P' | b'z' | b'x') => {
                    self.end_of_command()?;
                    Op::Simple(letter)
                }
                letter @ (b'r' | b'R' | b'w' | b'W') => {
                    let name = self.read_filename();
                    if name.is_empty() {
                        return Err(ParseError("missing filename in r/R/w/W commands"));
                    }
                    if letter == b'r' && a1 == Some(Address::Line(0)) && a2.is_none() {
                        // `0r FILE` inserts before the first line; sed stores it as `1r`.
                        a1 = Some(Address::Line(1));
                    }
                    Op::File(letter, name)
                }
                b's' => {
                    let slash = self.inchar();
                    let pattern =
                        self.match_slash(slash, true)?.ok_or(ParseError("unterminated `s' command"))?;
                    let replacement =
                        self.match_slash(slash, false)?.ok_or(ParseError("unterminated `s' command"))?;
                    let flags = self.subst_flags()?;
                    normalize(&pattern, Text::Regex)?;
                    normalize(&replacement, Text::Replacement)?;
                    Op::Subst { pattern, replacement, flags }
                }
                b'y' => {
                    let slash = self.inchar();
                    let from =
                        self.match_slash(slash, false)?.ok_or(ParseError("unterminated `y' command"))?;
                    let to = self.match_slash(slash, false)?.ok_or(ParseError("unterminated `y' command"))?;
                    if normalize(&from, Text::Buffer)?.len() != normalize(&to, Text::Buffer)?.len() {
                        return Err(ParseError("strings for `y' command are different lengths"));
                    }
                    self.end_of_command()?;
                    Op::Translit { from, to }
                }
                _ => return Err(ParseError("unknown command")),
            };
            out.push(Command { a1, a2, bang, op });
        }
        if depth != 0 {
            return Err(ParseError("unmatched {"));
        }
        let defined = |label: &[u8]| out.iter().any(|c| matches!(&c.op, Op::Label(l) if l == label));
        if out.iter().any(|c| matches!(&c.op, Op::Branch(_, l) if !l.is_empty() && !defined(l))) {
            return Err(ParseError("can't find label for jump"));
        }
        Ok(out)
    }

    /// `compile_address`: `None` if `c` starts no address (nothing is consumed then).
    fn address(&mut self, c: Option<u8>) -> Parsed<Option<Address>> {
        match c {
            Some(b'/' | b'\\') => {
                let slash = if c == Some(b'\\') { self.inchar() } else { c };
                let pattern =
                    self.match_slash(slash, true)?.ok_or(ParseError("unterminated address regex"))?;
                normalize(&pattern, Text::Regex)?;
                let (mut icase, mut multiline) = (false, false);
                loop {
                    match self.in_nonblank() {
                        Some(b'I') => icase = true,
                        Some(b'M') => multiline = true,
                        other => {
                            self.savchar(other);
                            return Ok(Some(Address::Regex { pattern, icase, multiline }));
                        }
                    }
                }
            }
            Some(b'0'..=b'9') => {
                let first = self.in_integer(c)?;
                let next = self.in_nonblank();
                if next != Some(b'~') {
                    self.savchar(next);
                    return Ok(Some(Address::Line(first)));
                }
                let after = self.in_nonblank();
                match self.in_integer(after)? {
                    0 => Ok(Some(Address::Line(first))),
                    step => Ok(Some(Address::Step(first, step))),
                }
            }
            Some(sign @ (b'+' | b'~')) => {
                let after = self.in_nonblank();
                match (self.in_integer(after)?, sign) {
                    (0, _) => Ok(Some(Address::Null)),
                    (n, b'+') => Ok(Some(Address::Plus(n))),
                    (n, _) => Ok(Some(Address::Multiple(n))),
                }
            }
            Some(b'$') => Ok(Some(Address::Last)),
            _ => Ok(None),
        }
    }

    /// `read_end_of_cmd`: blanks, then `;`, newline, EOF, or a `}` / `#` left for the next round.
    fn end_of_command(&mut self) -> Parsed<()> {
        match self.in_nonblank() {
            c @ Some(b'}' | b'#') => {
                self.savchar(c);
                Ok(())
            }
            None | Some(b'\n' | b';') => Ok(()),
            Some(_) => Err(ParseError("extra characters after command")),
        }
    }
}
