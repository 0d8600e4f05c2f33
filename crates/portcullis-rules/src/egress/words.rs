//! How the programs that receive a string cut it: white space as Python reads it, a whole
//! value's ends as WHATWG trims them, a bare host's authority as curl and URL builders end it.
//! A leaf: the scan, its pre-filter and the mail reader all read with these.

/// White space as the programs that receive a string split and strip it: Rust's, and the C0
/// separators U+001C..U+001F, which Python's `str.strip()` and `split()` also drop (red team
/// R10-10). Every C0 control and space is trimmed from a whole value's ends, as WHATWG trims a
/// URL's.
pub(super) fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// A whole value's ends trimmed as WHATWG trims a URL's (C0 controls and space) and as
/// [`is_space`] reads white space.
pub(super) fn trim_whole(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ' || is_space(c))
}

/// The host part of a bare host written without a scheme, as the programs that take one read it:
/// curl and wget guess `http://`, and `http://{t}` builders (urllib, WHATWG `fetch`) end the host
/// at the first `/`, `?`, `#` or (WHATWG, special schemes) `\` — so `169.254.169.254#x` and
/// `localhost?x` connect where their heads do (red team R10-5).
pub(super) fn authority(t: &str) -> &str {
    t.split(['/', '?', '#', '\\']).next().unwrap_or(t)
}
