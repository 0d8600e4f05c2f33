//! Paths as the kernel resolves them, lexically: every path operand is normalised before the
//! secret and broad-root checks, so `//root`, `/root/.`, `/etc/./shadow`, `./..` and
//! `/proc/self/../1/environ` are judged as `/root`, `/etc/shadow`, `..` and `/proc/1/environ`.
//!
//! Lexical `..` can differ from the kernel's when a component is a symlink, so callers check the
//! raw word *and* its normal form: a hit on either is a hit.

use std::borrow::Cow;

/// The lexical normal form: `//` and `/./` collapse, `..` pops a component (never above `/`;
/// kept at the front of a relative path), trailing `/` and `/.` go. `~` and `~user` stay as
/// written at the front (they are a home directory; the shell expands them).
pub(super) fn normalize(path: &str) -> Cow<'_, str> {
    // Most words are already normal (`src/main.rs`, `/usr/share`, `-n`): nothing to collapse.
    let body = path.strip_prefix('/').unwrap_or(path);
    if !body.is_empty() && body.split('/').all(|c| !c.is_empty() && c != "." && c != "..") {
        return Cow::Borrowed(path);
    }
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => match parts.last() {
                // `~/..` holds the home directories: kept, it is broader than `~`.
                Some(&home) if parts.len() == 1 && home.starts_with('~') => parts[0] = "~/..",
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if absolute => {}
                _ => parts.push(".."),
            },
            c => parts.push(c),
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => Cow::Owned(format!("/{joined}")),
        (false, true) => Cow::Borrowed("."),
        (false, false) => Cow::Owned(joined),
    }
}

/// The path-like pieces of a word, normalised: the word itself, what follows each `=`
/// (`--file=PATH`, `if=PATH`), and the value glued to a short option (`-f//dev/sda`).
pub(super) fn pieces(word: &str) -> impl Iterator<Item = Cow<'_, str>> + '_ {
    let glued = match word.strip_prefix('-') {
        Some(rest) if !rest.starts_with('-') && rest.len() > 1 && rest.is_char_boundary(1) => {
            Some(&rest[1..])
        }
        _ => None,
    };
    std::iter::once(word)
        .chain(glued)
        .chain(word.match_indices('=').map(|(at, _)| &word[at + 1..]))
        .map(normalize)
}

/// Whether a word holds glob characters.
pub(super) fn is_glob(word: &str) -> bool {
    word.contains(['*', '?', '['])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalise_as_the_kernel_resolves_them_lexically() {
        for (raw, normal) in [
            ("//root", "/root"),
            ("/root/.", "/root"),
            ("/root/./", "/root"),
            ("///etc//./shadow", "/etc/shadow"),
            ("/proc/self/../1/environ", "/proc/1/environ"),
            ("/../../etc/passwd", "/etc/passwd"),
            ("//dev/sda", "/dev/sda"),
            ("/dev/fd/../sda", "/dev/sda"),
            ("./..", ".."),
            ("./../..", "../.."),
            ("a/../..", ".."),
            ("src/./x/../y", "src/y"),
            (".", "."),
            ("./", "."),
            ("", "."),
            ("~", "~"),
            ("~/", "~"),
            ("~/.", "~"),
            ("~/x/..", "~"),
            ("~/..", "~/.."),
            ("~alice/.ssh/../.ssh", "~alice/.ssh"),
            ("/home/u/.ssh/../.ssh/id_rsa", "/home/u/.ssh/id_rsa"),
            ("/", "/"),
            ("/.", "/"),
            ("/..", "/"),
        ] {
            assert_eq!(normalize(raw), normal, "{raw}");
        }
    }
}
