//! Text a human reviewer cannot see but a model reads: zero-width characters, Unicode tag
//! characters (which spell hidden ASCII), bidi controls (which reorder what is displayed — "Trojan
//! Source"), ANSI escape sequences (which recolour, hide or overwrite terminal output) and other
//! C0/C1 controls. Runs of the same kind are reported once.
//!
//! Legitimate uses are left alone: a byte-order mark at the very start, a zero-width joiner
//! inside an emoji sequence (👩‍💻) or between letters of a script that needs it (ZWNJ in
//! Persian), and the tag sequences that spell subdivision flags (🏴 + tags + cancel tag).

use super::{Category, Sink};

const INVISIBLE: Category = Category::InvisibleText;

/// The kinds of invisible text, in the order their runs are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    ZeroWidth,
    Tag,
    Bidi,
    AnsiColour,
    AnsiControl,
    Control,
}

impl Kind {
    fn detector(self) -> &'static str {
        match self {
            Kind::ZeroWidth => "zero_width",
            Kind::Tag => "unicode_tags",
            Kind::Bidi => "bidi_control",
            Kind::AnsiColour => "ansi_sgr",
            Kind::AnsiControl => "ansi_control",
            Kind::Control => "control_char",
        }
    }

    fn reason(self, count: usize) -> String {
        let what = match self {
            Kind::ZeroWidth => "zero-width character(s)",
            Kind::Tag => "Unicode tag character(s), which can spell hidden ASCII",
            Kind::Bidi => "bidirectional control character(s), which reorder displayed text",
            Kind::AnsiColour => "ANSI colour/style escape sequence(s)",
            Kind::AnsiControl => "ANSI control escape sequence(s) (cursor, erase, title or OSC)",
            Kind::Control => "control character(s)",
        };
        format!("{count} {what}")
    }
}

/// The bytes that can start an invisible character: ASCII controls other than tab and newlines,
/// and the UTF-8 lead bytes of U+0080–U+009F (C2), U+2000–U+2FFF (E2), U+FEFF (EF) and the tag
/// block U+E0000 (F3). Everything else is skipped without decoding.
static CAN_START_HIDDEN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = matches!(b, 0x00..=0x08 | 0x0b | 0x0c | 0x0e..=0x1f | 0x7f | 0xc2 | 0xe2 | 0xef | 0xf3);
        b += 1;
    }
    table
};

/// A run of hidden characters of one kind: its span and how many characters it holds.
struct Run {
    kind: Kind,
    span: std::ops::Range<usize>,
    count: usize,
}

pub(super) fn scan(text: &str, sink: &mut Sink) {
    let bytes = text.as_bytes();
    let mut run: Option<Run> = None;
    let mut at = 0;
    while at < bytes.len() {
        let Some(skip) = bytes[at..].iter().position(|&b| CAN_START_HIDDEN[usize::from(b)]) else { break };
        at += skip;
        let Some(c) = text[at..].chars().next() else { break };
        let prev = text[..at].chars().next_back();
        let next = text[at + c.len_utf8()..].chars().next();
        let (kind, len) = match classify(text, at, c, prev, next) {
            Seen::Visible => {
                at += c.len_utf8();
                continue;
            }
            Seen::Allowed(len) => {
                at += len;
                continue;
            }
            Seen::Hidden(kind, len) => (kind, len),
        };
        match &mut run {
            Some(current) if current.kind == kind && current.span.end == at => {
                current.span.end = at + len;
                current.count += 1;
            }
            _ => {
                flush(&mut run, sink);
                if sink.full(INVISIBLE) {
                    return;
                }
                run = Some(Run { kind, span: at..at + len, count: 1 });
            }
        }
        at += len;
    }
    flush(&mut run, sink);
}

fn flush(run: &mut Option<Run>, sink: &mut Sink) {
    if let Some(Run { kind, span, count }) = run.take() {
        sink.push(INVISIBLE, kind.detector(), span, kind.reason(count));
    }
}

/// What one character (or the sequence it starts) amounts to.
enum Seen {
    Visible,
    /// A legitimate invisible sequence of this many bytes (a subdivision flag's tags).
    Allowed(usize),
    /// Hidden text of this kind covering this many bytes (an escape sequence spans several).
    Hidden(Kind, usize),
}

