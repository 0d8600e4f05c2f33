//! Words that name secrets. Reading one changes nothing, but puts it in front of the model (and
//! whoever injected the instruction): such a command is never proven read-only.
//!
//! The check is deliberately crude and wide: any path component of any word is compared, after
//! splitting on `/ = : @ ,` and quotes, so `--key-file=~/.ssh/id_rsa`, `HEAD:.env` and
//! `cd ~/.aws` are all caught. A false hit only costs a checker call. Each path-like piece of a
//! word is also normalised first ([`paths`]), so `//proc/1/environ`, `/dev/fd/../sda` and
//! `/etc/./passwd` are the paths they resolve to.

use super::paths;

/// Whole components that are secret stores.
const NAMES: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".npmrc",
    ".yarnrc",
    ".pypirc",
    ".pgpass",
    ".my.cnf",
    ".kube",
    ".docker",
    ".azure",
    ".vault-token",
    ".boto",
    ".s3cfg",
    ".terraformrc",
    ".password-store",
    ".htpasswd",
    ".bash_history",
    ".zsh_history",
    ".history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".lesshst",
    ".viminfo",
    "shadow",
    "gshadow",
    "shadow-",
    "master.passwd",
    "sudoers",
    "environ",
    "keychains",
    "hosts.yml",
    "gcloud",
    "1password",
    "keyrings",
    "auth.json",
    "rclone.conf",
    "gradle.properties",
    ".terraform.d",
    ".vault-token",
    ".git-credential-cache",
    ".oci",
    ".ec2",
    ".gsutil",
    ".bluemix",
    ".tsh",
    ".wrangler",
    ".fly",
    ".doctl",
    ".passwd-s3fs",
    ".smbcredentials",
    ".cifs",
    ".authinfo.gpg",
    ".kdbx",
    "login.keychain",
    "login.keychain-db",
    "keychain",
    "token",
    ".token",
    "hosts.json",
    "apps.json",
    "settings-security.xml",
    "wallet.dat",
    "login data",
    "key4.db",
    "logins.json",
    // Shell start-up files: where `export GITHUB_TOKEN=…` usually lives.
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    "config.fish",
];

/// A component holding secrets only inside a given parent: `~/.m2/settings.xml`,
/// `~/.config/hub`, `~/.config/github-copilot/…` (parent, child prefix).
const NESTED: &[(&str, &str)] = &[
    (".m2", "settings"),
    (".config", "hub"),
    (".config", "gh"),
    (".config", "github-copilot"),
    (".config", "gcloud"),
    (".config", "op"),
    (".config", "rclone"),
    (".config", "doctl"),
    (".config", "configstore"),
    (".config", "hcloud"),
    (".config", "stripe"),
    (".config", "heroku"),
    (".config", "netlify"),
    (".config", "vercel"),
    (".config", "git"),
    (".config", "sops"),
    (".config", "age"),
    (".config", "keybase"),
    (".config", "chromium"),
    (".config", "google-chrome"),
    (".local", "share"),
    (".cargo", "credentials"),
    (".gem", "credentials"),
    (".mozilla", "firefox"),
    ("library", "keychains"),
    ("library", "cookies"),
    ("serviceaccount", "token"),
];

/// Component prefixes: `.env`, `.env.local`, `.envrc`, `id_rsa.pub`, `credentials.json`.
const PREFIXES: &[&str] = &[
    ".env",
    ".yarnrc",
    ".npmrc",
    ".credentials",
    ".authinfo",
    ".dockercfg",
    "cookies",
    "kubeconfig",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "credentials",
    "secret",
    ".secret",
    "service-account",
    "service_account",
    "terraform.tfstate",
];

/// Component suffixes: key and keystore files.
const SUFFIXES: &[&str] = &[
    ".pem",
    ".key",
    ".p12",
    ".pfx",
    ".jks",
    ".keystore",
    ".kdbx",
    ".ppk",
    ".tfstate",
    "_rsa",
    "_dsa",
    "_ecdsa",
    "_ed25519",
    ".asc",
    ".gpg",
    "_history",
];

/// Whole paths.
const PATHS: &[&str] = &["/etc/passwd", "/etc/master.passwd", "/proc/self/environ"];

/// Devices and process files that are harmless to read; every other `/dev/` and `/proc/` path
/// is a raw disk, memory, or another process's command line or environment.
const SYSTEM_FILES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/version",
    "/proc/loadavg",
    "/proc/uptime",
];

/// The secret a word names, if any.
pub(super) fn named_in(word: &str) -> Option<String> {
    let lower = word.to_lowercase();
    for piece in paths::pieces(&lower) {
        if let Some(path) = PATHS.iter().find(|p| piece.contains(*p) || lower.contains(*p)) {
            return Some((*path).to_string());
        }
        let special = ["/dev/", "/proc/"].iter().any(|p| piece.starts_with(p))
            && !SYSTEM_FILES.contains(&piece.as_str())
            && !piece.starts_with("/dev/fd/");
        if special {
            return Some(piece);
        }
        let components: Vec<&str> = piece.split('/').collect();
        let nested = components
            .windows(2)
            .find(|w| NESTED.iter().any(|(parent, child)| w[0] == *parent && w[1].starts_with(child)));
        if let Some(w) = nested {
            return Some(w.join("/"));
        }
    }
    lower.split(SEPARATORS).find(|c| is_secret_component(c)).map(str::to_string)
}

