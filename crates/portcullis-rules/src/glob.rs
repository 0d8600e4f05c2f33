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
    /// The pattern's leading literal characters: a text that does not start with them cannot
    /// match, which most texts a rule meets are refused by without running the matcher.
    literal_head: String,
    /// What the rest of the pattern is, when the head settles the match without the matcher.
    shape: Shape,
}

/// The common patterns, matched without the backtracking matcher (and its two allocations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Literal characters only: the text is the head.
    Literal,
    /// The head, then one `*` that ends the pattern (`mcp__fs__*`): the rest of the text is
    /// anything (a path glob's: anything without a `/`).
    HeadStar,
    /// Anything else: the matcher decides.
    General,
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
        let literal_head: String = tokens
            .iter()
            .map_while(|t| match t {
                Token::Lit(c) => Some(*c),
                _ => None,
            })
            .collect();
        let head_len = literal_head.chars().count();
        let shape = match &tokens[head_len..] {
            [] => Shape::Literal,
            [Token::Star] => Shape::HeadStar,
            _ => Shape::General,
        };
        Glob { source: pattern.to_owned(), tokens, flavour, dir_itself, literal_head, shape }
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
        let Some(rest) = text.strip_prefix(self.literal_head.as_str()) else { return false };
        match (self.shape, self.flavour) {
            (Shape::Literal, _) => rest.is_empty(),
            (Shape::HeadStar, Flavour::Text) => true,
            (Shape::HeadStar, Flavour::Path) => !rest.contains('/'),
            (Shape::General, _) => {
                let chars: Vec<char> = text.chars().collect();
                matches_at(&self.tokens, &chars, self.flavour)
            }
        }
    }

    /// [`Glob::matches`] on the text `parts` spell when joined, built only when its head could
    /// match (`/…/src/x` meets `/etc/**` without being written out).
    pub fn matches_parts(&self, parts: &[&str]) -> bool {
        let mut head = self.literal_head.as_str();
        for part in parts {
            let n = head.len().min(part.len());
            if head.as_bytes()[..n] != part.as_bytes()[..n] {
                return self.dir_itself.as_deref().is_some_and(|d| spells(d, parts));
            }
            head = &head[n..];
        }
        self.matches(&parts.concat())
    }
}

/// Whether `parts`, joined, are `text`.
fn spells(text: &str, parts: &[&str]) -> bool {
    let mut rest = text;
    parts.iter().all(|p| match rest.strip_prefix(p) {
        Some(r) => {
            rest = r;
            true
        }
        None => false,
    }) && rest.is_empty()
}

/// Backtracking matcher; patterns are short and come from config, inputs are bounded by the
/// body limit, and memoisation keeps it polynomial.
fn matches_at(tokens: &[Token], text: &[char], flavour: Flavour) -> bool {
    let mut memo = Memo { width: text.len() + 1, cells: vec![None; (tokens.len() + 1) * (text.len() + 1)] };
    go(tokens, text, 0, 0, flavour, &mut memo)
}

/// What [`go`] found for each (token, position), in one allocation.
struct Memo {
    width: usize,
    cells: Vec<Option<bool>>,
}

fn go(tokens: &[Token], text: &[char], t: usize, i: usize, flavour: Flavour, memo: &mut Memo) -> bool {
    let cell = t * memo.width + i;
    if let Some(v) = memo.cells[cell] {
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
    memo.cells[cell] = Some(result);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shape_matched_without_the_matcher_matches_as_the_matcher_does() {
        let patterns = [
            "mcp__fs__*",
            "mcp__fs__read_file",
            "*",
            "",
            "a\\*",
            "a\\*b",
            "/work/*",
            "/work/**",
            "/etc/passwd",
            "/tmp/?.txt",
            "x*",
            "é*",
            "**",
            "a**",
            "mcp__*__read",
            "/a/b*",
        ];
        let texts = [
            "",
            "mcp__fs__",
            "mcp__fs__read_file",
            "mcp__fs__read/x",
            "mcp__fsx__read",
            "a*",
            "a*b",
            "a",
            "/work/",
            "/work/a.txt",
            "/work/sub/a.txt",
            "/work",
            "/etc/passwd",
            "/etc/passwdx",
            "/tmp/a.txt",
            "x",
            "xy/z",
            "é",
            "éx",
            "/a/b",
            "/a/bc",
            "/a/b/c",
            "mcp__x__read",
        ];
        let mut fast = 0;
        for flavour in [Flavour::Text, Flavour::Path] {
            for p in patterns {
                let g = Glob::new(p, flavour);
                fast += usize::from(g.shape != Shape::General);
                for t in texts {
                    let chars: Vec<char> = t.chars().collect();
                    let general =
                        g.dir_itself.as_deref() == Some(t) || matches_at(&g.tokens, &chars, flavour);
                    assert_eq!(g.matches(t), general, "{p:?} ({flavour:?}) vs {t:?}");
                }
            }
        }
        assert!(fast >= 16, "the fast shapes are exercised: {fast}");
    }

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

    proptest::proptest! {
        /// The literal head is a shortcut, never a change: a text split anywhere meets a glob
        /// as the whole text does, and as the matcher alone does.
        #[test]
        fn the_literal_head_and_split_texts_change_no_answer(
            pattern in "[/a.*?\\\\]{0,8}",
            text in "[/a.]{0,10}",
            cut in 0usize..12,
        ) {
            for flavour in [Flavour::Path, Flavour::Text] {
                let g = Glob::new(&pattern, flavour);
                let chars: Vec<char> = text.chars().collect();
                let full = g.dir_itself.as_deref() == Some(text.as_str())
                    || matches_at(&g.tokens, &chars, flavour);
                proptest::prop_assert_eq!(g.matches(&text), full);
                let (a, b) = text.split_at(cut.min(text.len()));
                proptest::prop_assert_eq!(g.matches_parts(&[a, b]), full);
                proptest::prop_assert_eq!(g.matches_parts(&["", a, "", b]), full);
            }
        }
    }

    #[test]
    fn pathological_patterns_stay_fast() {
        let g = Glob::new(&"*a".repeat(20), Flavour::Text);
        assert!(!g.matches(&"a".repeat(19)));
    }
}
