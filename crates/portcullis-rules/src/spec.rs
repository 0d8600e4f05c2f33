//! Rule specs in the syntax agent users already write, parsed once at load.
//!
//! | spec | addresses |
//! | --- | --- |
//! | `mcp__fs__read_file`, `mcp__fs__*`, `http__api__v1/*` | tools by qualified name (text glob) |
//! | `Shell` / `Shell(git push:*)` / `Shell(npm run *)` | every shell-kind tool; its command |
//! | `Read(/work/**)`, `Write(...)`, `File(...)` | file-kind tools by access; the jailed path |
//! | `Fetch(domain:example.com)`, `Fetch(https://x/**)` | fetch-kind tools; host or URL |
//! | `mcp__sh__run(git status)` | one tool, its primary argument read by the tool's kind |
//!
//! `prefix:*` is a *token* prefix: `Shell(git push:*)` matches `git push` and
//! `git push origin main`, never `git pushx`. A specifier without `:*` is a glob over the
//! canonical command (`*` matches anything), or the exact command when it has no wildcard.

use super::destination::DomainPattern;
use super::glob::{Flavour, Glob};
use portcullis_shell::Command;

/// Claude Code's other built-in tools, addressed by their own names (`WebSearch`, `Grep(…)`);
/// `Bash`, `Read`, `Edit`, `Write` and `WebFetch` address kinds, as above.
pub const CLAUDE_CODE_TOOLS: &[&str] = &[
    "WebSearch",
    "Glob",
    "Grep",
    "MultiEdit",
    "NotebookEdit",
    "NotebookRead",
    "Task",
    "Agent",
    "TodoWrite",
    "BashOutput",
    "KillShell",
    "ExitPlanMode",
    "SlashCommand",
    "Skill",
];

/// What part of the tool surface a rule addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// Tools whose qualified name matches.
    Tool(Glob),
    Shell,
    Read,
    Write,
    File,
    Fetch,
}

/// A command pattern for shell subjects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandPattern {
    /// `git push:*` — the command's words start with these.
    Prefix(Vec<String>),
    /// A glob over the canonical command (exact when literal).
    Glob(Glob),
}

impl CommandPattern {
    pub fn matches(&self, words: &[&str], canonical: &str) -> bool {
        match self {
            CommandPattern::Prefix(prefix) => {
                prefix.len() <= words.len() && prefix.iter().zip(words).all(|(p, w)| p == w)
            }
            CommandPattern::Glob(g) => g.matches(canonical),
        }
    }

    /// [`CommandPattern::matches`] on a parsed command: a prefix compares its words in place,
    /// and only a glob needs the canonical line spelled out.
    pub fn matches_command(&self, cmd: &Command) -> bool {
        match self {
            CommandPattern::Prefix(prefix) => {
                let words = std::iter::once(&cmd.program).chain(&cmd.args);
                prefix.len() <= 1 + cmd.args.len() && prefix.iter().zip(words).all(|(p, w)| p == w)
            }
            CommandPattern::Glob(g) => g.matches(&cmd.canonical()),
        }
    }
}

/// The parenthesised part, compiled for every kind it may be read as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Specifier {
    pub raw: String,
    pub command: CommandPattern,
    pub path: Glob,
    pub text: Glob,
    /// `domain:example.com`, compiled: a host name (IDNA), `*.name` or an IP address.
    pub domain: Option<DomainPattern>,
}

/// One parsed rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSpec {
    pub source: String,
    pub subject: Subject,
    pub specifier: Option<Specifier>,
}

impl RuleSpec {
    pub fn parse(s: &str) -> Result<RuleSpec, String> {
        RuleSpec::parse_under(s, None)
    }

