//! Glob patterns, compiled once at config load.
//!
//! Two flavours, because the same `*` means different things to the people who write rules:
//! in a **path** glob `*` stays within one path segment and `**` crosses segments
//! (`/work/**/*.rs`); in a **text** glob (tool names, shell commands) `*` matches anything.
//! `?` matches one character in both. There are no character classes: nothing in a rule
//! needs them and every extra feature is a way to write a rule that means something else.

/// How `*` treats `/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    Path,
    Text,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Lit(char),
    Any,      // ?
    Star,     // * (within a segment for paths)
    StarStar, // ** (paths only: any number of segments)
    OptSlash, // the `/` after `**`, absent when `**` matched nothing
}

/// A compiled glob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    source: String,
    tokens: Vec<Token>,
    flavour: Flavour,
    /// `/dir/**` also names `/dir` itself.
    dir_itself: Option<String>,
}

impl Glob {
    pub fn new(pattern: &str, flavour: Flavour) -> Glob {
        let mut tokens = Vec::new();
        let mut chars = pattern.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '*' if chars.peek() == Some(&'*') && flavour == Flavour::Path => {
                    chars.next();
                    tokens.push(Token::StarStar);
                    // `**/` also matches zero segments: `/a/**/b` matches `/a/b`.
                    if chars.peek() == Some(&'/') {
                        chars.next();
                        tokens.push(Token::OptSlash);
                    }
                }
                '*' => {
                    // Collapse runs of `*` in text globs.
                    if tokens.last() != Some(&Token::Star) {
                        tokens.push(Token::Star);
                    }
                }
                '?' => tokens.push(Token::Any),
                '\\' => {
                    if let Some(n) = chars.next() {
                        tokens.push(Token::Lit(n));
                    }
                }
                c => tokens.push(Token::Lit(c)),
            }
        }
        let dir_itself = match flavour {
            Flavour::Path => pattern.strip_suffix("/**").filter(|d| !d.contains('*')).map(str::to_owned),
            Flavour::Text => None,
        };
        Glob { source: pattern.to_owned(), tokens, flavour, dir_itself }
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// True when the pattern has no wildcard.
    pub fn is_literal(&self) -> bool {
        self.tokens.iter().all(|t| matches!(t, Token::Lit(_)))
    }

    pub fn matches(&self, text: &str) -> bool {
        if self.dir_itself.as_deref() == Some(text) {
            return true;
        }
        let chars: Vec<char> = text.chars().collect();
        matches_at(&self.tokens, &chars, self.flavour)
    }
}

/// Backtracking matcher; patterns are short and come from config, inputs are bounded by the
/// body limit, and memoisation keeps it polynomial.
fn matches_at(tokens: &[Token], text: &[char], flavour: Flavour) -> bool {
    let mut memo = vec![vec![None::<bool>; text.len() + 1]; tokens.len() + 1];
    go(tokens, text, 0, 0, flavour, &mut memo)
}

fn go(
    tokens: &[Token],
    text: &[char],
    t: usize,
    i: usize,
    flavour: Flavour,
    memo: &mut [Vec<Option<bool>>],
) -> bool {
    if let Some(v) = memo[t][i] {
        return v;
    }
    let result = match tokens.get(t) {
        None => i == text.len(),
        Some(Token::OptSlash) => {
            // The optional `/` after `**`: consume one `/` if present, or none if the `**`
            // matched zero segments (then the previous char was `/` already).
            (text.get(i) == Some(&'/') && go(tokens, text, t + 1, i + 1, flavour, memo))
                || ((i == 0 || text.get(i - 1) == Some(&'/')) && go(tokens, text, t + 1, i, flavour, memo))
        }
        Some(Token::Lit(c)) => text.get(i) == Some(c) && go(tokens, text, t + 1, i + 1, flavour, memo),
        Some(Token::Any) => {
            text.get(i).is_some_and(|c| flavour == Flavour::Text || *c != '/')
                && go(tokens, text, t + 1, i + 1, flavour, memo)
        }
        Some(Token::Star) => {
            let mut j = i;
            loop {
                if go(tokens, text, t + 1, j, flavour, memo) {
                    break true;
                }
                match text.get(j) {
                    Some('/') if flavour == Flavour::Path => break false,
                    Some(_) => j += 1,
                    None => break false,
                }
            }
        }
        Some(Token::StarStar) => (i..=text.len()).any(|j| go(tokens, text, t + 1, j, flavour, memo)),
    };
    memo[t][i] = Some(result);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_globs_keep_star_within_a_segment() {
        let table = [
            ("/work/*", "/work/a.txt", true),
            ("/work/*", "/work/sub/a.txt", false),
            ("/work/**", "/work/sub/a.txt", true),
            ("/work/**", "/work", true),
            ("/work/**", "/workx", false),
            ("/work/**/*.rs", "/work/src/lib.rs", true),
            ("/work/**/*.rs", "/work/lib.rs", true),
            ("/work/**/*.rs", "/work/a/b/c/lib.rs", true),
            ("/work/**/*.rs", "/workx/lib.rs", false),
            ("**/.env", "/home/u/app/.env", true),
            ("**/.env", "/home/u/app/.envrc", false),
            ("/etc/**", "/etc/passwd", true),
            ("/etc/**", "/etcetera/x", false),
            ("/tmp/?.txt", "/tmp/a.txt", true),
            ("/tmp/?.txt", "/tmp//.txt", false),
        ];
        for (pat, text, want) in table {
            assert_eq!(Glob::new(pat, Flavour::Path).matches(text), want, "{pat} vs {text}");
        }
    }

    #[test]
    fn text_globs_match_anything_with_star() {
        let table = [
            ("mcp__fs__*", "mcp__fs__read_file", true),
            ("mcp__fs__*", "mcp__fsx__read", false),
            ("git push *", "git push origin main", true),
            ("git push *", "git push", false),
            ("curl *", "curl https://x/a/b", true),
            ("*", "", true),
            ("a\\*b", "a*b", true),
            ("a\\*b", "axb", false),
        ];
        for (pat, text, want) in table {
            assert_eq!(Glob::new(pat, Flavour::Text).matches(text), want, "{pat} vs {text}");
        }
        assert!(Glob::new("mcp__fs__read_file", Flavour::Text).is_literal());
        assert!(!Glob::new("mcp__fs__*", Flavour::Text).is_literal());
    }

    #[test]
    fn pathological_patterns_stay_fast() {
        let g = Glob::new(&"*a".repeat(20), Flavour::Text);
        assert!(!g.matches(&"a".repeat(19)));
    }
}
