//! The pieces of a sed command that GNU sed reads byte by byte after the command letter:
//! labels, file names, `a i c` texts, delimited regexes and replacements (a bracket expression
//! hides the delimiter), and the flags of `s`.

use super::super::error::{ParseError, Parsed};
use super::super::text::{normalize, Text};
use super::{Parser, SubstFlags};

impl Parser<'_> {
    /// `read_label`: after blanks, up to a blank, `;`, `}`, `#`, newline or EOF (left unread).
    pub(super) fn read_label(&mut self) -> Vec<u8> {
        let mut label = Vec::new();
        let mut c = self.in_nonblank();
        while let Some(b) = c {
            if matches!(b, b'\n' | b' ' | b'\t' | b';' | b'}' | b'#') {
                break;
            }
            label.push(b);
            c = self.inchar();
        }
        self.savchar(c);
        label
    }

    /// `read_filename`: after blanks, everything to the end of the line.
    pub(super) fn read_filename(&mut self) -> Vec<u8> {
        let mut name = Vec::new();
        let mut c = self.in_nonblank();
        while let Some(b) = c {
            if b == b'\n' {
                break;
            }
            name.push(b);
            c = self.inchar();
        }
        name
    }

    /// The text of `a i c e`, given the first non-blank after the letter.
    pub(super) fn text_after(&mut self, first: Option<u8>) -> Parsed<Vec<u8>> {
        let leadin = match first {
            None => return Err(ParseError("expected \\ after `a', `c' or `i'")),
            Some(b'\\') => self.inchar(),
            Some(_) => {
                self.savchar(first);
                Some(b'\n')
            }
        };
        self.read_text(leadin)
    }

    /// `read_text`: the text runs to an unescaped newline; a backslash keeps the next byte
    /// (a newline included) with it. The text is returned as sed stores it: normalised, with
    /// its trailing newline.
    /// The text keeps sed's trailing newline.
    pub(super) fn read_text(&mut self, leadin: Option<u8>) -> Parsed<Vec<u8>> {
        let mut text = Vec::new();
        let Some(leadin) = leadin else { return Ok(text) };
        if leadin != b'\n' {
            text.push(leadin);
        }
        let mut c = self.inchar();
        while let Some(b) = c {
            if b == b'\n' {
                break;
            }
            if b == b'\\' {
                match self.inchar() {
                    // Still pending at the end of the program: sed keeps it unnormalised.
                    None => {
                        text.push(b'\n');
                        return Ok(text);
                    }
                    Some(next) => {
                        text.push(b'\\');
                        text.push(next);
                    }
                }
            } else {
                text.push(b);
            }
            c = self.inchar();
        }
        text.push(b'\n');
        normalize(&text, Text::Buffer)
    }

    /// `match_slash`: the text up to the unescaped `slash`, with `\slash` and `\newline`
    /// unescaped; in a regex a bracket expression is copied whole (`[/]` holds no delimiter).
    /// `None` when the line or script ends first.
    pub(super) fn match_slash(&mut self, slash: Option<u8>, regex: bool) -> Parsed<Option<Vec<u8>>> {
        let slash = match slash {
            // A backslash is a delimiter like any other (GNU sed 4.9: `s\a\b\`, `\\x\p`).
            Some(b'\n') | None => return Ok(None),
            Some(s) => s,
        };
        let mut out = Vec::new();
        loop {
            let Some(mut c) = self.inchar() else { return Ok(None) };
            if c == b'\n' {
                self.savchar(Some(c));
                return Ok(None);
            }
            if c == slash {
                return Ok(Some(out));
            } else if c == b'\\' {
                let Some(next) = self.inchar() else { return Ok(None) };
                if next != b'\n' && (next != slash || (!regex && next == b'&')) {
                    out.push(b'\\');
                }
                c = next;
            } else if c == b'[' && regex {
                out.push(c);
                match self.bracket(&mut out) {
                    Some(b']') => c = b']',
                    Some(b'\n') => {
                        self.savchar(Some(b'\n'));
                        return Ok(None);
                    }
                    _ => return Ok(None),
                }
            }
            out.push(c);
        }
    }

    /// `snarf_char_class`: copy a bracket expression up to (not including) its closing `]`,
    /// which is returned (or the newline / EOF that ended it first).
    pub(super) fn bracket(&mut self, out: &mut Vec<u8>) -> Option<u8> {
        let mut c = self.inchar();
        if c == Some(b'^') {
            out.push(b'^');
            c = self.inchar();
        }
        if c == Some(b']') {
            out.push(b']');
            c = self.inchar();
        }
        // 0: plain, 1: after `[`, 2: inside `[: :]` / `[. .]` / `[= =]`, 3: after its closing char.
        let mut state = 0u8;
        let mut delim = 0u8;
        loop {
            let b = match c {
                None | Some(b'\n') => return c,
                Some(b) => b,
            };
            let mut keep_state = false;
            match b {
                b'.' | b':' | b'=' => {
                    if state == 1 {
                        delim = b;
                        state = 2;
                        keep_state = true;
                    } else if state == 2 && b == delim {
                        state = 3;
                        keep_state = true;
                    }
                }
                b'[' => {
                    if state == 0 {
                        state = 1;
                    }
                    keep_state = true;
                }
                b']' => {
                    if state == 0 || state == 1 {
                        return c;
                    } else if state == 3 {
                        state = 0;
                    }
                }
                _ => {}
            }
            if !keep_state {
                state &= !1;
            }
            out.push(b);
            c = self.inchar();
        }
    }

    /// `mark_subst_opts`.
    pub(super) fn subst_flags(&mut self) -> Parsed<SubstFlags> {
        let mut f = SubstFlags::default();
        loop {
            let c = self.in_nonblank();
            match c {
                Some(b'i' | b'I') => f.icase = true,
                Some(b'm' | b'M') => f.multiline = true,
                Some(b'e') => f.eval = true,
                Some(b'p') if f.print => return Err(ParseError("multiple `p' options to `s' command")),
                Some(b'p') => f.print = true,
                Some(b'g') if f.global => return Err(ParseError("multiple `g' options to `s' command")),
                Some(b'g') => f.global = true,
                Some(b'w') => {
                    f.write = Some(self.read_filename());
                    return Ok(f);
                }
                Some(b'0'..=b'9') => {
                    if f.number.is_some() {
                        return Err(ParseError("multiple number options to `s' command"));
                    }
                    match self.in_integer(c)? {
                        0 => return Err(ParseError("number option to `s' command may not be zero")),
                        n => f.number = Some(n),
                    }
                }
                Some(b'}' | b'#') => {
                    self.savchar(c);
                    return Ok(f);
                }
                None | Some(b'\n' | b';') => return Ok(f),
                _ => return Err(ParseError("unknown option to `s'")),
            }
        }
    }
}
