//! Home directories, and the hidden stores at their top: where tools keep tokens, keys,
//! sessions and histories under names nobody can list in advance (`~/.kaggle`, `~/.claude.json`).

/// Hidden paths at the top of a home directory that are not secrets, as component prefixes.
///
/// - Dependency sources an agent reads to learn an API: Rust's registry sources, git
///   checkouts and toolchains (the standard library's source), Maven's repository, the Node and
///   Python versions managed by nvm and pyenv, and pip's user site-packages. Each holds
///   published code only; a credential file inside one is still caught by its name.
/// - A project's own metadata, since the unplaced start directory may be a checkout:
///   `.github` (workflows name secrets, never hold them), `.gitignore`, `.gitattributes`,
///   `.gitmodules` and `.editorconfig`. None holds a credential even in a home directory.
///
/// Not here, on purpose: `.cache` (Hugging Face keeps its token there), `.local/share`
/// (keyrings), `.gitconfig` (credential helpers, tokens in `url.*.insteadOf`), `.vscode` and
/// `.idea` (data source passwords), `.cargo/config.toml` (registry tokens).
pub const ALLOWED: &[&[&str]] = &[
    &[".cargo", "registry", "src"],
    &[".cargo", "git", "checkouts"],
    &[".rustup", "toolchains"],
    &[".m2", "repository"],
    &[".nvm", "versions"],
    &[".pyenv", "versions"],
    &[".local", "lib"],
    &[".github"],
    &[".gitignore"],
    &[".gitattributes"],
    &[".gitmodules"],
    &[".editorconfig"],
];

/// How many leading components of an absolute path are a home directory, if it is below one.
/// `/root`, `/var/root` (macOS), `/home/<u>`, `/Users/<u>`, the known `$HOME`, and a snap's
/// per-app home `/home/<u>/snap/<app>/<rev>` (which has a `.config` of its own).
pub fn depth(comps: &[String], known: Option<&str>) -> Option<usize> {
    if let Some(home) = known.filter(|h| h.starts_with('/')) {
        let home: Vec<String> =
            home.split('/').filter(|c| !c.is_empty() && *c != ".").map(str::to_lowercase).collect();
        if !home.is_empty() && comps.starts_with(&home) {
            return Some(home.len());
        }
    }
    let c = |i: usize| comps.get(i).map(String::as_str);
    match (c(0), c(1)) {
        (Some("root"), _) => Some(1),
        (Some("var"), Some("root")) => Some(2),
        (Some("home" | "users"), Some(_)) if c(2) == Some("snap") && comps.len() >= 5 => Some(5),
        (Some("home" | "users"), Some(_)) => Some(2),
        _ => None,
    }
}

/// Whether an absolute path (components) is a home directory or an ancestor of one: `/`,
/// `/home`, `/Users`, `/var`, `/root`, `/home/u`, or an ancestor of the known home.
pub fn holds_a_home(comps: &[String], known: Option<&str>) -> bool {
    let c: Vec<&str> = comps.iter().map(String::as_str).collect();
    let known_holds = known.is_some_and(|h| {
        let h: Vec<String> = h.split('/').filter(|c| !c.is_empty()).map(str::to_lowercase).collect();
        h.starts_with(comps)
    });
    known_holds
        || matches!(
            c.as_slice(),
            [] | ["home"] | ["users"] | ["root"] | ["var"] | ["var", "root"] | ["home" | "users", _]
        )
}

/// Where, in the components below a home directory, a home store is named: `Some(1)` when
/// the first is hidden (or `Library`) and not allowed.
pub fn store(below: &[String]) -> Option<usize> {
    let first = below.first()?;
    let hidden = (first.starts_with('.') && first != "." && first != "..") || first == "library";
    let allowed = ALLOWED.iter().any(|a| a.len() <= below.len() && a.iter().zip(below).all(|(x, y)| x == y));
    (hidden && !allowed).then_some(1)
}

/// Whether a first component below a home directory, as a glob, could name a store.
pub fn store_pattern(pattern: &str, globbing: super::Globbing) -> bool {
    super::glob::could_match_hidden(pattern, globbing)
        || super::glob::could_match(pattern, "library", globbing)
}
