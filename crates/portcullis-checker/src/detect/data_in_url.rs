//! Data smuggled out in URLs. An agent that has been talked into exfiltration rarely needs a
//! special tool: any fetch, link or rendered markdown image sends its URL to the attacker's
//! server. So outbound URLs are searched for what an ordinary URL does not carry:
//!
//! - encoded *text* — base64 or hex that decodes to readable text (`?d=SGVsbG8g…`). Random ids
//!   (Drive file ids, git SHAs, signatures) decode to binary noise and are left alone;
//! - long random-looking blobs in the query or fragment, far longer than ids and digests;
//! - a very long query value (a document pasted into `?q=`);
//! - a credential (any secret the secret detector found inside the URL);
//! - an encoded label in the host name (DNS exfiltration: `<payload>.attacker.example`);
//! - a markdown or HTML image whose query carries a value: rendering it is a zero-click send.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::token_shape::{decode_base64url, entropy, looks_like_base64_blob, looks_like_hex_blob};
use super::{Category, Input, Sink};

const URL_DATA: Category = Category::DataInUrl;

static URL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?-u:\b)(?:https?|ftp|wss?)://[^\s"'<>\\`]+"#).expect("url pattern compiles")
});

static IMAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"!\[[^\]\n]{0,200}\]\(\s*<?(https?://[^\s)>"]+)|<img\s[^>]{0,200}?src\s*=\s*["']?(https?://[^\s"'>]+)"#)
        .expect("image pattern compiles")
});

/// Encoded text shorter than this is too short to be worth smuggling (or to judge).
const MIN_ENCODED_TEXT: usize = 24;
/// Random blobs longer than ids, signatures and digests.
const MIN_QUERY_BLOB: usize = 64;
const MIN_QUERY_HEX: usize = 96;
const MAX_QUERY_VALUE: usize = 512;
/// An image query value this long is data, not a size or style option.
const MIN_IMAGE_QUERY_VALUE: usize = 16;

/// URLs are found in the lowered text (schemes and tags are case-insensitive) but judged as
/// given, since encodings are case-sensitive.
pub(super) fn scan(input: &Input<'_>, sink: &mut Sink) {
    let text = input.raw;
    let secrets: Vec<Range<usize>> = sink.spans_of(Category::Secret).map(|(s, _)| s.clone()).collect();
    for m in URL.find_iter(input.lower) {
        if sink.full(URL_DATA) {
            return;
        }
        if let Some((detector, reason, span)) = inspect(&text[m.range()], m.start(), &secrets) {
            sink.push(URL_DATA, detector, span, reason.to_string());
        }
    }
    for caps in IMAGE.captures_iter(input.lower) {
        let Some(found) = caps.get(1).or_else(|| caps.get(2)) else { continue };
        let url = &text[found.range()];
        let Some(query) = components(url).query else { continue };
        let long_value = params(url, query.clone())
            .any(|value| percent_decode(&url[value]).len() >= MIN_IMAGE_QUERY_VALUE);
        let span = found.start() + query.start..found.start() + query.end;
        if long_value && !sink.overlaps(URL_DATA, &span) && !sink.full(URL_DATA) {
            sink.push(URL_DATA, "markdown_image", span, "an image URL whose query carries data".to_string());
        }
    }
}

/// The first sign of smuggled data in one URL starting at `base`: detector, reason, span.
fn inspect(
    url: &str,
    base: usize,
    secrets: &[Range<usize>],
) -> Option<(&'static str, &'static str, Range<usize>)> {
    let at = |r: Range<usize>| base + r.start..base + r.end;
    if let Some(secret) = secrets.iter().find(|s| s.start >= base && s.end <= base + url.len()) {
        return Some(("secret_in_url", "a URL carrying a credential", secret.clone()));
    }
    let parts = components(url);
    if url[parts.host.clone()].split('.').any(is_dns_payload) {
        return Some((
            "host_payload",
            "a host name with an encoded label (DNS exfiltration)",
            at(parts.host),
        ));
    }
    if percent_decode(&url[parts.path.clone()]).split('/').any(encoded_text) {
        return Some(("encoded_text", "a URL path carrying encoded text", at(parts.path)));
    }
    let mut values: Vec<Range<usize>> = parts.query.map(|q| params(url, q).collect()).unwrap_or_default();
    values.extend(parts.fragment);
    for value in values {
        let decoded = percent_decode(&url[value.clone()]);
        if encoded_text(&decoded) {
            return Some(("encoded_text", "a URL parameter carrying encoded text", at(value)));
        }
        if runs(&decoded)
            .any(|run| looks_like_base64_blob(run, MIN_QUERY_BLOB) || looks_like_hex_blob(run, MIN_QUERY_HEX))
        {
            return Some(("encoded_blob", "a URL parameter carrying a long encoded blob", at(value)));
        }
        if decoded.len() >= MAX_QUERY_VALUE {
            return Some(("long_query_value", "a URL parameter carrying a long payload", at(value)));
        }
    }
    None
}

