//! Secrets by default: one policy, for every file reader (the shell proof, file-kind tools,
//! Claude Code's Read/Glob/Grep), on whether reading a placed path may reveal a secret.
//!
//! The rule, in order (the first that holds names the secret):
//!
//! 1. **Nowhere known** ([`Place::Anywhere`]) may be a secret: it is never proven.
//! 2. **Home stores.** Below any home directory (`~`, `/root`, `/var/root`, `/home/<u>`,
//!    `/Users/<u>`, a snap's per-app home, the known `$HOME`), a path whose first component
//!    starts with `.` (or is macOS's `Library`) is a secret — `~/.ssh`, `~/.config/…`,
//!    `~/.kaggle/kaggle.json`, `~/.claude.json`, `~/.bashrc` — unless [`home::ALLOWED`] names
//!    it (dependency sources an agent reads to learn an API, and a project's own metadata). A
//!    path below the unplaced start directory is judged the same way: that directory may be home.
//! 3. **Named stores, anywhere** ([`names`]): `.git/config`, `.env*` (not the committed
//!    templates `.env.example`…), `.envrc`, `.netrc`, `.npmrc`, `.pypirc`, private keys
//!    (`*.pem`, `*.key`, `id_*` but not `id_*.pub`, …), store directories (`.ssh`, `.aws`, …),
//!    `/etc/shadow`, `/etc/sudoers*`, ssh host keys, `/run/secrets`, every `/proc` and `/dev`
//!    file but a short list of harmless ones. This part is a list and cannot be complete; rules
//!    1, 2 and 4 are what make the policy positive.
//! 4. **A recursive read of a directory reads every store below it** (the `tree` module): a tree read is
//!    proven only for a named, non-hidden directory below the working directory (`src`,
//!    `./tests`, or an absolute one strictly below a known working directory), or below the
//!    system's library and documentation trees and the allowed home caches. The working
//!    directory itself (it holds `.env` and `.git/config`), home, `/` and any other absolute
//!    directory (it may be another checkout) are refused.
//! 5. **Globs** are judged by what they could expand to (the `tree` module): the directory they walk (its
//!    fixed prefix), whether they could reach a home store, and whether their last component
//!    could match a secret's name (`*.pem`, `.e*`, `*`).

mod glob;
pub mod home;
pub mod names;
mod tree;

#[cfg(test)]
mod tests;

use crate::place::Place;

/// How a path is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// The file (or a directory's listing).
    File,
    /// Everything below the directory, hidden files included.
    Tree,
}

impl Reading {
    /// How an effect's access reads its path, if it reads it: a file read for `Read`, `Execute`
    /// (an error message prints a sourced file's lines) and `NamesFiles`; a tree read for
    /// `ReadTree` and for `Any` (a command not understood may walk the directory).
    pub fn of(access: crate::effects::Access) -> Option<Reading> {
        use crate::effects::Access;
        match access {
            Access::Read | Access::Execute | Access::NamesFiles => Some(Reading::File),
            Access::ReadTree | Access::Any | Access::Repository => Some(Reading::Tree),
            Access::Write => None,
        }
    }
}

/// What glob characters in a path mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Globbing {
    /// `*`, `?` and `[` are literal characters of the name.
    Literal,
    /// Bash's pathname expansion: a leading `.` is matched only by a literal `.`; `**` is `*`.
    Shell,
    /// A tool's glob (ripgrep, Claude Code's Glob): `*` matches a leading `.` too, and `**`
    /// matches any number of directories, hidden ones included.
    Tool,
}

/// What the policy knows about where it judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context<'a> {
    /// The executing user's home directory, when known (absolute).
    pub home: Option<&'a str>,
    /// The working directory, when known (absolute, normalised): a tree read strictly below it
    /// can be proven.
    pub cwd: Option<&'a str>,
    pub globbing: Globbing,
}

impl Default for Context<'_> {
    fn default() -> Self {
        Context { home: None, cwd: None, globbing: Globbing::Literal }
    }
}

/// Why a read may reveal a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Secret {
    /// The path is not placed: it may be anywhere, a secret included.
    Unplaced,
    /// A hidden file or directory at the top of a home directory.
    HomeStore { path: String },
    /// A hidden file or directory at the top of the unplaced start directory, which may be home.
    MaybeHomeStore { path: String },
    /// A store named by [`names`] (`.git/config`, `.env`, a private key, `/etc/shadow`).
    Named { path: String, store: names::Store },
    /// A recursive read of a directory that holds (or may hold) stores.
    Tree { dir: String, why: tree::Broad },
    /// A glob that could expand to a secret.
    Glob { pattern: String, example: String },
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Secret::Unplaced => f.write_str("a path that may be anywhere, a secret store included"),
            Secret::HomeStore { path } => write!(f, "{path}, a hidden file of a home directory"),
            Secret::MaybeHomeStore { path } => {
                write!(f, "{path}, a hidden file of the start directory, which may be a home directory")
            }
            Secret::Named { path, store } => write!(f, "{path}, {store}"),
            Secret::Tree { dir, why } => write!(f, "everything below {dir}, {why}"),
            Secret::Glob { pattern, example } => write!(f, "{pattern}, which could expand to {example}"),
        }
    }
}

