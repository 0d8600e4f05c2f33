//! The program as `sed --debug` prints it (`debug.c` in GNU sed 4.9), for the differential test:
//! a command the parser misreads renders differently from what sed compiled.

use super::parse::{Address, Command, Op};
use super::text::{normalize, Text};

/// `SED PROGRAM:` and one line per command, in the C locale (a unibyte `y` table).
pub(super) fn render(program: &[Command]) -> Vec<u8> {
    let mut out = b"SED PROGRAM:\n".to_vec();
    let mut level = 1usize;
    for command in program.iter().filter(|c| c.op != Op::Version) {
        if command.op == Op::EndBlock {
            level -= 1;
        }
        out.extend(std::iter::repeat_n(b' ', 2 * level));
        if let Some(a) = &command.a1 {
            address(&mut out, a);
        }
        if let Some(a) = &command.a2 {
            out.push(b',');
            address(&mut out, a);
        }
        if command.bang {
            out.push(b'!');
        }
        if command.a1.is_some() || command.a2.is_some() {
            out.push(b' ');
        }
        function(&mut out, program, &command.op);
        out.push(b'\n');
        if command.op == Op::Block {
            level += 1;
        }
    }
    out
}

fn address(out: &mut Vec<u8>, a: &Address) {
    match a {
        Address::Null => out.extend(b"[ADDR-NULL]"),
        Address::Regex { pattern, icase, multiline } => {
            regex(out, pattern);
            if !pattern.is_empty() {
                out.extend(icase.then_some(b'I'));
                out.extend(multiline.then_some(b'M'));
            }
        }
        Address::Line(n) => out.extend(n.to_string().bytes()),
        Address::Step(first, step) => out.extend(format!("{first}~{step}").bytes()),
        Address::Plus(n) => out.extend(format!("+{n}").bytes()),
        Address::Multiple(n) => out.extend(format!("~{n}").bytes()),
        Address::Last => out.push(b'$'),
    }
}

fn regex(out: &mut Vec<u8>, pattern: &[u8]) {
    out.push(b'/');
    for &c in &normalize(pattern, Text::Regex).unwrap_or_default() {
        match c {
            b'/' => out.extend(b"\\/"),
            c => escaped(out, c),
        }
    }
    out.push(b'/');
}

/// `debug_print_char`.
fn escaped(out: &mut Vec<u8>, c: u8) {
    if (0x20..0x7f).contains(&c) && c != b'\\' {
        out.push(c);
        return;
    }
    out.push(b'\\');
    match c {
        0x07 => out.push(b'a'),
        0x0c => out.push(b'f'),
        b'\r' => out.push(b'r'),
        b'\t' => out.push(b't'),
        0x0b => out.push(b'v'),
        b'\n' => out.push(b'n'),
        b'\\' => out.push(b'\\'),
        c => out.extend(format!("o{c:03o}").bytes()),
    }
}

