//! A proof, far cheaper than the scan, that a string names no destination: the bytes every
//! reading of [`super::scan`] needs before it can find one, derived from its grammar.
//!
//! What the scan reads, and what each reading needs in the string's bytes:
//! - a URL: a scheme's `:` ([`super::scan`]'s `urls` starts only at a colon);
//! - an e-mail address: `@`; a bracketed or bare IPv6 address: `[` or `:`; a port: `:`;
//! - a host inside a text (a word): a dot (`a.b.c.d`, `name.tld`: both shapes need two labels);
//! - JSON escapes the scan undoes and reads again: `\`; percent-encoding: `%`;
//! - anything outside ASCII (unicode dots `。．｡`, fullwidth letters, IDNA, Unicode spaces);
//! - an IBAN: two capitals and two digits in a row;
//! - the whole value, read loosely: an inet_aton number (a first digit: `0x7f000001`,
//!   `2130706433`) or a single label the resolver sends somewhere special (`localhost`,
//!   `metadata`), checked here exactly as the scan checks it.
//!
//! A string with none of these is quiet. The proptest below holds the proof to the scan itself.

/// Bytes that may start a reading: every non-ASCII byte, and `:@[.\%`.
const LOUD: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0x80;
    while i < 256 {
        t[i] = true;
        i += 1;
    }
    let marks = b":@[.\\%";
    let mut j = 0;
    while j < marks.len() {
        t[marks[j] as usize] = true;
        j += 1;
    }
    t
};

/// True when the scan provably finds no destination in `s` (a string or key of the arguments):
/// the scan of it may be skipped. False says only "read it in full".
pub fn quiet(s: &str) -> bool {
    let b = s.as_bytes();
    if b.iter().any(|&c| LOUD[usize::from(c)]) || iban_head(b) {
        return false;
    }
    // The whole value as one token (no whitespace): read loosely, as a host a program is handed.
    let whole = s.trim();
    if whole.is_empty() || whole.contains(char::is_whitespace) {
        return true;
    }
    // The scan reads the authority, the part before a `/` (`localhost/x`).
    let authority = whole.split('/').next().unwrap_or(whole);
    let numeric = authority.as_bytes().first().is_some_and(u8::is_ascii_digit);
    !numeric && !super::special::grave_label(authority)
}

/// Two capitals then two digits somewhere: where an IBAN can start (the scan's own head test,
/// without its word-boundary condition, so a superset).
fn iban_head(b: &[u8]) -> bool {
    b.windows(4).any(|w| {
        w[0].is_ascii_uppercase()
            && w[1].is_ascii_uppercase()
            && w[2].is_ascii_digit()
            && w[3].is_ascii_digit()
    })
}

#[cfg(test)]
mod tests;
