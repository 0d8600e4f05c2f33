//! Recursive reads and globs: what a walk below a directory, or a pattern's expansions, could
//! read. A recursive read of an ancestor of a store reads the store, so a tree read is proven
//! only where no store can be below it.

use super::glob::{could_match, could_match_hidden};
use super::{home, names, Context, Globbing, Located, Reading, Root, Secret};

/// Why a directory's tree may hold a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Broad {
    /// It is a home directory or holds one (`~`, `/home`, `/`).
    HoldsAHome,
    /// It holds a system store (`/etc` holds `/etc/shadow`, `/var` holds `/var/run/secrets`).
    HoldsASystemStore,
    /// It is the working directory, or holds it: a checkout's `.env` and `.git/config`.
    HoldsTheWorkingDirectory,
    /// It is hidden, or below a hidden directory (`.config`, `src/.cache`).
    Hidden,
    /// An absolute directory outside the working directory: it may be a checkout of its own.
    Unplaced,
}

impl std::fmt::Display for Broad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Broad::HoldsAHome => "which holds a home directory and its hidden stores",
            Broad::HoldsASystemStore => "which holds a system secret store",
            Broad::HoldsTheWorkingDirectory => "which holds the working directory (its .env and .git/config)",
            Broad::Hidden => "a hidden directory",
            Broad::Unplaced => {
                "a directory outside the working directory that may hold a checkout's .env or .git/config"
            }
        })
    }
}

/// Trees below which nothing is a secret: the system's libraries, headers and documentation.
const SYSTEM_TREES: &[&[&str]] = &[
    &["usr", "share"],
    &["usr", "include"],
    &["usr", "lib"],
    &["usr", "lib64"],
    &["usr", "src"],
    &["usr", "local", "include"],
    &["usr", "local", "lib"],
    &["usr", "local", "share"],
];

/// The tree rule, for a directory that is not itself a store.
pub(super) fn judge_tree(at: &Located, cx: &Context<'_>) -> Result<(), Secret> {
    let refuse = |why| Err(Secret::Tree { dir: at.shown(at.comps.len()), why });
    let c = &at.comps;
    let home_depth = at.home.filter(|d| *d <= c.len());
    // Components below an allowed home cache (`~/.cargo/registry/src`) are not hidden stores.
    let cached =
        home_depth.and_then(|d| home::ALLOWED.iter().find(|a| begins(&c[d..], a)).map(|a| d + a.len()));
    // Hidden names count below the working directory only (a checkout may live in `/tmp/.x`;
    // a store above it was judged by the file rule already).
    let cwd: Option<Vec<String>> = cx.cwd.map(split);
    let below_cwd = cwd.as_ref().filter(|w| at.root == Root::Abs && c.starts_with(w)).map(Vec::len);
    if c[cached.or(below_cwd).unwrap_or(0)..].iter().any(|x| x.starts_with('.')) {
        return refuse(Broad::Hidden);
    }
    match at.root {
        Root::Start if c.is_empty() => refuse(Broad::HoldsTheWorkingDirectory),
        Root::Start => Ok(()),
        Root::Home if c.is_empty() => refuse(Broad::HoldsAHome),
        Root::Home => cached.map_or_else(|| refuse(Broad::Unplaced), |_| Ok(())),
        Root::Abs => {
            if home::holds_a_home(c, cx.home) {
                return refuse(Broad::HoldsAHome);
            }
            if names::system_trees().any(|s| c.len() <= s.len() && c.iter().zip(s).all(|(x, y)| x == y)) {
                return refuse(Broad::HoldsASystemStore);
            }
            match cwd {
                Some(w) if w.starts_with(c) => return refuse(Broad::HoldsTheWorkingDirectory),
                Some(w) if c.starts_with(&w) => return Ok(()),
                _ => {}
            }
            let system = SYSTEM_TREES.iter().any(|s| begins(c, s));
            if system || cached.is_some() {
                Ok(())
            } else {
                refuse(Broad::Unplaced)
            }
        }
    }
}

