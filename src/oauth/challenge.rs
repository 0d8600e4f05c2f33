//! `WWW-Authenticate` challenges (RFC 9110 §11.6.1, RFC 6750 §3): parsed into schemes and
//! parameters so that one parameter can be replaced and every other kept as sent.
//!
//! ```text
//! challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
//! auth-param = token BWS "=" BWS ( token / quoted-string )
//! ```
//!
//! A header that does not parse is not repaired: the caller replaces it whole.

/// One challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    pub scheme: String,
    pub params: Vec<(String, String)>,
}

/// The parameter RFC 9728 §5.1 adds: where the resource's metadata is.
pub const RESOURCE_METADATA: &str = "resource_metadata";

impl Challenge {
    pub fn is_bearer(&self) -> bool {
        self.scheme.eq_ignore_ascii_case("bearer")
    }

    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// Sets `name` to `value`, in place if present (first occurrence; later duplicates dropped),
    /// else at the end.
    pub fn set(&mut self, name: &str, value: &str) {
        let mut seen = false;
        self.params.retain_mut(|(n, v)| {
            if !n.eq_ignore_ascii_case(name) {
                return true;
            }
            if seen {
                return false;
            }
            seen = true;
            *v = value.to_owned();
            true
        });
        if !seen {
            self.params.push((name.to_owned(), value.to_owned()));
        }
    }

    pub fn remove(&mut self, name: &str) {
        self.params.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }
}

impl std::fmt::Display for Challenge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.scheme)?;
        for (i, (n, v)) in self.params.iter().enumerate() {
            f.write_str(if i == 0 { " " } else { ", " })?;
            write!(f, "{n}=\"")?;
            for c in v.chars() {
                if c == '"' || c == '\\' {
                    f.write_str("\\")?;
                }
                write!(f, "{c}")?;
            }
            f.write_str("\"")?;
        }
        Ok(())
    }
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Parses one header value into its challenges; `None` if any part is malformed (including a
/// token68 credential form, which carries no parameters to rewrite).
pub fn parse(header: &str) -> Option<Vec<Challenge>> {
    let mut p = Parser { s: header.as_bytes(), i: 0 };
    let mut out: Vec<Challenge> = Vec::new();
    loop {
        p.skip_ws_and_commas();
        if p.done() {
            break;
        }
        let scheme = p.token()?;
        let mut challenge = Challenge { scheme, params: Vec::new() };
        // Parameters follow until the next `token SP` that is not `token =` (a new challenge).
        loop {
            p.skip_ws_and_commas();
            if p.done() {
                break;
            }
            let name_start = p.i;
            let name = p.token()?;
            p.skip_ws();
            if p.peek() != Some(b'=') {
                // A new challenge's scheme: rewind to it.
                p.i = name_start;
                break;
            }
            p.i += 1;
            p.skip_ws();
            let value = if p.peek() == Some(b'"') { p.quoted()? } else { p.token()? };
            challenge.params.push((name, value));
            p.skip_ws();
            match p.peek() {
                None | Some(b',') => {}
                _ => return None,
            }
        }
        out.push(challenge);
    }
    (!out.is_empty()).then_some(out)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn done(&self) -> bool {
        self.i >= self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn skip_ws_and_commas(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.i += 1;
        }
    }

    fn token(&mut self) -> Option<String> {
        let start = self.i;
        while self.peek().is_some_and(|b| is_tchar(b as char)) {
            self.i += 1;
        }
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    fn quoted(&mut self) -> Option<String> {
        self.i += 1;
        let mut out = Vec::new();
        loop {
            match self.peek()? {
                b'"' => {
                    self.i += 1;
                    return String::from_utf8(out).ok();
                }
                b'\\' => {
                    self.i += 1;
                    out.push(self.peek()?);
                    self.i += 1;
                }
                b if b < 0x20 && b != b'\t' => return None,
                b => {
                    out.push(b);
                    self.i += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_parse_into_schemes_and_parameters() {
        let c = parse(r#"Bearer error="invalid_token", error_description="Missing \"Authorization\"", resource_metadata="http://localhost:1/.well-known/oauth-protected-resource/mcp""#).unwrap();
        assert_eq!(c.len(), 1);
        assert!(c[0].is_bearer());
        assert_eq!(c[0].param("error"), Some("invalid_token"));
        assert_eq!(c[0].param("error_description"), Some("Missing \"Authorization\""));
        assert_eq!(
            c[0].param("RESOURCE_METADATA"),
            Some("http://localhost:1/.well-known/oauth-protected-resource/mcp")
        );

        let c = parse(r#"Basic realm="x", Bearer scope="a b", error=insufficient_scope"#).unwrap();
        assert_eq!(c.iter().map(|c| c.scheme.as_str()).collect::<Vec<_>>(), ["Basic", "Bearer"]);
        assert_eq!(c[1].param("error"), Some("insufficient_scope"));
        assert_eq!(c[1].param("scope"), Some("a b"));

        let c = parse("Bearer").unwrap();
        assert!(c[0].params.is_empty());
    }

    #[test]
    fn malformed_headers_do_not_parse() {
        for h in
            ["", "Bearer error=\"unterminated", "Bearer a=b c", "Bearer abc==", "Bearer x=\"\u{1}\"", "=x"]
        {
            assert_eq!(parse(h), None, "{h:?}");
        }
    }

    #[test]
    fn setting_a_parameter_keeps_the_others_and_quotes_values() {
        let mut c =
            parse(r#"Bearer scope="mcp:basic", resource_metadata="http://up/x", error="insufficient_scope""#)
                .unwrap()
                .remove(0);
        c.set(RESOURCE_METADATA, "http://px/.well-known/oauth-protected-resource/mcp/fs");
        assert_eq!(
            c.to_string(),
            r#"Bearer scope="mcp:basic", resource_metadata="http://px/.well-known/oauth-protected-resource/mcp/fs", error="insufficient_scope""#
        );
        let mut c = parse("Bearer").unwrap().remove(0);
        c.set("resource_metadata", "a\"b");
        assert_eq!(c.to_string(), r#"Bearer resource_metadata="a\"b""#);
        assert_eq!(parse(&c.to_string()).unwrap()[0], c, "what is written parses back");
    }
}