/// Whether reading `place` as `reading` may reveal a secret. `Ok` is a proof that it does not.
///
/// ```
/// use portcullis_shell::place::{place, Base};
/// use portcullis_shell::secrets::{judge, Context, Reading};
///
/// let at = |w: &str| place(w, &Base::start(), None);
/// let cx = Context::default();
/// assert!(judge(&at("~/.kaggle/kaggle.json"), Reading::File, &cx).is_err());
/// assert!(judge(&at(".git/config"), Reading::File, &cx).is_err());
/// assert!(judge(&at("src/main.rs"), Reading::File, &cx).is_ok());
/// assert!(judge(&at("src"), Reading::Tree, &cx).is_ok());
/// assert!(judge(&at("."), Reading::Tree, &cx).is_err());
/// ```
pub fn judge(place: &Place, reading: Reading, cx: &Context<'_>) -> Result<(), Secret> {
    if cx.globbing == Globbing::Tool {
        if let Some(alternatives) = braces(place) {
            return alternatives.iter().try_for_each(|p| judge_one(p, reading, cx));
        }
    }
    judge_one(place, reading, cx)
}

/// A tool glob's brace alternatives, each placed as the word was (`None` without braces).
fn braces(place: &Place) -> Option<Vec<Place>> {
    let (text, rebuild): (&str, fn(String) -> Place) = match place {
        Place::Abs(p) => (p, |s| Place::Abs(crate::place::normalize_abs(&s))),
        Place::Home(p) => (p, Place::Home),
        Place::InStart(p) => (p, Place::InStart),
        Place::Anywhere => return None,
    };
    if !text.contains('{') {
        return None;
    }
    // Too many alternatives, or a group left open: the glob may name anything.
    let alternatives = glob::expand_braces(text).unwrap_or_else(|| vec![text.replace(['{', '}', ','], "*")]);
    Some(alternatives.into_iter().map(rebuild).collect())
}

fn judge_one(place: &Place, reading: Reading, cx: &Context<'_>) -> Result<(), Secret> {
    let Some(at) = Located::new(place, cx.home) else { return Err(Secret::Unplaced) };
    let globbed = cx.globbing != Globbing::Literal && at.comps.iter().any(|c| glob::is_glob(c));
    match (globbed, reading) {
        (true, _) => tree::judge_glob(&at, reading, cx),
        (false, Reading::File) => judge_file(&at),
        (false, Reading::Tree) => judge_file(&at).and_then(|()| tree::judge_tree(&at, cx)),
    }
}

/// Where a path is, split into components (lower-cased: macOS homes are case-insensitive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub root: Root,
    pub comps: Vec<String>,
    /// How many leading components are a home directory (`/home/u` is 2, `~` is 0).
    pub home: Option<usize>,
}

/// What a [`Located`]'s components are relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    Abs,
    Home,
    /// The unplaced start directory, which may be a home directory.
    Start,
}

impl Located {
    fn new(place: &Place, known_home: Option<&str>) -> Option<Located> {
        // ASCII lower-cases byte by byte; only other text needs Unicode's tables.
        let lower = |c: &str| if c.is_ascii() { c.to_ascii_lowercase() } else { c.to_lowercase() };
        let split = |p: &str| -> Vec<String> {
            p.split('/').filter(|c| !c.is_empty() && *c != ".").map(lower).collect()
        };
        let (root, comps) = match place {
            Place::Abs(p) => (Root::Abs, split(p)),
            Place::Home(p) => (Root::Home, split(p)),
            Place::InStart(p) => (Root::Start, split(p)),
            Place::Anywhere => return None,
        };
        let home = match root {
            Root::Abs => home::depth(&comps, known_home),
            Root::Home | Root::Start => Some(0),
        };
        Some(Located { root, comps, home })
    }

    /// The path as shown in a reason.
    pub fn shown(&self, upto: usize) -> String {
        let tail = self.comps[..upto.min(self.comps.len())].join("/");
        match (self.root, tail.is_empty()) {
            (Root::Abs, _) => format!("/{tail}"),
            (Root::Home, true) => "~".into(),
            (Root::Home, false) => format!("~/{tail}"),
            (Root::Start, true) => ".".into(),
            (Root::Start, false) => format!("./{tail}"),
        }
    }
}

/// The file rule: named stores (the more telling reason), then home stores.
fn judge_file(at: &Located) -> Result<(), Secret> {
    if let Some((upto, store)) = names::store(at) {
        return Err(Secret::Named { path: at.shown(upto), store });
    }
    let Some(depth) = at.home else { return Ok(()) };
    match home::store(&at.comps[depth.min(at.comps.len())..]) {
        Some(upto) if at.root == Root::Start => Err(Secret::MaybeHomeStore { path: at.shown(depth + upto) }),
        Some(upto) => Err(Secret::HomeStore { path: at.shown(depth + upto) }),
        None => Ok(()),
    }
}