/// The glob rule: `at` holds a glob component under [`Context::globbing`].
pub(super) fn judge_glob(at: &Located, reading: Reading, cx: &Context<'_>) -> Result<(), Secret> {
    let g = cx.globbing;
    let k = at.comps.iter().position(|c| super::glob::is_glob(c)).unwrap_or(at.comps.len());
    let comps = at.comps[..k].to_vec();
    let home = match at.root {
        Root::Abs => home::depth(&comps, cx.home),
        Root::Home | Root::Start => Some(0),
    };
    let prefix = Located { root: at.root, comps, home };
    super::judge_file(&prefix)?;
    let mut rest: Vec<&str> = at.comps[k..].iter().map(String::as_str).collect();
    if reading == Reading::Tree {
        rest.push("**");
    }
    // `**` walks directories under a tool's globbing, and as the walk a tree read appends.
    let deep = |p: &str| p == "**" && (g == Globbing::Tool || reading == Reading::Tree);
    let shown = at.shown(at.comps.len());
    let reach = |example: &str| Err(Secret::Glob { pattern: shown.clone(), example: example.into() });
    // A walk: judged as a tree read of a named directory at the glob's level.
    if rest.last().is_some_and(|p| deep(p)) {
        let mut walked = prefix.clone();
        if rest.len() > 1 {
            walked.comps.push("x".into());
        }
        judge_tree(&walked, cx)?;
    }
    // The home level: right below a home, a pattern that could name a hidden store.
    let at_home = match at.root {
        Root::Abs => prefix.home == Some(k),
        Root::Home | Root::Start => k == 0,
    };
    if at_home && (deep(rest[0]) || home::store_pattern(rest[0], g)) {
        return reach("a hidden store of a home directory");
    }
    if at.root == Root::Abs && !at_home && home::holds_a_home(&prefix.comps, cx.home) {
        let hidden = rest.iter().any(|p| deep(p) || could_match_hidden(p, g));
        if hidden {
            return reach("a hidden store of a home directory");
        }
    }
    // System stores below the prefix: `/etc/*` could be `/etc/shadow`.
    if at.root == Root::Abs {
        for store in names::system_trees() {
            let Some(below) = store.strip_prefix(&refs(&prefix.comps)[..]) else { continue };
            let walks = rest.iter().any(|p| deep(p));
            let fits =
                rest.len() >= below.len() && below.iter().zip(&rest).all(|(s, p)| could_match(p, s, g));
            if walks || fits {
                return reach(&format!("/{}", store.join("/")));
            }
        }
    }
    // Store directories a middle pattern could name (`.ss?`), and git's config below `.g*`.
    let (last, middle) = rest.split_last().expect("a glob has a component");
    for p in middle.iter().filter(|p| !matches!(**p, "*" | "**")) {
        if let Some(dir) =
            [".ssh", ".aws", ".gnupg", ".kube", ".docker", ".git"].iter().find(|d| could_match(p, d, g))
        {
            return reach(dir);
        }
    }
    let git_parent = prefix.comps.last().is_some_and(|d| d == ".git" || d.ends_with(".git"))
        || middle.iter().any(|p| deep(p) || could_match(p, ".git", g));
    if git_parent && could_match(last, "config", g) {
        return reach(".git/config");
    }
    if deep(last) {
        return Ok(());
    }
    if !super::glob::is_glob(last) {
        return match names::file(last) {
            Some(store) => Err(Secret::Named { path: shown.clone(), store }),
            None => Ok(()),
        };
    }
    match names::examples().find(|name| could_match(last, name, g)) {
        Some(example) => reach(&example),
        None => Ok(()),
    }
}

fn split(path: &str) -> Vec<String> {
    path.split('/').filter(|c| !c.is_empty() && *c != ".").map(str::to_lowercase).collect()
}

/// Whether `comps` starts with `prefix`, compared in place.
fn begins(comps: &[String], prefix: &[&str]) -> bool {
    prefix.len() <= comps.len() && prefix.iter().zip(comps).all(|(p, c)| c == p)
}

fn refs(s: &[String]) -> Vec<&str> {
    s.iter().map(String::as_str).collect()
}