/// Where a word is split into components.
const SEPARATORS: [char; 10] = ['/', '=', ':', '@', ',', '\'', '"', ' ', '\t', '\n'];

/// The secret a glob could expand to: a component pattern (other than a bare `*` or `?`) that
/// matches a secret name (`.ss?`, `id_*`, `*.pem`, `.*`), or a glob under a secret store.
pub(super) fn reachable_by_glob(word: &str) -> Option<String> {
    let lower = word.to_lowercase();
    let normal = paths::normalize(&lower);
    let examples = || {
        NAMES
            .iter()
            .chain(PREFIXES)
            .map(|n| n.to_string())
            .chain(SUFFIXES.iter().map(|s| format!("x{s}")))
            .chain(NESTED.iter().flat_map(|(p, c)| [p.to_string(), c.to_string()]))
    };
    for component in normal.split(SEPARATORS).filter(|c| paths::is_glob(c)) {
        if component.bytes().all(|b| b == b'*' || b == b'?') {
            continue;
        }
        if let Some(hit) = examples().find(|name| paths::glob_matches(component.as_bytes(), name.as_bytes()))
        {
            return Some(format!("{component} could match {hit}"));
        }
    }
    // The directory a glob lists: `~/*`, `/root/*`, `/*`, `../*`.
    let literal: Vec<&str> = normal.split('/').take_while(|c| !paths::is_glob(c)).collect();
    let dir = match literal.join("/") {
        d if d.is_empty() && normal.starts_with('/') => "/".to_string(),
        d if d.is_empty() => ".".to_string(),
        d => d,
    };
    (paths::is_glob(&normal) && is_broad_root(&dir)).then(|| format!("a glob under {dir}"))
}

fn is_secret_component(c: &str) -> bool {
    !c.is_empty()
        && (NAMES.contains(&c)
            || PREFIXES.iter().any(|p| c.starts_with(p))
            || SUFFIXES.iter().any(|s| c.ends_with(s)))
}

/// Directories whose recursive search reaches every secret above: home, root, `/etc`.
/// The path is normalised first: `//root`, `/root/.`, `./..` and `~/x/..` are broad too.
pub(super) fn is_broad_root(path: &str) -> bool {
    let normal = paths::normalize(&path.to_lowercase());
    // `..`, `../..`: the parent of a project is often the home directory.
    if normal.split('/').all(|c| c == "..") {
        return true;
    }
    matches!(
        normal.as_str(),
        "/" | "~"
            | "/home"
            | "/root"
            | "/users"
            | "/etc"
            | "/var"
            | "/var/root"
            | "/proc"
            | "/private"
            | "/private/var"
            | "/run"
            | "/dev"
            | "/sys"
            | "/mnt"
            | "/media"
            | "/srv"
            | "/opt"
    ) || ((normal.starts_with("/home/") || normal.starts_with("/users/")) && normal.matches('/').count() == 2)
        // `~user`, and `~/..` (every home) or anything under it (`~/../bob`).
        || (normal.starts_with('~') && (!normal.contains('/') || normal.starts_with("~/..")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_paths_are_recognised_wherever_they_appear() {
        for word in [
            "~/.ssh/id_rsa",
            "/home/u/.ssh",
            ".env",
            ".env.production",
            "config/.envrc",
            "server.pem",
            "--key-file=~/keys/deploy_rsa",
            "HEAD:.env",
            "~/.aws/credentials",
            "/etc/shadow",
            "~/.config/gh/hosts.yml",
            "~/.docker/config.json",
            "/proc/1/environ",
            "~/.git-credentials",
            "~/.netrc",
            "/etc/passwd",
            "~/.kube/config",
            "ID_RSA",
            "/dev/sda",
            "/dev/mem",
            "/proc/1/cmdline",
            "~/.claude/.credentials.json",
            "~/.cargo/credentials.toml",
        ] {
            assert!(named_in(word).is_some(), "{word}");
        }
    }

    #[test]
    fn ordinary_paths_are_not_secrets() {
        for word in [
            "Cargo.toml",
            "src/main.rs",
            "README.md",
            "/usr/share/doc/git/",
            "environment.md",
            "package.json",
            "-n",
            "~",
            "/tmp",
            "keyboard.rs",
            "/dev/null",
            "/dev/urandom",
            "/dev/fd/3",
            "/proc/cpuinfo",
        ] {
            assert_eq!(named_in(word), None, "{word}");
        }
    }

    #[test]
    fn home_and_root_are_broad() {
        for p in ["~", "~/", "/", "/home", "/home/alice", "/Users/bob/", "/etc", "..", "../..", "~alice"] {
            assert!(is_broad_root(p), "{p}");
        }
        for p in [".", "src", "/home/alice/project", "~/code/x", "/tmp", "../sibling"] {
            assert!(!is_broad_root(p), "{p}");
        }
    }
}
