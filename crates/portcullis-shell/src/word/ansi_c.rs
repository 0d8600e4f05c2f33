//! `$'…'` strings decoded as bash 5.2 does, and rewritten as single quotes for brace expansion.

/// A `$'…'` body as bash decodes it (`ansicstr` in bash 5.2's `lib/sh/strtrans.c`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AnsiC {
    /// The decoded text, cut at the first NUL as bash's C strings cut it (`$'rm\0x'` is `rm`).
    pub text: String,
    /// A `\u`/`\U` escape above ASCII (its bytes depend on the locale), or bytes that are not
    /// UTF-8: the text here is only an approximation.
    pub inexact: bool,
}

/// Decode the body of a `$'…'` string.
pub(crate) fn ansi_c(body: &str) -> AnsiC {
    let src = body.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(src.len());
    let mut inexact = false;
    let mut i = 0;
    let hex = |b: u8| char::from(b).to_digit(16);
    while i < src.len() {
        let c = src[i];
        i += 1;
        if c != b'\\' || i >= src.len() {
            out.push(c);
            continue;
        }
        let e = src[i];
        i += 1;
        match e {
            b'a' => out.push(0x07),
            b'b' => out.push(0x08),
            b'e' | b'E' => out.push(0x1b),
            b'f' => out.push(0x0c),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(0x0b),
            b'\\' | b'\'' | b'"' | b'?' => out.push(e),
            b'0'..=b'7' => {
                // Up to three octal digits, truncated to a byte: `\400` is NUL.
                let mut value = u32::from(e - b'0');
                for _ in 0..2 {
                    match src.get(i) {
                        Some(d @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push((value & 0xff) as u8);
            }
            b'x' => {
                // `\xHH`, or ksh93's `\x{H…}` with any number of digits (`\x{}` is NUL).
                let braced = src.get(i) == Some(&b'{');
                if braced {
                    i += 1;
                }
                let mut value = 0u32;
                let mut digits = 0;
                while let Some(d) = src.get(i).and_then(|&b| hex(b)) {
                    if !braced && digits == 2 {
                        break;
                    }
                    value = value.wrapping_mul(16).wrapping_add(d);
                    digits += 1;
                    i += 1;
                }
                if braced {
                    if src.get(i) == Some(&b'}') {
                        i += 1;
                    }
                    out.push((value & 0xff) as u8);
                } else if digits == 0 {
                    out.extend_from_slice(b"\\x");
                } else {
                    out.push((value & 0xff) as u8);
                }
            }
            b'u' | b'U' => {
                let max = if e == b'u' { 4 } else { 8 };
                let mut value = 0u32;
                let mut digits = 0;
                while digits < max {
                    let Some(d) = src.get(i).and_then(|&b| hex(b)) else { break };
                    value = value.wrapping_mul(16).wrapping_add(d);
                    digits += 1;
                    i += 1;
                }
                if digits == 0 {
                    out.push(b'\\');
                    out.push(e);
                } else if value <= 0x7f {
                    out.push(value as u8);
                } else if value <= 0x7fff_ffff {
                    // In a UTF-8 locale these bytes; in others a `\uXXXX` spelling or the
                    // charset's own: never empty, never NUL.
                    inexact = true;
                    out.extend_from_slice(&extended_utf8(value));
                }
                // Above that bash's conversion yields nothing at all.
            }
            b'c' => match src.get(i) {
                None => out.extend_from_slice(b"\\c"),
                Some(&ctl) => {
                    i += 1;
                    // POSIX: `$'\c\\'` spends both backslashes.
                    if ctl == b'\\' && src.get(i) == Some(&b'\\') {
                        i += 1;
                    }
                    out.push(if ctl == b'?' { 0x7f } else { ctl.to_ascii_uppercase() & 0x1f });
                }
            },
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    if let Some(nul) = out.iter().position(|&b| b == 0) {
        out.truncate(nul);
    }
    let text = match String::from_utf8(out) {
        Ok(text) => text,
        Err(e) => {
            inexact = true;
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    AnsiC { text, inexact }
}

/// Rewrite each `$'…'` as the single-quoted string it decodes to, as bash's parser does before
/// brace expansion sees the word (so `{$'\x2c'}` has no separator). Returns whether a decoding
/// was inexact.
pub(super) fn quote_ansi_c(raw: &str) -> (String, bool) {
    let mut out = String::with_capacity(raw.len());
    let mut inexact = false;
    let mut chars = raw.chars().peekable();
    let mut double = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            '"' => {
                double = !double;
                out.push(c);
            }
            '\'' if !double => {
                out.push(c);
                for q in chars.by_ref() {
                    out.push(q);
                    if q == '\'' {
                        break;
                    }
                }
            }
            '$' if !double && chars.peek() == Some(&'\'') => {
                chars.next();
                let mut body = String::new();
                while let Some(b) = chars.next() {
                    match b {
                        '\'' => break,
                        '\\' => {
                            body.push(b);
                            if let Some(next) = chars.next() {
                                body.push(next);
                            }
                        }
                        _ => body.push(b),
                    }
                }
                let decoded = ansi_c(&body);
                inexact |= decoded.inexact;
                out.push('\'');
                out.push_str(&decoded.text.replace('\'', "'\\''"));
                out.push('\'');
            }
            _ => out.push(c),
        }
    }
    (out, inexact)
}

/// bash's `u32toutf8`: UTF-8 extended to 31 bits, surrogates included.
fn extended_utf8(v: u32) -> Vec<u8> {
    let (len, lead) = match v {
        0..=0x7f => return vec![v as u8],
        0x80..=0x7ff => (2, 0xc0),
        0x800..=0xffff => (3, 0xe0),
        0x1_0000..=0x1f_ffff => (4, 0xf0),
        0x20_0000..=0x3ff_ffff => (5, 0xf8),
        _ => (6, 0xfc),
    };
    let mut bytes = vec![0u8; len];
    let mut rest = v;
    for b in bytes.iter_mut().skip(1).rev() {
        *b = 0x80 | (rest & 0x3f) as u8;
        rest >>= 6;
    }
    bytes[0] = lead | rest as u8;
    bytes
}
