//! Credentials by shape. Vendor tokens carry fixed prefixes and lengths (`ghp_`, `xoxb-`, `AKIA`,
//! `AIza`, `sk_live_`), so they are matched exactly; JWTs must also decode to a JSON header; a
//! PEM block must have a body. Only then come the weaker signals — an AWS secret key next to its
//! key id, a `password=`/`api_key:`/`token=` assignment — which must also *look* random (mixed
//! classes, entropy) and not be a placeholder, an identifier or a variable reference, because
//! code and configuration mention those names constantly without holding a secret.

use std::sync::LazyLock;

use regex::Regex;

use super::token_shape::{decode_base64url, entropy, Classes};
use super::{floor_boundary, Category, Haystack, Input, Sink};

const SECRET: Category = Category::Secret;

/// A fixed-shape credential: its regex (capture group 1 is the secret when present), an extra
/// check on the token and the byte after it, and a reason.
struct Shape {
    detector: &'static str,
    reason: &'static str,
    haystack: Haystack,
    regex: Regex,
    /// Judges the token as given (never lowered) and the byte after it.
    accept: fn(token: &str, next: Option<u8>) -> bool,
}

fn shape(
    detector: &'static str,
    reason: &'static str,
    pattern: &str,
    accept: fn(&str, Option<u8>) -> bool,
) -> Shape {
    shape_in(Haystack::AsGiven, detector, reason, pattern, accept)
}

fn shape_in(
    haystack: Haystack,
    detector: &'static str,
    reason: &'static str,
    pattern: &str,
    accept: fn(&str, Option<u8>) -> bool,
) -> Shape {
    Shape { detector, reason, haystack, regex: Regex::new(pattern).expect("secret pattern compiles"), accept }
}

static SHAPES: LazyLock<Vec<Shape>> = LazyLock::new(|| {
    vec![
        shape(
            "aws_access_key_id",
            "AWS access key id",
            r"(?-u:\b)((?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?-u:\b)",
            // AWS's documentation placeholder (AKIAIOSFODNN7EXAMPLE) is everywhere in docs.
            |t, _| !t.ends_with("EXAMPLE"),
        ),
        shape(
            "github_token",
            "GitHub token",
            r"(?-u:\b)((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{60,255})(?-u:\b)",
            |t, _| Classes::of(t).digit > 0,
        ),
        shape(
            "slack_token",
            "Slack token",
            r"(?-u:\b)(xox[abposre]-[A-Za-z0-9-]{10,250}|xapp-[0-9]-[A-Za-z0-9-]{10,250})",
            // Real tokens carry long numeric workspace/user ids; `xoxb-your-token` does not.
            |t, _| Classes::of(t).digit >= 6,
        ),
        shape(
            "slack_webhook",
            "Slack incoming-webhook URL",
            r"(hooks\.slack\.com/services/T[A-Z0-9]{6,12}/B[A-Z0-9]{6,12}/[A-Za-z0-9]{20,32})",
            |_, _| true,
        ),
        shape(
            "stripe_secret_key",
            "Stripe live secret key",
            r"(?-u:\b)((?:sk|rk)_live_[A-Za-z0-9]{20,250})(?-u:\b)",
            |t, _| Classes::of(t).digit > 0,
        ),
        shape(
            "anthropic_api_key",
            "Anthropic API key",
            r"(?-u:\b)(sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{80,250})",
            |_, next| !next.is_some_and(is_token_byte),
        ),
        shape(
            "openai_api_key",
            "OpenAI API key",
            r"(?-u:\b)(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,250})",
            |t, next| {
                let body = t.trim_start_matches("sk-");
                let classes = Classes::of(body);
                !t.starts_with("sk-ant-")
                    && !next.is_some_and(is_token_byte)
                    && classes.upper > 0
                    && classes.lower > 0
                    && classes.digit > 0
                    && entropy(body) >= 4.0
            },
        ),
        shape("google_api_key", "Google API key", r"(?-u:\b)(AIza[0-9A-Za-z_-]{35})", |_, next| {
            !next.is_some_and(is_token_byte)
        }),
        shape(
            "jwt",
            "JSON Web Token",
            r"(?-u:\b)(eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)",
            |t, _| is_jwt(t),
        ),
        shape(
            "url_credentials",
            "password in a URL's user-info (scheme://user:password@host)",
            r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@"'<>]{1,64}:([^\s/@"'<>]{6,128})@[A-Za-z0-9\[]"#,
            // `postgres:postgres@`, `user:password@` and `${PASS}` are examples, not secrets.
            |t, _| looks_random(t, 6, 2.0) && !is_placeholder(t),
        ),
        shape_in(
            Haystack::Lowered,
            "authorization_header",
            "bearer or basic credential in an Authorization header",
            r#"(?-u:\b)authorization\\?["']?\s*[:=]\s*\\?["']?(?:bearer|token|basic)\s+([A-Za-z0-9._~+/=-]{12,})"#,
            |t, _| looks_random(t, 12, 3.0),
        ),
        shape_in(
            Haystack::Lowered,
            "aws_secret_access_key",
            "AWS secret access key",
            r#"secret[_.-]?access[_.-]?key\\?["']?\s*(?:[:=]|=>)\s*\\?["']?([A-Za-z0-9/+]{40})"#,
            |t, next| {
                !next.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'/' || b == b'+')
                    && entropy(t) >= 4.0
            },
        ),
    ]
});