    /// Parses a rule whose relative path patterns (`Read(./.env)`, `Write(src/**)`, as Claude
    /// Code's settings write them) are relative to `root` (the jail's root, the project). Without
    /// a root a relative path pattern is refused: relative to what would be a guess.
    pub fn parse_under(s: &str, root: Option<&str>) -> Result<RuleSpec, String> {
        let s = s.trim();
        if s.is_empty() {
            return Err("empty rule".into());
        }
        let (head, spec) = match s.find('(') {
            Some(open) => {
                let Some(inner) = s[open + 1..].strip_suffix(')') else {
                    return Err(format!("{s:?}: a specifier must end with ')'"));
                };
                (&s[..open], Some(inner.trim()))
            }
            None => (s, None),
        };
        if head.is_empty() || head.contains(char::is_whitespace) || head.contains(')') {
            return Err(format!("{s:?}: expected Tool or Tool(specifier)"));
        }
        let subject = match head {
            "Shell" | "Bash" => Subject::Shell,
            "Read" => Subject::Read,
            "Write" | "Edit" => Subject::Write,
            "File" => Subject::File,
            "Fetch" | "WebFetch" => Subject::Fetch,
            name if name.starts_with("mcp__") || name.starts_with("http__") || CLAUDE_CODE_TOOLS.contains(&name) => {
                Subject::Tool(Glob::new(name, Flavour::Text))
            }
            other => {
                return Err(format!(
                    "{s:?}: unknown tool {other:?} (use Shell, Read, Write, File, Fetch, or a qualified name like mcp__fs__read_file)"
                ))
            }
        };
        let specifier = match spec {
            None => None,
            Some("") => {
                return Err(format!("{s:?}: empty specifier; write the bare tool name for a tool-wide rule"))
            }
            Some(raw) => Some(Specifier::compile(raw, &subject, root).map_err(|e| format!("{s:?}: {e}"))?),
        };
        Ok(RuleSpec { source: s.to_owned(), subject, specifier })
    }
}

