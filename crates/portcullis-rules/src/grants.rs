//! Structured permissions, as the policy protocol names them: `category:action:scope` grants,
//! compiled to the rule specs of [`crate::spec`], so one engine decides both.
//!
//! | grant | rule | `*` scope |
//! | --- | --- | --- |
//! | `fs:read:PATH` | `Read(PATH)` (every file kind that reads or searches) | `Read` |
//! | `fs:write:PATH` | `Write(PATH)` | `Write` |
//! | `shell:execute:PROGRAM [WORD…]` | `Shell(PROGRAM [WORD…]:*)` (a token prefix) | `Shell` |
//! | `net:connect:HOST` | `Fetch(domain:HOST)` (`*.HOST`: subdomains only; an IP address) | `Fetch` |
//! | `mcp:connect:UPSTREAM` | `mcp__UPSTREAM__*` (every tool and resource of that server) | `mcp__*` |
//!
//! A scope written `!SCOPE` is an exclusion: listed under `allow:` it compiles to a deny (deny
//! dominates, so it holds whatever else allows). Under `ask:` or `deny:` an exclusion is refused:
//! what it would mean there is a guess. The grammar is positive: an unknown category or action, an
//! empty scope, whitespace around a scope, control characters, a shell word outside
//! `[A-Za-z0-9._+@%,=/-]` (a program is a name, never a path or a pattern), an upstream name
//! outside `[A-Za-z0-9_-]` without `__`, or a host [`crate::destination::DomainPattern`] does not
//! read is an error naming the grant — never ignored, never widened.

use std::fmt;

use crate::spec::RuleSpec;
use crate::Effect;

/// What a grant is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    Fs,
    Shell,
    Net,
    Mcp,
}

/// A category and an action it knows: only the pairs the protocol names exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    FsRead,
    FsWrite,
    ShellExecute,
    NetConnect,
    McpConnect,
}

/// Whether a scope grants or excludes (`!`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Polarity {
    Grant,
    Exclude,
}

/// One compiled grant: the rule it means, and whether it was an exclusion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub permission: Permission,
    pub polarity: Polarity,
    /// The rule spec, its `source` the grant as written (what a decision names).
    pub spec: RuleSpec,
}

/// Why a grant was refused; its `Display` names the grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantError {
    /// Not three `:`-separated parts.
    Shape {
        grant: String,
    },
    UnknownCategory {
        grant: String,
        category: String,
    },
    UnknownAction {
        grant: String,
        category: Category,
        action: String,
    },
    /// The scope is not one this category reads.
    Scope {
        grant: String,
        why: String,
    },
    /// An exclusion listed under `ask:` or `deny:`.
    ExclusionOutsideAllow {
        grant: String,
        listed: Effect,
    },
}

impl fmt::Display for GrantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GrantError::Shape { grant } => {
                write!(f, "grant {grant:?}: expected category:action:scope (fs:read:/srv/**)")
            }
            GrantError::UnknownCategory { grant, category } => {
                write!(f, "grant {grant:?}: unknown category {category:?} (fs, shell, net, mcp)")
            }
            GrantError::UnknownAction { grant, category, action } => {
                let known = match category {
                    Category::Fs => "read, write",
                    Category::Shell => "execute",
                    Category::Net | Category::Mcp => "connect",
                };
                write!(f, "grant {grant:?}: unknown action {action:?} for this category ({known})")
            }
            GrantError::Scope { grant, why } => write!(f, "grant {grant:?}: {why}"),
            GrantError::ExclusionOutsideAllow { grant, listed } => write!(
                f,
                "grant {grant:?}: a '!' exclusion belongs under allow: (it compiles to a deny), not under {}:",
                listed.as_str()
            ),
        }
    }
}

impl std::error::Error for GrantError {}

/// Whether `text` is written as a grant rather than a rule: a `:` before any `(`. No rule head
/// holds one (`Shell(git push:*)` has its colon inside the parentheses).
pub fn is_grant(text: &str) -> bool {
    let text = text.trim();
    let head = text.split_once('(').map_or(text, |(head, _)| head);
    head.contains(':')
}

