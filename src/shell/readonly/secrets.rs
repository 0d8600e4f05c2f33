//! Words that name secrets. Reading one changes nothing, but puts it in front of the model (and
//! whoever injected the instruction): such a command is never proven read-only.
//!
//! The check is deliberately crude and wide: any path component of any word is compared, after
//! splitting on `/ = : @ ,` and quotes, so `--key-file=~/.ssh/id_rsa`, `HEAD:.env` and
//! `cd ~/.aws` are all caught. A false hit only costs a checker call.

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
];

/// Component prefixes: `.env`, `.env.local`, `.envrc`, `id_rsa.pub`, `credentials.json`.
const PREFIXES: &[&str] = &[
    ".env",
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
    if let Some(path) = PATHS.iter().find(|p| lower.contains(*p)) {
        return Some((*path).to_string());
    }
    let special = ["/dev/", "/proc/"].iter().any(|p| lower.starts_with(p))
        && !SYSTEM_FILES.contains(&lower.as_str())
        && !lower.starts_with("/dev/fd/");
    if special {
        return Some(lower);
    }
    lower
        .split(['/', '=', ':', '@', ',', '\'', '"', ' ', '\t', '\n'])
        .find(|c| is_secret_component(c))
        .map(str::to_string)
}

fn is_secret_component(c: &str) -> bool {
    !c.is_empty()
        && (NAMES.contains(&c)
            || PREFIXES.iter().any(|p| c.starts_with(p))
            || SUFFIXES.iter().any(|s| c.ends_with(s)))
}

/// Directories whose recursive search reaches every secret above: home, root, `/etc`.
pub(super) fn is_broad_root(path: &str) -> bool {
    let trimmed = path.trim_end_matches('/');
    // `..`, `../..`: the parent of a project is often the home directory.
    if !trimmed.is_empty() && trimmed.split('/').all(|c| c == "..") {
        return true;
    }
    matches!(
        trimmed,
        "" | "~" | "/home" | "/root" | "/Users" | "/etc" | "/var" | "/proc" | "/private" | ".." | "~root"
    ) || ((trimmed.starts_with("/home/") || trimmed.starts_with("/Users/"))
        && trimmed.matches('/').count() == 2)
        || (trimmed.starts_with('~') && !trimmed.contains('/'))
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