impl Specifier {
    fn compile(raw: &str, subject: &Subject, root: Option<&str>) -> Result<Specifier, String> {
        let command = match raw.strip_suffix(":*") {
            Some(prefix) => {
                let mut words: Vec<String> = prefix.split_whitespace().map(str::to_owned).collect();
                // Commands are matched by effect: `git send-pack` is canonically `git push`.
                if let [git, sub, ..] = words.as_mut_slice() {
                    if let Some(effect) =
                        (git == "git").then(|| portcullis_shell::grammar::git_porcelain(sub)).flatten()
                    {
                        *sub = effect.to_owned();
                    }
                }
                if words.is_empty() {
                    return Err("prefix is empty".into());
                }
                CommandPattern::Prefix(words)
            }
            None => CommandPattern::Glob(Glob::new(
                &raw.split_whitespace().collect::<Vec<_>>().join(" "),
                Flavour::Text,
            )),
        };
        if matches!(subject, Subject::Read | Subject::Write | Subject::File) && raw.starts_with('~') {
            return Err(
                "paths are absolute: '~' is not expanded (the jail refuses home-relative paths)".into()
            );
        }
        let anchored;
        let path = if matches!(subject, Subject::Read | Subject::Write | Subject::File)
            && !raw.starts_with('/')
            && !raw.starts_with("**")
        {
            let Some(root) = root else {
                return Err(
                    "a relative path pattern needs jail.root, the directory it is relative to (or start it with '/' or '**/')"
                        .into(),
                );
            };
            let rel = raw.trim_start_matches("./");
            if rel.split('/').any(|seg| seg == "..") {
                return Err("a relative path pattern may not climb out of jail.root with '..'".into());
            }
            anchored = format!("{}/{rel}", root.trim_end_matches('/'));
            anchored.as_str()
        } else {
            raw
        };
        // A path pattern ending in `/` names the directory's tree (`Write(/out/)` is
        // `Write(/out/**)`, as gitignore reads it): paths never end in `/` once normalised, so
        // read literally it would match nothing, and a deny written that way would deny nothing.
        let tree;
        let path = if matches!(subject, Subject::Read | Subject::Write | Subject::File) && path.ends_with('/')
        {
            tree = format!("{path}**");
            tree.as_str()
        } else {
            path
        };
        // A fetch rule's `domain:` must compile; for a tool rule it is read only when the tool
        // is a fetch kind, so text that is no host stays a glob there (which no URL matches, as before).
        let domain = match (raw.strip_prefix("domain:"), subject) {
            (None, _) => None,
            (Some(d), Subject::Fetch) => Some(
                DomainPattern::parse(d)
                    .map_err(|e| format!("domain:NAME takes a host name or IP address: {e}"))?,
            ),
            (Some(d), _) => DomainPattern::parse(d).ok(),
        };
        Ok(Specifier {
            raw: raw.to_owned(),
            command,
            path: Glob::new(path, Flavour::Path),
            text: Glob::new(raw, Flavour::Text),
            domain,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_rule_forms_users_write() {
        let ok = [
            "Shell",
            "Shell(git push:*)",
            "Bash(npm run test:*)",
            "Shell(git status)",
            "Read(/work/**)",
            "Write(/work/src/**)",
            "File(**/.env)",
            "Fetch(domain:example.com)",
            "mcp__fs__read_file",
            "mcp__fs__*",
            "http__api__v1/*",
            "mcp__sh__run(git status:*)",
            "WebSearch",
            "Grep(*secret*)",
        ];
        for s in ok {
            RuleSpec::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
        let bad = [
            "",
            "Shell(",
            "Shell()",
            "Frobnicate",
            "Read(work/**)",
            "Read(~/x)",
            "Fetch(domain:)",
            "Shell(:*)",
            "two words",
        ];
        for s in bad {
            assert!(RuleSpec::parse(s).is_err(), "{s} should be refused");
        }
    }

    #[test]
    fn a_path_pattern_ending_in_a_slash_is_the_directorys_tree() {
        for rule in ["Write(/srv/out/)", "Read(/srv/out/)", "File(/srv/out/)"] {
            let spec = RuleSpec::parse(rule).unwrap_or_else(|e| panic!("{rule}: {e}"));
            let s = spec.specifier.as_ref().unwrap_or_else(|| panic!("{rule}"));
            assert!(s.path.matches("/srv/out/a.txt"), "{rule}");
            assert!(s.path.matches("/srv/out/deep/b.txt"), "{rule}");
            assert!(!s.path.matches("/srv/outside/a.txt"), "{rule}");
        }
    }

    #[test]
    fn prefix_rules_match_whole_words_only() {
        let r = RuleSpec::parse("Shell(git push:*)").unwrap();
        let spec = r.specifier.unwrap();
        let m = |c: &str| spec.command.matches(&c.split(' ').collect::<Vec<_>>(), c);
        assert!(m("git push"));
        assert!(m("git push origin main"));
        assert!(!m("git pushx"));
        assert!(!m("git status"));
        let exact = RuleSpec::parse("Shell(git status)").unwrap().specifier.unwrap();
        assert!(exact.command.matches(&["git", "status"], "git status"));
        assert!(!exact.command.matches(&["git", "status", "-s"], "git status -s"));
    }

    #[test]
    fn a_parsed_command_matches_as_its_words_and_canonical_line_do() {
        let patterns = ["Shell(git push:*)", "Shell(git status)", "Shell(git *)", "Shell(ls)", "Shell(rm:*)"];
        let lines = [
            "git push",
            "git push -f origin",
            "git pushx",
            "git status",
            "git status -s",
            "ls",
            "rm -rf /",
            "> f",
        ];
        for p in patterns {
            let spec = RuleSpec::parse(p).unwrap().specifier.unwrap();
            for line in lines {
                for cmd in portcullis_shell::analyze(line).commands {
                    let canonical = cmd.canonical();
                    let mut words = vec![cmd.program.as_str()];
                    words.extend(cmd.args.iter().map(String::as_str));
                    let expected = spec.command.matches(&words, &canonical);
                    assert_eq!(spec.command.matches_command(&cmd), expected, "{p} on {line:?}");
                }
            }
        }
    }

    #[test]
    fn domains_match_their_subdomains_only() {
        use crate::destination::{read_url, HostMatch};
        let s = RuleSpec::parse("Fetch(domain:example.com)").unwrap().specifier.unwrap();
        let m = |url: &str| s.domain.as_ref().unwrap().matches(&read_url(url));
        assert_eq!(m("https://example.com/"), HostMatch::Yes);
        assert_eq!(m("https://API.example.com./"), HostMatch::Yes);
        assert_eq!(m("https://badexample.com/"), HostMatch::No);
        assert_eq!(m("https://example.com.evil.io/"), HostMatch::No);
    }
}