static PEM_BEGIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----").expect("pem pattern compiles")
});

/// A credential keyword, a separator and a value, on the lowered text: the tail of `password=`,
/// `api_key:`, `"token": "…"`, `DB_PASSWORD=…`, `clientSecret: …`. Group 1 is the keyword,
/// group 2 the value. The keyword comes first so it serves as the regex's literal prefilter; the
/// rest of the key (`db_`, `client`) is read backwards by [`key_start`].
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    let keyword = r"password|passwd|passphrase|pwd|pass|secret|secret[_.-]?key|api[_.-]?key|apikey|access[_.-]?key|private[_.-]?key|auth[_.-]?token|access[_.-]?token|refresh[_.-]?token|session[_.-]?token|token|client[_.-]?secret|credentials?";
    let separator = r#"\\?["']?\s*(?:[:=]|=>|:=)\s*\\?["']?"#;
    let value = r"([a-z0-9!#$%*+\-./=@^_~]{8,256})";
    Regex::new(&format!(r"({keyword}){separator}{value}")).expect("assignment pattern compiles")
});

/// The 40-character token that follows an access key id in credential files and CSV exports.
static AWS_SECRET_NEARBY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[^A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)").expect("aws pattern compiles")
});

/// How far after an AWS access key id its secret key is looked for.
const AWS_PAIR_WINDOW: usize = 256;

pub(super) fn scan(input: &Input<'_>, sink: &mut Sink) {
    let text = input.raw;
    for shape in SHAPES.iter() {
        for caps in shape.regex.captures_iter(input.get(shape.haystack)) {
            if sink.full(SECRET) {
                return;
            }
            let Some(span) = caps.get(1).or_else(|| caps.get(0)).map(|m| m.range()) else { continue };
            let next = text.as_bytes().get(span.end).copied();
            if (shape.accept)(&text[span.clone()], next) && !sink.overlaps(SECRET, &span) {
                sink.push(SECRET, shape.detector, span, format!("looks like a {}", shape.reason));
            }
        }
    }
    private_keys(text, sink);
    aws_pairs(text, sink);
    assignments(input, sink);
}

/// A PEM private key: the BEGIN line plus a body, through its END line when there is one. A bare
/// BEGIN line (code that checks for the header, documentation) is not a key.
fn private_keys(text: &str, sink: &mut Sink) {
    const MAX_BODY: usize = 64 * 1024;
    // Each BEGIN line may search 64 KiB for its END; bounding the lines bounds the work.
    const MAX_BEGIN_LINES: usize = 2 * super::MAX_FINDINGS_PER_CATEGORY;
    for m in PEM_BEGIN.find_iter(text).take(MAX_BEGIN_LINES) {
        if sink.full(SECRET) {
            return;
        }
        let rest = &text[m.end()..];
        let window = &rest[..floor_boundary(rest, MAX_BODY)];
        let (base64_chars, body_end) = match window.find("-----END ") {
            Some(end) => {
                let close = window[end + 9..].find("-----").map_or(window.len(), |i| end + 9 + i + 5);
                (count_base64(&window[..end]), close)
            }
            None => {
                let run = window
                    .bytes()
                    .position(|b| !(b.is_ascii_alphanumeric() || b"+/=\\ \t\r\n".contains(&b)))
                    .unwrap_or(window.len());
                (count_base64(&window[..run]), run)
            }
        };
        let span = m.start()..m.end() + body_end;
        if base64_chars >= 64 && !sink.overlaps(SECRET, &span) {
            sink.push(SECRET, "private_key", span, "PEM private key block".to_string());
        }
    }
}

