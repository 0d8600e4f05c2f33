//! Finding destinations in a call's arguments: URLs in any scheme, hosts written bare, e-mail
//! addresses and IBAN-like accounts, in every string (and key) of the JSON, at any depth.
//!
//! Bounds: one pass over each string (every byte belongs to one token, each token is read a
//! fixed number of times), no recursion (an explicit stack), and the caller stops the walk at
//! its first refusal, so work is linear in the arguments, which the body limit already bounds.

use std::net::Ipv6Addr;
use std::ops::ControlFlow;

use serde_json::Value;

use super::iban;
use super::quiet::quiet;
use super::words::{authority, is_space, trim_whole};
use crate::destination::{read_url, Host, Reading};

/// Destinations remembered per string to report each once (past this, repeats are reported
/// again: more work for the judge, never less seen).
const MAX_SEEN: usize = 16;

/// One destination found, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The JSON pointer of the string it was found in (`/to/0`; `""` for the whole arguments).
    pub pointer: String,
    pub what: What,
    /// It was read only because it is a whole string value (`{"host": "localhost"}`): a loose
    /// spelling (`127.1`, `0x7f000001`, a single label) that inside a text would be a word.
    pub loose: bool,
}

/// What kind of destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum What {
    /// A URL (text with `scheme://`), read as every kind of fetcher reads it.
    Url { text: String, reading: Reading },
    /// A host written bare (`169.254.169.254`, `[fd00:ec2::254]`, `docs.rs/x`, `localhost:3000`).
    Host(Host),
    /// An e-mail address: the host it is delivered to.
    Email(Host),
    /// An IBAN-like account (checksum valid), upper case, no spaces.
    Iban(String),
}