fn classify(text: &str, at: usize, c: char, prev: Option<char>, next: Option<char>) -> Seen {
    let one = c.len_utf8();
    match c {
        '\t' | '\n' | '\r' => Seen::Visible,
        '\u{1b}' => {
            let (kind, len) = ansi_sequence(&text.as_bytes()[at..]);
            Seen::Hidden(kind, len)
        }
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => Seen::Hidden(Kind::Control, one),
        '\u{feff}' if at == 0 => Seen::Visible,
        '\u{200c}' | '\u{200d}' if joins_legitimately(prev, next) => Seen::Visible,
        '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' => Seen::Hidden(Kind::ZeroWidth, one),
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => Seen::Hidden(Kind::Bidi, one),
        '\u{e0000}'..='\u{e007f}' => match flag_tag_sequence_len(text, at, prev) {
            0 => Seen::Hidden(Kind::Tag, one),
            flag => Seen::Allowed(flag),
        },
        _ => Seen::Visible,
    }
}

/// The length of an ANSI escape sequence starting at ESC, and whether it only sets colours.
fn ansi_sequence(bytes: &[u8]) -> (Kind, usize) {
    match bytes.get(1) {
        // CSI: ESC [ parameters intermediates final-byte
        Some(b'[') => {
            let params = bytes[2..].iter().take_while(|b| (0x30..=0x3f).contains(*b)).count();
            let inter = bytes[2 + params..].iter().take_while(|b| (0x20..=0x2f).contains(*b)).count();
            let end = 2 + params + inter;
            match bytes.get(end) {
                Some(b'm') => (Kind::AnsiColour, end + 1),
                Some(&f) if (0x40..=0x7e).contains(&f) => (Kind::AnsiControl, end + 1),
                _ => (Kind::AnsiControl, end),
            }
        }
        // OSC: ESC ] … terminated by BEL or ESC \ (window titles, hyperlinks). The search
        // stops at the next ESC either way, so unterminated OSCs cannot make the scan quadratic;
        // an unterminated one is reported as its two introducing bytes.
        Some(b']') => {
            let body = &bytes[2..];
            let end = body.iter().position(|&b| b == 0x07 || b == 0x1b).map_or(0, |i| match body[i] {
                0x07 => i + 1,
                _ if body.get(i + 1) == Some(&b'\\') => i + 2,
                _ => 0,
            });
            (Kind::AnsiControl, 2 + end)
        }
        // Two-byte escapes (ESC c, ESC 7, …): only printable ASCII finals, so the length stays
        // on a char boundary.
        Some(&f) if (0x20..=0x7e).contains(&f) => (Kind::AnsiControl, 2),
        _ => (Kind::AnsiControl, 1),
    }
}

/// ZWJ/ZWNJ between two emoji, or between two non-ASCII letters (Indic and Arabic scripts use
/// them to choose glyph forms).
fn joins_legitimately(prev: Option<char>, next: Option<char>) -> bool {
    let (Some(p), Some(n)) = (prev, next) else { return false };
    (is_emoji(p) && is_emoji(n)) || (!p.is_ascii() && p.is_alphabetic() && !n.is_ascii() && n.is_alphabetic())
}

fn is_emoji(c: char) -> bool {
    matches!(c, '\u{1f000}'..='\u{1faff}' | '\u{2600}'..='\u{27bf}' | '\u{fe0f}' | '\u{2b00}'..='\u{2bff}')
}

/// A subdivision flag: U+1F3F4 followed by 1–8 tag characters ending in CANCEL TAG (U+E007F).
/// Returns the byte length of the tag run, or 0 when this is not one.
fn flag_tag_sequence_len(text: &str, at: usize, prev: Option<char>) -> usize {
    if prev != Some('\u{1f3f4}') {
        return 0;
    }
    let mut len = 0;
    for (i, c) in text[at..].chars().enumerate() {
        if !('\u{e0000}'..='\u{e007f}').contains(&c) || i > 8 {
            return 0;
        }
        len += c.len_utf8();
        if c == '\u{e007f}' {
            return len;
        }
    }
    0
}

#[cfg(test)]
#[path = "invisible_tests.rs"]
mod tests;