/// An AWS secret access key written next to its access key id.
fn aws_pairs(text: &str, sink: &mut Sink) {
    let ids: Vec<usize> =
        sink.spans_of(SECRET).filter(|(_, d)| *d == "aws_access_key_id").map(|(s, _)| s.end).collect();
    for id_end in ids {
        let window_end = floor_boundary(text, id_end + AWS_PAIR_WINDOW);
        let window = &text[id_end..window_end.max(id_end)];
        for caps in AWS_SECRET_NEARBY.captures_iter(window) {
            let Some(m) = caps.get(1) else { continue };
            let span = id_end + m.start()..id_end + m.end();
            let classes = Classes::of(m.as_str());
            if classes.upper > 0
                && classes.lower > 0
                && entropy(m.as_str()) >= 4.0
                && !sink.overlaps(SECRET, &span)
            {
                sink.push(
                    SECRET,
                    "aws_secret_access_key",
                    span,
                    "looks like an AWS secret access key (next to its key id)".to_string(),
                );
                break;
            }
        }
    }
}

/// A credential-named key assigned a value that looks like a real secret.
fn assignments(input: &Input<'_>, sink: &mut Sink) {
    for caps in ASSIGNMENT.captures_iter(input.lower) {
        if sink.full(SECRET) {
            return;
        }
        let (Some(keyword), Some(value)) = (caps.get(1), caps.get(2)) else { continue };
        let Some(start) = key_start(input.raw, keyword.start()) else { continue };
        let key = &input.lower[start..keyword.end()];
        // Pagination cursors and request ids are called tokens but guard nothing.
        if ["page", "cursor", "continuation", "sync", "next", "csrf"].iter().any(|w| key.contains(w)) {
            continue;
        }
        let value_raw = &input.raw[value.range()];
        let is_password = ["pass", "pwd"].iter().any(|w| key.contains(w));
        let plausible =
            if is_password { looks_random(value_raw, 8, 2.5) } else { looks_random(value_raw, 16, 3.5) };
        if plausible && !is_placeholder(value_raw) && !sink.overlaps(SECRET, &value.range()) {
            let kind = if is_password { "password" } else { "secret or token" };
            sink.push(
                SECRET,
                "credential_assignment",
                value.range(),
                format!("a {kind} assigned in clear text to a credential-named key"),
            );
        }
    }
}

/// Where the key that ends in the keyword at `keyword_start` begins: back over `db_`, `x-api-`,
/// `aws.` segments, and over a camelCase prefix (`client` in `clientSecret`). `None` when the
/// keyword is only the tail of another word (`bypass`, `compass`).
fn key_start(raw: &str, keyword_start: usize) -> Option<usize> {
    const MAX_KEY: usize = 64;
    let bytes = raw.as_bytes();
    let is_key_byte = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-');
    let mut start = keyword_start;
    while start > 0 && keyword_start - start < MAX_KEY && is_key_byte(bytes[start - 1]) {
        start -= 1;
    }
    let glued = keyword_start > 0 && bytes[keyword_start - 1].is_ascii_alphanumeric();
    (!glued || bytes[keyword_start].is_ascii_uppercase()).then_some(start)
}

/// Long enough, entropic enough, and mixing letters with digits.
fn looks_random(token: &str, min_len: usize, min_entropy: f64) -> bool {
    let classes = Classes::of(token);
    token.len() >= min_len
        && classes.digit > 0
        && classes.lower + classes.upper > 0
        && entropy(token) >= min_entropy
}

/// Values that stand for a secret rather than being one: references, templates, fixtures and
/// dotted identifiers (`settings.SECRET_KEY`, `process.env.TOKEN`).
fn is_placeholder(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    const WORDS: [&str; 16] = [
        "example",
        "placeholder",
        "changeme",
        "change_me",
        "your",
        "xxxx",
        "redacted",
        "dummy",
        "sample",
        "test",
        "fake",
        "mock",
        "password",
        "secret",
        "token",
        "****",
    ];
    let dotted_identifier = value.contains('.')
        && value.split('.').all(|part| {
            part.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
    value.starts_with(['$', '%']) || dotted_identifier || WORDS.iter().any(|w| lower.contains(w))
}

/// Three base64url segments whose first decodes to a JSON object naming an algorithm.
fn is_jwt(token: &str) -> bool {
    const MAX_SEGMENT: usize = 16 * 1024;
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    if header.len() > MAX_SEGMENT || payload.len() < 4 || signature.len() < 16 {
        return false;
    }
    decode_base64url(header)
        .and_then(|bytes| serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(&bytes).ok())
        .is_some_and(|header| header.get("alg").is_some_and(serde_json::Value::is_string))
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn count_base64(s: &str) -> usize {
    s.bytes().filter(|b| b.is_ascii_alphanumeric() || b"+/=".contains(b)).count()
}

#[cfg(test)]
#[path = "secrets_tests.rs"]
pub(super) mod tests;
