//! How random a token looks. Secrets and smuggled payloads are told apart from identifiers, words
//! and slugs by their shape — mixed character classes and high per-character entropy — because
//! their content is, by design, unpredictable. Only shapes are measured here; no token is kept.

/// The character classes present in a token.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Classes {
    pub lower: usize,
    pub upper: usize,
    pub digit: usize,
    pub other: usize,
}

impl Classes {
    pub(super) fn of(token: &str) -> Self {
        let mut classes = Self::default();
        for b in token.bytes() {
            match b {
                b'a'..=b'z' => classes.lower += 1,
                b'A'..=b'Z' => classes.upper += 1,
                b'0'..=b'9' => classes.digit += 1,
                _ => classes.other += 1,
            }
        }
        classes
    }
}

/// Shannon entropy of the token's bytes, in bits per byte.
pub(super) fn entropy(token: &str) -> f64 {
    let bytes = token.as_bytes();
    if bytes.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in bytes {
        counts[usize::from(b)] += 1;
    }
    let len = bytes.len() as f64;
    counts
        .iter()
        .filter(|&&n| n > 0)
        .map(|&n| {
            let p = f64::from(n) / len;
            -p * p.log2()
        })
        .sum()
}

/// Whether a token of base64-ish characters looks like encoded random or binary data rather than
/// an identifier: long, high-entropy, and mixing upper case, lower case and digits the way base64
/// does (camelCase identifiers have few capitals; slugs have none).
pub(super) fn looks_like_base64_blob(token: &str, min_len: usize) -> bool {
    if token.len() < min_len {
        return false;
    }
    let classes = Classes::of(token);
    let len = token.len();
    classes.upper * 6 >= len && classes.lower * 6 >= len && classes.digit > 0 && entropy(token) >= 4.0
}

/// Whether a token is a long run of hexadecimal digits. `min_len` is chosen by the caller above
/// the digest lengths that are everywhere in benign URLs (40 for git, 64 for SHA-256).
pub(super) fn looks_like_hex_blob(token: &str, min_len: usize) -> bool {
    token.len() >= min_len
        && token.bytes().all(|b| b.is_ascii_hexdigit())
        && Classes::of(token).digit > 0
        && entropy(token) >= 3.0
}

/// Decode unpadded or padded base64url (RFC 4648 §5), as JWT segments use. `None` on any byte
/// outside the alphabet or an impossible length.
pub(super) fn decode_base64url(segment: &str) -> Option<Vec<u8>> {
    let trimmed = segment.trim_end_matches('=');
    if trimmed.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(trimmed.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0u32;
    for b in trimmed.bytes() {
        let value = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_separates_random_tokens_from_words() {
        assert_eq!(entropy(""), 0.0);
        assert_eq!(entropy("aaaaaaaa"), 0.0);
        assert!(entropy("getUserAccountSettings") < 4.0);
        assert!(entropy("q8Zr2LmX0vKp7TnWc4YbHs9J") > 4.0);
    }

    #[test]
    fn base64_blobs_are_told_from_identifiers_and_slugs() {
        let table = [
            ("VGhpcyBpcyBhIHNlY3JldCBtZXNzYWdlIGZvciB5b3U6IGh1bnRlcjI=", true),
            ("q8Zr2LmX0vKp7TnWc4YbHs9JdE1fGh3iKl5mNo6p", true),
            ("getUserAccountSettingsForOrganization", false),
            ("this-is-a-long-slug-for-a-blog-post-about-rust", false),
            ("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", false),
            ("short1Ab", false),
        ];
        for (token, expected) in table {
            assert_eq!(looks_like_base64_blob(token, 32), expected, "{token}");
        }
    }

    #[test]
    fn hex_blobs_need_length_beyond_common_digests() {
        let sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        assert!(!looks_like_hex_blob(sha256, 72));
        assert!(looks_like_hex_blob(&sha256.repeat(2), 72));
        assert!(!looks_like_hex_blob(&"f".repeat(80), 72));
    }

    #[test]
    fn base64url_decodes_jwt_headers_and_rejects_junk() {
        assert_eq!(decode_base64url("eyJhbGciOiJIUzI1NiJ9").as_deref(), Some(&b"{\"alg\":\"HS256\"}"[..]));
        assert_eq!(decode_base64url("").as_deref(), Some(&b""[..]));
        assert_eq!(decode_base64url("a"), None);
        assert_eq!(decode_base64url("ab*d"), None);
    }
}