/// Calls `each` for every destination in `args` until it breaks.
pub fn walk<B>(args: &Value, mut each: impl FnMut(Found) -> ControlFlow<B>) -> ControlFlow<B> {
    // (value, its depth, the segment that leads to it); `path` holds the segments down to the
    // value in hand, and a pointer is written only for a destination found.
    // Values that hold nothing to read (numbers, quiet strings: [`quiet`]) are never stacked,
    // and the root is not either, so flat arguments of plain words cost no allocation.
    let mut stack: Vec<(&Value, usize, Option<Seg<'_>>)> = Vec::new();
    let mut root = Some((args, 0, None));
    let mut path: Vec<Seg<'_>> = Vec::new();
    while let Some((v, depth, seg)) = root.take().or_else(|| stack.pop()) {
        path.truncate(depth.saturating_sub(1));
        path.extend(seg);
        match v {
            Value::String(s) => text(s, &|| pointer(&path, None), &mut each)?,
            Value::Array(a) => stack.extend(
                a.iter()
                    .enumerate()
                    .rev()
                    .filter(|(_, v)| readable(v))
                    .map(|(i, v)| (v, depth + 1, Some(Seg::Index(i)))),
            ),
            Value::Object(m) => {
                for (k, v) in m.iter().rev() {
                    // Keys can carry a destination as well as values.
                    text(k, &|| pointer(&path, Some(k)), &mut each)?;
                    if readable(v) {
                        stack.push((v, depth + 1, Some(Seg::Key(k))));
                    }
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    ControlFlow::Continue(())
}

/// Whether a value may hold a destination: a container, or a string that is not [`quiet`].
fn readable(v: &Value) -> bool {
    match v {
        Value::String(s) => !quiet(s),
        Value::Array(_) | Value::Object(_) => true,
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// One step of a JSON pointer.
#[derive(Debug, Clone, Copy)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// RFC 6901: `/a/0/b`, `~` and `/` in keys escaped.
fn pointer(path: &[Seg<'_>], key: Option<&str>) -> String {
    let mut out = String::new();
    for seg in path.iter().copied().chain(key.map(Seg::Key)) {
        match seg {
            Seg::Key(k) => {
                out.push('/');
                out.push_str(&k.replace('~', "~0").replace('/', "~1"));
            }
            Seg::Index(i) => out.push_str(&format!("/{i}")),
        }
    }
    out
}

/// Every destination in one string.
pub fn text<B>(
    s: &str,
    pointer: &dyn Fn() -> String,
    each: &mut (impl FnMut(Found) -> ControlFlow<B> + ?Sized),
) -> ControlFlow<B> {
    match quiet(s) {
        true => ControlFlow::Continue(()),
        false => read(s, pointer, each),
    }
}

/// [`text`] without the pre-filter: every reading of `s`, in full.
pub(super) fn read<B>(
    s: &str,
    pointer: &dyn Fn() -> String,
    each: &mut (impl FnMut(Found) -> ControlFlow<B> + ?Sized),
) -> ControlFlow<B> {
    // A destination read twice (the whole value, then its word) is reported once.
    let mut seen: Vec<What> = Vec::new();
    let mut each = |what: What, loose: bool| {
        if seen.iter().any(|s| same(s, &what)) {
            return ControlFlow::Continue(());
        }
        if seen.len() < MAX_SEEN {
            seen.push(what.clone());
        }
        each(Found { pointer: pointer(), what, loose })
    };
    // The text as written, then as a JSON reader of it reads it (`http:\/\/…`, `\u0068ttp`), as
    // often as escapes remain (a document in a string in a document), up to a bound.
    let mut layer = std::borrow::Cow::Borrowed(s);
    for _ in 0..MAX_UNESCAPES {
        once(&layer, &mut each)?;
        match super::unescape::json(&layer) {
            Some(next) => layer = std::borrow::Cow::Owned(next),
            None => break,
        }
    }
    // WHATWG (Node's fetch, `new URL`) and Python's urlsplit remove every tab, CR and LF from a
    // URL before reading it: a whole value that is one token without them is read as that token
    // (`http://1\t69.254.169.254/`, `https://api.github.com\n.attacker.example/`: red team R10-7).
    // Only a whole value: a text's line breaks stay word breaks.
    if s.contains(['\t', '\r', '\n']) {
        let joined: String = s.chars().filter(|c| !matches!(c, '\t' | '\r' | '\n')).collect();
        let token = trim_whole(&joined);
        if !token.is_empty() && !token.contains(is_space) {
            once(token, &mut each)?;
        }
    }
    for account in iban::find(s) {
        each(What::Iban(account), false)?;
    }
    ControlFlow::Continue(())
}

/// Where a host written in program text or an assignment ends (never inside a URL, whose
/// userinfo may hold any of these: a URL is read from its scheme on, whole).
const CODE_PUNCTUATION: &[char] = &['"', '\'', '(', ')', '<', '>', '{', '}', '=', '`'];

/// How many times a string is read again with its JSON escapes undone.
const MAX_UNESCAPES: usize = 4;

/// Every URL and host in one layer of a string.
fn once<B>(s: &str, each: &mut impl FnMut(What, bool) -> ControlFlow<B>) -> ControlFlow<B> {
    let trimmed = trim_whole(s);
    let single = !trimmed.is_empty() && !trimmed.contains(is_space);
    // The whole value, as a program handed it reads it: a URL, or a host in any spelling.
    if single {
        if let Some((what, loose)) = token(trimmed, Loose::Yes) {
            each(what, loose)?;
        }
    }
    let mut read: Vec<&str> = Vec::new();
    for word in trimmed.split(is_space).filter(|w| !w.is_empty()) {
        for piece in word.split([',', ';', '|']) {
            let piece = piece.trim_start_matches(['"', '\'', '(', '<', '{', '`', '*']);
            let piece = piece.trim_end_matches(['"', '\'', ')', '>', '}', '`', '*', '.', ',', ':', '!', '?']);
            let piece = if piece.contains('[') { piece } else { piece.trim_end_matches(']') };
            // A piece read before in this string (a link repeated in a document) is read once.
            if piece.is_empty() || read.contains(&piece) {
                continue;
            }
            // Only pieces that may be destinations are remembered (a word is cheap to skip).
            if read.len() < MAX_SEEN && piece.contains(['.', ':', '@', '[']) {
                read.push(piece);
            }
            let mut any_url = false;
            for url in urls(piece) {
                any_url = true;
                each(What::Url { text: url.to_owned(), reading: read_url(url) }, false)?;
            }
            if !any_url {
                match token(piece, Loose::No) {
                    Some((what, _)) => each(what, false)?,
                    // Code and assignments: `new("127.0.0.1:6379")`, `http_proxy=10.0.0.5:3128`.
                    None if piece.contains(CODE_PUNCTUATION) => {
                        for sub in
                            piece.split(CODE_PUNCTUATION).filter(|s| !s.is_empty() && s.len() < piece.len())
                        {
                            if let Some((what, _)) = token(sub, Loose::No) {
                                each(what, false)?;
                            }
                        }
                    }
                    None => {}
                }
            }
        }
    }
    if trimmed.contains('@') {
        for host in super::mail::domains(trimmed) {
            each(What::Email(host), false)?;
        }
    }
    ControlFlow::Continue(())
}

/// One destination: URLs by where their readers connect, whatever else their text says.
fn same(a: &What, b: &What) -> bool {
    match (a, b) {
        (What::Url { reading: x, .. }, What::Url { reading: y, .. }) => x == y,
        _ => a == b,
    }
}

/// Whether loose host spellings are read (a whole value) or only unmistakable ones (a word).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loose {
    Yes,
    No,
}

/// Schemes the WHATWG URL Standard reads with a host whatever follows their colon: `http:x`,
/// `http:/x`, `http:\\x` and `HTTP:\/\/x` all connect to x in Node's `fetch`.
const SPECIAL_SCHEMES: &[&str] = &["http", "https", "ws", "wss", "ftp", "file"];

/// Each URL in a piece, from its scheme to the next one (so a URL nested in another's query is
/// read on its own, and no byte is read twice). A URL starts at a scheme (a letter, then
/// letters, digits, `+-.`) and its colon, when some reader takes what follows for an authority:
/// any scheme followed by `/` (curl takes one to three slashes), and a special scheme followed
/// by anything (the standard skips any run of `/` and `\` there, or none).
///
/// A non-special scheme (`gopher:`, `dict:`, `ldap:`) is a URL like any other: its host is read
/// (by RFC 3986, as curl reads it) and judged, so the floor refuses `gopher://127.0.0.1:6379/`
/// to a tool with outward reach; `egress:` rules name its host as they name an `https:` one.
fn urls(piece: &str) -> impl Iterator<Item = &str> {
    let bytes = piece.as_bytes();
    // Most words hold no colon: nothing to collect.
    let starts: Vec<usize> = if !piece.contains(':') {
        Vec::new()
    } else {
        piece
            .match_indices(':')
            .filter_map(|(at, _)| {
                let head = &bytes[..at];
                let n =
                    head.iter().rev().take_while(|b| b.is_ascii_alphanumeric() || b"+-.".contains(b)).count();
                let start = at - n;
                // The scheme starts with a letter (skip leading `+-.` and digits).
                let skip = head[start..].iter().take_while(|b| !b.is_ascii_alphabetic()).count();
                let start = start + skip;
                if start >= at {
                    return None;
                }
                let scheme = &piece[start..at];
                let after = bytes.get(at + 1).copied();
                let special = SPECIAL_SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme));
                let authority = match after {
                    Some(b'/') => true,
                    Some(_) => special,
                    None => false,
                };
                authority.then_some(start)
            })
            .collect()
    };
    let ends: Vec<usize> = starts.iter().skip(1).copied().chain([piece.len()]).collect();
    starts.into_iter().zip(ends).map(move |(s, e)| &piece[s..e])
}

/// What follows the two or more leading `/` or `\` of a scheme-relative reference, when what
/// follows may be an authority (not another slash, not white space, not empty).
fn scheme_relative(t: &str) -> Option<&str> {
    let lead = t.bytes().take_while(|b| matches!(b, b'/' | b'\\')).count();
    let rest = &t[lead..];
    (lead >= 2 && rest.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric() || b == b'[' || b >= 0x80))
        .then_some(rest)
}

/// Whether a token starts with a URL (its scheme at its first byte).
pub(super) fn starts_url(t: &str) -> bool {
    urls(t).next().is_some_and(|u| u.as_ptr() == t.as_ptr())
}

/// One token read as a destination (a URL, an e-mail address or a host), and whether only a
/// loose reading found it.
fn token(t: &str, loose: Loose) -> Option<(What, bool)> {
    // Only a token that starts with its scheme is one URL; `url=http://…` is text.
    if starts_url(t) {
        return Some((What::Url { text: t.to_owned(), reading: read_url(t) }, false));
    }
    // A scheme-relative reference (`//host/x`, `/\host`, `\\host`): joined to an `http(s)` base
    // (`new URL(path, base)`, `urljoin`, a redirect) it names its own host (red team R10-11).
    // Read only where the host is one the plain reading takes (a word needs a dotted name or
    // address, a whole value may be a special single label): `//usr/bin` is a path.
    let placed = |rest: &str| host(authority(rest).rsplit('@').next().unwrap_or(""), loose).is_some();
    if let Some(rest) = scheme_relative(t).filter(|r| placed(r)) {
        let url = format!("http://{rest}");
        let reading = read_url(&url);
        return (!reading.destinations().is_empty())
            .then(|| (What::Url { text: t.to_owned(), reading }, false));
    }
    if t.contains("://") {
        return None;
    }
    if let Some((local, domain)) = t.rsplit_once('@') {
        return super::mail::address(local, domain).map(|h| (What::Email(h), false));
    }
    host(authority(t), loose).map(|(h, l)| (What::Host(h), l))
}

/// `[v6]`, `[v6]:port`, a bare IPv6 address, `a.b.c.d[:port]`, `name.tld[:port]`; loose adds
/// any inet_aton spelling that is not a plain decimal number, and the special single labels.
fn host(t: &str, loose: Loose) -> Option<(Host, bool)> {
    if let Some(rest) = t.strip_prefix('[') {
        let (inner, after) = rest.split_once(']')?;
        let ok = after.is_empty() || port(after.strip_prefix(':')?);
        return ok.then(|| Host::from_bracketed(inner).ok().map(|h| (h, false)))?;
    }
    if t.matches(':').count() >= 2 {
        return t.parse::<Ipv6Addr>().ok().map(|a| (Host::V6(a), false));
    }
    let name = match t.rsplit_once(':') {
        Some((name, p)) if port(p) => name,
        Some(_) => return None,
        None => t,
    };
    let read = shape(name, loose)?;
    let dotted_quad = name.split('.').count() == 4
        && name.split('.').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let labels: Vec<&str> = name.trim_end_matches('.').split('.').collect();
    let tld_ok = labels.len() >= 2
        && labels.last().is_some_and(|l| l.len() >= 2 && l.bytes().all(|b| b.is_ascii_alphabetic()));
    let plain_number = name.bytes().all(|b| b.is_ascii_digit());
    match (&read, loose) {
        (Host::V4(_), _) if dotted_quad => Some((read, false)),
        (Host::Domain(_), _) if tld_ok => Some((read, false)),
        (Host::V4(_), Loose::Yes) if !plain_number => Some((read, true)),
        // A single label is a word unless it is one the resolver sends somewhere special.
        (Host::Domain(_), Loose::Yes)
            if super::special::of(&read).is_some_and(|s| s > super::Special::Private) =>
        {
            Some((read, true))
        }
        _ => None,
    }
}

/// The host a name may be, read only when its shape can make it one (so a word costs no IDNA):
/// a name with an alphabetic top-level label, a number (inet_aton parts start with a digit) or,
/// for a whole value, a single label (checked against the special names without IDNA when ASCII).
fn shape(name: &str, loose: Loose) -> Option<Host> {
    let last = name.trim_end_matches('.').rsplit('.').next().unwrap_or("");
    let dotted = name.trim_end_matches('.').contains('.');
    let tld = dotted && last.len() >= 2 && last.bytes().all(|b| b.is_ascii_alphabetic());
    let numeric = name.as_bytes().first().is_some_and(u8::is_ascii_digit);
    match (tld || numeric, loose, dotted) {
        (true, _, _) => Host::from_name(name).ok(),
        (false, Loose::Yes, false) if name.is_ascii() => {
            let lower = Host::Domain(name.to_ascii_lowercase());
            super::special::of(&lower).is_some_and(|s| s > super::Special::Private).then_some(lower)
        }
        (false, Loose::Yes, false) => Host::from_name(name).ok(),
        _ => None,
    }
}

fn port(p: &str) -> bool {
    !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
}