impl Grant {
    /// Parses `text`; relative `fs` paths are relative to `root` (the jail's), as in rules.
    pub fn parse(text: &str, root: Option<&str>) -> Result<Grant, GrantError> {
        let grant = text.to_owned();
        let mut parts = text.splitn(3, ':');
        let (Some(category), Some(action), Some(scope)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(GrantError::Shape { grant });
        };
        let category = match category {
            "fs" => Category::Fs,
            "shell" => Category::Shell,
            "net" => Category::Net,
            "mcp" => Category::Mcp,
            other => return Err(GrantError::UnknownCategory { category: other.into(), grant }),
        };
        let permission = match (category, action) {
            (Category::Fs, "read") => Permission::FsRead,
            (Category::Fs, "write") => Permission::FsWrite,
            (Category::Shell, "execute") => Permission::ShellExecute,
            (Category::Net, "connect") => Permission::NetConnect,
            (Category::Mcp, "connect") => Permission::McpConnect,
            (_, other) => return Err(GrantError::UnknownAction { action: other.into(), category, grant }),
        };
        let bad = |why: String| GrantError::Scope { grant: text.to_owned(), why };
        let (polarity, scope) = match scope.strip_prefix('!') {
            Some(rest) => (Polarity::Exclude, rest),
            None => (Polarity::Grant, scope),
        };
        if scope.is_empty() {
            return Err(bad("the scope is empty (write * for everything in the category)".into()));
        }
        if scope.trim() != scope || scope.chars().any(char::is_control) {
            return Err(bad("a scope has no surrounding whitespace or control characters".into()));
        }
        let rule = rule_for(permission, scope).map_err(bad)?;
        let mut spec = RuleSpec::parse_under(&rule, root).map_err(|e| bad(format!("as {rule}: {e}")))?;
        spec.source = grant;
        Ok(Grant { permission, polarity, spec })
    }

    /// Parses `text` listed under `listed` (allow, ask or deny) into the rule and the effect it
    /// is decided with: an exclusion under `allow:` is a deny.
    pub fn compile(text: &str, listed: Effect, root: Option<&str>) -> Result<(RuleSpec, Effect), GrantError> {
        let g = Grant::parse(text.trim(), root)?;
        match (g.polarity, listed) {
            (Polarity::Grant, effect) => Ok((g.spec, effect)),
            (Polarity::Exclude, Effect::Allow) => Ok((g.spec, Effect::Deny)),
            (Polarity::Exclude, listed) => {
                Err(GrantError::ExclusionOutsideAllow { grant: text.trim().into(), listed })
            }
        }
    }
}

/// The rule text a grant's scope means (see the module table).
fn rule_for(permission: Permission, scope: &str) -> Result<String, String> {
    let everything = scope == "*";
    Ok(match permission {
        Permission::FsRead if everything => "Read".into(),
        Permission::FsWrite if everything => "Write".into(),
        Permission::FsRead => format!("Read({scope})"),
        Permission::FsWrite => format!("Write({scope})"),
        Permission::ShellExecute if everything => "Shell".into(),
        Permission::ShellExecute => format!("Shell({}:*)", shell_words(scope)?),
        Permission::NetConnect if everything => "Fetch".into(),
        Permission::NetConnect => {
            crate::destination::DomainPattern::parse(scope).map_err(|e| format!("net takes a host: {e}"))?;
            format!("Fetch(domain:{scope})")
        }
        Permission::McpConnect if everything => "mcp__*".into(),
        Permission::McpConnect => format!("mcp__{}__*", upstream(scope)?),
    })
}

/// A program and the words after it, single-spaced, each from the word alphabet.
fn shell_words(scope: &str) -> Result<&str, String> {
    let word_ok =
        |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "._+@%,=/-".contains(c));
    if !scope.split(' ').all(word_ok) {
        return Err(format!(
            "shell takes a program and words, single-spaced, of letters, digits and ._+@%,=/- ({scope:?} is not)"
        ));
    }
    let program = scope.split(' ').next().unwrap_or_default();
    if program.contains('/') || program.starts_with('-') {
        return Err(format!("{program:?}: a program is named, not given as a path or an option"));
    }
    Ok(scope)
}

/// An upstream name as `upstreams:` accepts it.
fn upstream(scope: &str) -> Result<&str, String> {
    match !scope.contains("__") && scope.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        true => Ok(scope),
        false => Err(format!("{scope:?} is not an upstream name (letters, digits, '-' and single '_')")),
    }
}