/// Byte ranges of a URL's parts (relative to the URL).
struct Components {
    host: Range<usize>,
    path: Range<usize>,
    query: Option<Range<usize>>,
    fragment: Option<Range<usize>>,
}

fn components(url: &str) -> Components {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let host_end = url[after_scheme..].find(['/', '?', '#']).map_or(url.len(), |i| after_scheme + i);
    // Credentials before `@` are not the host.
    let host_start = url[after_scheme..host_end].rfind('@').map_or(after_scheme, |i| after_scheme + i + 1);
    let fragment_start = url[host_end..].find('#').map(|i| host_end + i);
    let before_fragment = fragment_start.unwrap_or(url.len());
    let query_start = url[host_end..before_fragment].find('?').map(|i| host_end + i);
    Components {
        host: host_start..host_end,
        path: host_end..query_start.unwrap_or(before_fragment),
        query: query_start.map(|q| q + 1..before_fragment),
        fragment: fragment_start.map(|f| f + 1..url.len()),
    }
}

/// The value ranges of `key=value` pairs in a query (a bare `value` counts as a value).
fn params(url: &str, query: Range<usize>) -> impl Iterator<Item = Range<usize>> + '_ {
    let start = query.start;
    url[query].split(['&', ';']).scan(start, |offset, pair| {
        let pair_start = *offset;
        *offset += pair.len() + 1;
        let value_start = pair.find('=').map_or(0, |i| i + 1);
        Some(pair_start + value_start..pair_start + pair.len())
    })
}

/// Decode `%XX` escapes and `+`; anything malformed is kept as written.
fn percent_decode(s: &str) -> Cow<'_, str> {
    if !s.contains(['%', '+']) {
        return Cow::Borrowed(s);
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// Runs of base64/hex alphabet characters (standard and URL-safe; path segments are split on
/// `/` before they get here).
fn runs(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '_' | '-' | '=')))
        .filter(|r| !r.is_empty())
}

/// Whether some run decodes, as hex or base64, to readable text.
fn encoded_text(s: &str) -> bool {
    runs(s).filter(|run| run.len() >= MIN_ENCODED_TEXT).any(|run| {
        let run = run.trim_matches(['/', '=']);
        let decoded = if run.bytes().all(|b| b.is_ascii_hexdigit()) {
            decode_hex(run)
        } else {
            decode_base64url(&run[..run.len() - run.len() % 4])
        };
        decoded.is_some_and(|bytes| is_readable(&bytes))
    })
}

/// Mostly printable text: what an agent exfiltrates (notes, keys, e-mails) when it encodes it.
fn is_readable(bytes: &[u8]) -> bool {
    if bytes.len() < MIN_ENCODED_TEXT / 2 {
        return false;
    }
    let printable = match std::str::from_utf8(bytes) {
        Ok(text) => {
            text.chars().filter(|c| !c.is_control() || matches!(c, '\n' | '\t' | '\r')).count() * 100
                / text.chars().count().max(1)
        }
        Err(_) => {
            bytes.iter().filter(|b| (0x20..0x7f).contains(*b) || matches!(b, b'\n' | b'\t')).count() * 100
                / bytes.len()
        }
    };
    printable >= 95 && bytes.iter().filter(|b| b.is_ascii_alphanumeric()).count() * 2 >= bytes.len()
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    let s = &s[..s.len() - s.len() % 2];
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok()).collect()
}

/// A host label too long and random for a name: hex or high-entropy alphanumerics.
fn is_dns_payload(label: &str) -> bool {
    label.len() >= 32
        && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && label.bytes().any(|b| b.is_ascii_digit())
        && (label.bytes().all(|b| b.is_ascii_hexdigit()) || entropy(label) >= 4.0)
}

#[cfg(test)]
#[path = "data_in_url_tests.rs"]
mod tests;
