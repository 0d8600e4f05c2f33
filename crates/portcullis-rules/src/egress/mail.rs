//! Mail domains as a mail library reads an address: beyond the plain `local@domain` word the
//! scan reads ([`super::scan`]), a quoted local part, comments and spaces around the `@`.

use super::words::is_space;
use crate::destination::Host;

/// At most this many read from one string.
const MAX: usize = 16;

/// The domain of every address a mail library reads in `s` beyond the plain `local@domain`
/// word: RFC 5322 lets a quoted local part (`"bob"@…`, `"a b"@…`), comments (`bob(c)@…`,
/// `bob@(c)…`) and folding white space around the `@`, and Python's `email` package (what
/// `smtplib.send_message` takes its recipients from) delivers each to the domain after the `@`
/// (red team R10-9). Read positively from the `@`: something a local part may end with before it
/// (past spaces and comments), a domain after it (past spaces and comments). The local part is
/// not read: egress rules name domains, and the user's named mailboxes are read strictly
/// elsewhere.
pub(super) fn domains(s: &str) -> Vec<Host> {
    let mut out = Vec::new();
    for (at, _) in s.match_indices('@') {
        // A URL's userinfo (`https://user@host/`) is the URL's, read whole as one.
        let word =
            s[..at].char_indices().rev().find(|&(_, c)| is_space(c)).map_or(0, |(i, c)| i + c.len_utf8());
        if s[word..at].contains("://") {
            continue;
        }
        let before = skip_comments_back(&s[..at]);
        let local_end = before.chars().next_back().is_some_and(|c| {
            c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~\"".contains(c) || !c.is_ascii()
        });
        if !local_end {
            continue;
        }
        let after = skip_comments(&s[at + 1..]);
        let end = after.find(|c: char| !(c.is_alphanumeric() || "-.[]:".contains(c))).unwrap_or(after.len());
        let domain = after[..end].trim_end_matches(['.', ':']);
        if let Some(what) = address("x", domain) {
            if out.len() < MAX {
                out.push(what);
            }
        }
    }
    out
}

/// `s` past leading white space and `(comments)` (nested, at most 8 deep, unclosed: all of it).
fn skip_comments(mut s: &str) -> &str {
    loop {
        s = s.trim_start();
        if !s.starts_with('(') {
            return s;
        }
        let mut depth = 0usize;
        let mut end = s.len();
        for (i, c) in s.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => {}
            }
            if depth == 0 || depth > 8 {
                end = i + c.len_utf8();
                break;
            }
        }
        s = &s[end..];
    }
}

/// `s` without trailing white space and `(comments)`.
fn skip_comments_back(mut s: &str) -> &str {
    loop {
        s = s.trim_end();
        if !s.ends_with(')') {
            return s;
        }
        let mut depth = 0usize;
        let mut start = 0;
        for (i, c) in s.char_indices().rev() {
            match c {
                ')' => depth += 1,
                '(' => depth = depth.saturating_sub(1),
                _ => {}
            }
            if depth == 0 || depth > 8 {
                start = i;
                break;
            }
        }
        s = &s[..start];
    }
}

/// The host mail to `local@domain` is delivered to, when the address reads as one.
pub(super) fn address(local: &str, domain: &str) -> Option<Host> {
    // RFC 6531 lets a local part hold any UTF-8 (`josé@…`): mail to it goes to the domain all
    // the same (red team R11-12). Only naming a mailbox (src/intent) wants it ASCII.
    let local_ok = !local.is_empty()
        && local.len() <= 64
        && local
            .chars()
            .all(|c| !c.is_ascii() || c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~.".contains(c));
    if !local_ok {
        return None;
    }
    // `git@10.0.0.5:org/repo`, `user@host/path`: the host ends where a port or path begins.
    let domain = match domain.starts_with('[') {
        true => domain.split_inclusive(']').next().unwrap_or(domain),
        false => domain.split([':', '/', '?', '#']).next().unwrap_or(domain),
    };
    let host = match domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        Some(inner) => Host::from_bracketed(inner.strip_prefix("IPv6:").unwrap_or(inner))
            .or_else(|_| Host::from_name(inner))
            .ok()?,
        // IDNA maps the ideographic and fullwidth dots to `.` (`eve。example`: R11-12).
        None if domain.contains(['.', '\u{3002}', '\u{ff0e}', '\u{ff61}']) => Host::from_name(domain).ok()?,
        None => return None,
    };
    Some(host)
}
