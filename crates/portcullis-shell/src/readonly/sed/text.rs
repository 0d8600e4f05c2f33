//! The text rules GNU sed applies after parsing: `normalize_text`'s escapes and the `v`
//! command's version comparison.

use super::error::{ParseError, Parsed};

/// `strverscmp(version, "4.9") <= 0`: bytes compare as bytes, digit runs as numbers, and a run
/// with a leading zero (glibc's "fractional" part: `01`, `09`) is less than any run without one
/// — which every run of `4.9` is — so `v01`, `v4.09` and `v04.9` compile, as GNU sed 4.9 does.
pub(super) fn version_at_most_4_9(version: &[u8]) -> bool {
    let ours = b"4.9";
    let (mut a, mut b) = (version, &ours[..]);
    loop {
        match (a.first(), b.first()) {
            (None, _) => return true,
            (Some(_), None) => return false,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let run = |s: &[u8]| s.iter().take_while(|c| c.is_ascii_digit()).count();
                let (ra, rb) = (run(a), run(b));
                if a[0] == b'0' && ra > 1 {
                    // Fractional against 4.9's integral run: less, whatever follows.
                    return b[0] != b'0';
                }
                let num = |s: &[u8]| std::str::from_utf8(s).ok().and_then(|t| t.parse::<u64>().ok());
                match (num(&a[..ra]), num(&b[..rb])) {
                    (Some(x), Some(y)) if x != y => return x < y,
                    (Some(_), Some(_)) => {}
                    _ => return false,
                }
                (a, b) = (&a[ra..], &b[rb..]);
            }
            (Some(x), Some(y)) if x != y => return x < y,
            _ => (a, b) = (&a[1..], &b[1..]),
        }
    }
}

/// Which of sed's `normalize_text` buffers a text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Text {
    /// `a i c` text and `y` strings: an unknown `\x` is `x`.
    Buffer,
    /// A regex or replacement: an unknown `\x` stays `\x` for the next stage.
    Regex,
    Replacement,
}

/// sed's `normalize_text`: `\n \t \a \f \v \r`, `\dNNN \oNNN \xHH`, `\cX`.
pub(crate) fn normalize(buf: &[u8], kind: Text) -> Parsed<Vec<u8>> {
    let mut out = Vec::with_capacity(buf.len());
    let mut p = 0;
    while p < buf.len() {
        if buf[p] != b'\\' || p + 1 >= buf.len() {
            out.push(buf[p]);
            p += 1;
            continue;
        }
        p += 1;
        let simple = match buf[p] {
            b'a' => Some(0x07),
            b'f' => Some(0x0c),
            b'\n' | b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(0x0b),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            p += 1;
            continue;
        }
        let base = match buf[p] {
            b'd' => Some((10, 3)),
            b'o' => Some((8, 3)),
            b'x' => Some((16, 2)),
            _ => None,
        };
        if let Some((base, max)) = base {
            // `convert_number`: up to `max` digits; none at all leaves the letter itself.
            let digits = buf[p + 1..].iter().take(max).take_while(|d| (**d as char).is_digit(base)).count();
            let c = match digits {
                0 => buf[p],
                n => {
                    let text = std::str::from_utf8(&buf[p + 1..p + 1 + n]).unwrap_or("0");
                    u32::from_str_radix(text, base).unwrap_or(0) as u8
                }
            };
            if kind == Text::Replacement && (c == b'&' || c == b'\\') {
                out.push(b'\\');
            }
            out.push(c);
            p += 1 + digits;
            continue;
        }
        if buf[p] == b'c' {
            if p + 1 < buf.len() {
                out.push(buf[p + 1].to_ascii_uppercase() ^ 0x40);
                if buf[p + 1] == b'\\' {
                    if buf.get(p + 2) != Some(&b'\\') {
                        return Err(ParseError("recursive escaping after \\c not allowed"));
                    }
                    p += 1;
                }
                p += 2;
            } else {
                if kind != Text::Buffer {
                    out.push(b'\\');
                }
                p += 1;
            }
            continue;
        }
        if kind != Text::Buffer {
            out.push(b'\\');
        }
        out.push(buf[p]);
        p += 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::version_at_most_4_9;

    /// Each case as GNU sed 4.9 decides `echo | sed vVERSION` (checked against the real sed).
    #[test]
    fn versions_compare_as_gnu_sed_4_9_compares_them() {
        let compiles = ["", "0", "01", "4.9", "4.09", "04.9", "01.2.3", "1.x", "0x1", "1e3", "4.8.9", "4"];
        let refused = ["4.10", "5", "4.9.0", "4.9.1", "4.90", "10", "40"];
        for v in compiles {
            assert!(version_at_most_4_9(v.as_bytes()), "sed 4.9 compiles v{v}");
        }
        for v in refused {
            assert!(!version_at_most_4_9(v.as_bytes()), "sed 4.9 refuses v{v}");
        }
    }
}