fn function(out: &mut Vec<u8>, program: &[Command], op: &Op) {
    match op {
        Op::Block => out.push(b'{'),
        Op::EndBlock => out.push(b'}'),
        Op::Label(l) => {
            out.push(b':');
            out.extend(l);
        }
        Op::Branch(letter, label) => {
            out.push(*letter);
            let exists = program.iter().any(|c| matches!(&c.op, Op::Label(l) if l == label));
            if !label.is_empty() && exists {
                out.push(b' ');
                out.extend(label);
            }
        }
        Op::Text(letter, text) => {
            out.push(*letter);
            out.push(b'\\');
            out.extend(text);
        }
        Op::Exec(text) => {
            out.extend(b"e ");
            out.extend(text);
        }
        Op::Simple(letter) => out.push(*letter),
        Op::Numbered(letter, n) => {
            out.push(*letter);
            if let Some(n) = n {
                out.extend(format!(" {n}").bytes());
            }
        }
        Op::File(letter @ (b'r' | b'R'), name) => {
            out.push(*letter);
            out.push(b' ');
            out.extend(name);
        }
        Op::File(letter, name) => {
            out.push(*letter);
            out.extend(name);
        }
        Op::Subst { pattern, replacement, flags } => {
            out.push(b's');
            if pattern.is_empty() {
                out.extend(b"//");
            } else {
                regex(out, pattern);
            }
            self::replacement(out, replacement);
            out.push(b'/');
            if !pattern.is_empty() {
                out.extend(flags.icase.then_some(b'i'));
                out.extend(flags.multiline.then_some(b'm'));
            }
            out.extend(flags.global.then_some(b'g'));
            out.extend(flags.eval.then_some(b'e'));
            out.extend(flags.print.then_some(b'p'));
            if let Some(n) = flags.number {
                out.extend(n.to_string().bytes());
            }
            if let Some(name) = &flags.write {
                out.push(b'w');
                out.extend(name);
            }
        }
        Op::Version => {}
        Op::Translit { from, to } => {
            let mut table: Vec<u8> = (0..=255).collect();
            for (f, t) in normalize(from, Text::Buffer)
                .unwrap_or_default()
                .iter()
                .zip(normalize(to, Text::Buffer).unwrap_or_default())
            {
                table[usize::from(*f)] = t;
            }
            out.extend(b"y/");
            out.extend((0..=255u8).filter(|&i| table[usize::from(i)] != i));
            out.push(b'/');
            out.extend((0..=255u8).filter(|&i| table[usize::from(i)] != i).map(|i| table[usize::from(i)]));
            out.push(b'/');
        }
    }
}

/// `setup_replacement` then `debug_print_subst_replacement`: literal runs, `&`, `\N`, and the
/// case conversions, each marker printed when the conversion changes.
fn replacement(out: &mut Vec<u8>, text: &[u8]) {
    const ASIS: u8 = 0;
    const UPPER: u8 = 1;
    const LOWER: u8 = 2;
    const UPPER_FIRST: u8 = 4;
    const LOWER_FIRST: u8 = 8;
    let text = normalize(text, Text::Replacement).unwrap_or_default();
    // (prefix, reference, conversion)
    let mut parts: Vec<(Vec<u8>, Option<u8>, u8)> = Vec::new();
    let (mut kind, mut saved) = (ASIS, ASIS);
    let mut literal = Vec::new();
    let mut p = 0;
    while p < text.len() {
        match text[p] {
            b'\\' => {
                let mut part = (std::mem::take(&mut literal), None, kind);
                kind = saved;
                p += 1;
                match text.get(p) {
                    None => part.0.push(b'\\'),
                    Some(d @ b'0'..=b'9') => part.1 = Some(d - b'0'),
                    Some(b'L') => (kind, saved) = (LOWER, LOWER),
                    Some(b'U') => (kind, saved) = (UPPER, UPPER),
                    Some(b'E') => (kind, saved) = (ASIS, ASIS),
                    Some(b'l') => (saved, kind) = (kind, kind | LOWER_FIRST),
                    Some(b'u') => (saved, kind) = (kind, kind | UPPER_FIRST),
                    Some(&c) => part.0.push(c),
                }
                parts.push(part);
            }
            b'&' => {
                parts.push((std::mem::take(&mut literal), Some(0), kind));
                kind = saved;
            }
            c => literal.push(c),
        }
        p += 1;
    }
    if !literal.is_empty() {
        parts.push((literal, None, kind));
    }
    let mut last = ASIS;
    for (prefix, reference, kind) in parts {
        if kind != last {
            out.push(b'\\');
            match kind {
                ASIS => out.push(b'E'),
                UPPER => out.push(b'U'),
                LOWER => out.push(b'L'),
                k if k & 12 == UPPER_FIRST => out.push(b'u'),
                k if k & 12 == LOWER_FIRST => out.push(b'l'),
                _ => {}
            }
            last = kind;
        }
        out.extend(prefix);
        match reference {
            Some(0) => out.push(b'&'),
            Some(n) => out.extend(format!("\\{n}").bytes()),
            None => {}
        }
    }
}
