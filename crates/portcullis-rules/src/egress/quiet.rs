//! A proof, far cheaper than the scan, that a string names no destination: the bytes every
//! reading of [`super::scan`] needs before it can find one, derived from its grammar.
//!
//! What the scan reads, and what each reading needs in the string's bytes:
//! - a URL: a scheme's `:` ([`super::scan`]'s `urls` starts only at a colon);
//! - an e-mail address: `@`; a bracketed or bare IPv6 address: `[` or `:`; a port: `:`;
//! - a host inside a text (a word): a dot (`a.b.c.d`, `name.tld`: both shapes need two labels);
//! - JSON escapes the scan undoes and reads again: `\`; percent-encoding: `%`;
//! - anything outside ASCII (unicode dots `。．｡`, fullwidth letters, IDNA, Unicode spaces);
//! - an IBAN: two letters, then (past separators) two digits (`iban::may_start`);
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
    if b.iter().any(|&c| LOUD[usize::from(c)]) || super::iban::may_start(b) {
        return false;
    }
    // The whole value as one token (no whitespace once tabs, CR and LF are removed, as the scan
    // reads it for URL readers): read loosely, as a host a program is handed.
    let joined: std::borrow::Cow<str> = match s.contains(['\t', '\r', '\n']) {
        true => s.chars().filter(|c| !matches!(c, '\t' | '\r' | '\n')).collect::<String>().into(),
        false => s.into(),
    };
    let whole = super::words::trim_whole(&joined);
    if whole.is_empty() || whole.contains(super::words::is_space) {
        return true;
    }
    // The scan reads the authority, the part before a `/`, `?`, `#` or `\` (`localhost/x`).
    // (after the leading slashes of a scheme-relative `//host/x`, and any userinfo).
    let authority = super::words::authority(whole.trim_start_matches(['/', '\\']));
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let numeric = authority.as_bytes().first().is_some_and(u8::is_ascii_digit);
    !numeric && !super::special::grave_label(authority)
}

#[cfg(test)]
mod tests;
