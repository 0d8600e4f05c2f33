//! Secret stores recognised by name wherever they are: credential files, private keys, git's
//! remote configuration, the system's password and sudo files, process memory and devices.
//! A list cannot be complete: the home rule ([`super::home`]) and the tree rule are what make
//! the policy positive; this catches the stores that live outside a home directory.

use super::Located;

/// What a named store holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// Tokens and passwords (`.env`, `.netrc`, `credentials.json`, `~/.aws`).
    Credentials,
    /// A private key or key store (`*.pem`, `id_ed25519`, `*.kdbx`).
    PrivateKey,
    /// Git's repository configuration, where CI checkouts keep their token.
    GitConfig,
    /// Shell and tool histories (commands typed with tokens in them).
    History,
    /// The system's password, sudo and host-key files, mounted secrets.
    System,
    /// Another process's memory, environment or command line.
    Process,
    /// A raw device.
    Device,
}

impl std::fmt::Display for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Store::Credentials => "a credential store",
            Store::PrivateKey => "a private key",
            Store::GitConfig => "git's configuration (remote URLs and tokens)",
            Store::History => "a history of typed commands",
            Store::System => "a system secret",
            Store::Process => "a process's memory, environment or command line",
            Store::Device => "a raw device",
        })
    }
}

/// Directories whose every file is a secret, wherever the home they belong to is.
const STORE_DIRS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".azure",
    ".password-store",
    ".terraform.d",
    ".oci",
    ".secrets",
];

/// Whole file names holding credentials.
const FILES: &[&str] = &[
    ".envrc",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".yarnrc",
    ".yarnrc.yml",
    ".git-credentials",
    ".pgpass",
    ".my.cnf",
    ".dockercfg",
    ".vault-token",
    ".boto",
    ".s3cfg",
    ".htpasswd",
    ".passwd-s3fs",
    ".smbcredentials",
    ".terraformrc",
    ".token",
    "token",
    "auth.json",
    "wallet.dat",
    "key4.db",
    "logins.json",
    "login data",
    "cookies",
    "cookies.sqlite",
    "kubeconfig",
];

/// Name prefixes holding credentials (`credentials.json`, `service-account-ci.json`).
const PREFIXES: &[&str] =
    &["credentials", ".credentials", "service-account", "service_account", "terraform.tfstate", ".authinfo"];

/// Committed templates beside `.env`: placeholders, never the values.
const ENV_TEMPLATES: &[&str] = &[".env.example", ".env.sample", ".env.template", ".env.dist"];

/// Source and documentation extensions: `secrets.rs` is code about secrets, `secrets.yaml` is not.
const CODE: &[&str] = &["rs", "py", "go", "js", "ts", "java", "kt", "c", "h", "cc", "rb", "md", "txt.md"];

/// Private key and key store names.
const KEY_SUFFIXES: &[&str] = &[
    ".pem",
    ".key",
    ".p12",
    ".pfx",
    ".p8",
    ".jks",
    ".keystore",
    ".kdbx",
    ".ppk",
    ".keytab",
    ".gpg",
    ".asc",
    "_rsa",
    "_dsa",
    "_ecdsa",
    "_ed25519",
];
const KEY_PREFIXES: &[&str] = &["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"];

/// Harmless files in `/proc` and `/dev`; every other one is a process's or a device's.
const PROC_FILES: &[&str] = &["cpuinfo", "meminfo", "version", "loadavg", "uptime"];
const DEV_FILES: &[&str] = &["null", "zero", "random", "urandom", "stdin", "stdout", "stderr", "tty"];

/// System files and trees (absolute components), each a store with all below it.
const SYSTEM: &[&[&str]] = &[
    &["etc", "shadow"],
    &["etc", "shadow-"],
    &["etc", "gshadow"],
    &["etc", "gshadow-"],
    &["etc", "passwd"],
    &["etc", "master.passwd"],
    &["etc", "security", "opasswd"],
    &["etc", "sudoers"],
    &["etc", "sudoers.d"],
    &["etc", "ssl", "private"],
    &["etc", "kubernetes"],
    &["run", "secrets"],
    &["var", "run", "secrets"],
    &["var", "lib", "kubelet"],
];

/// Example names for glob matching: what each rule above would catch.
pub fn examples() -> impl Iterator<Item = String> {
    let keys = KEY_SUFFIXES.iter().map(|s| format!("x{s}"));
    FILES
        .iter()
        .chain(PREFIXES)
        .chain(KEY_PREFIXES)
        .chain(&[".env", ".env.local", "secrets.yaml", "shadow", "gshadow", "sudoers", "passwd", "environ"])
        .chain(&["mem", "cmdline", ".bash_history", ".viminfo", ".lesshst", "ssh_host_rsa_key"])
        .map(|s| s.to_string())
        .chain(keys)
}

/// The store a located path names, with how many of its components name it.
pub fn store(at: &Located) -> Option<(usize, Store)> {
    let c = &at.comps;
    if at.root == super::Root::Abs {
        if let Some(hit) = system(c) {
            return Some(hit);
        }
    }
    for (i, comp) in c.iter().enumerate() {
        if STORE_DIRS.contains(&comp.as_str()) {
            return Some((i + 1, Store::Credentials));
        }
        let in_git = i > 0 && c[..i].iter().any(|d| d == ".git" || d.ends_with(".git"));
        if in_git && (comp == "config" || comp == "config.worktree") {
            return Some((i + 1, Store::GitConfig));
        }
    }
    // Names judge the file itself: a directory called `credentials` or `secrets` is as often
    // code about them (`src/secrets/mod.rs`).
    let store = file(c.last()?)?;
    Some((c.len(), store))
}

/// The store one file name is, by name alone.
pub fn file(name: &str) -> Option<Store> {
    let ext = name.rsplit_once('.').map(|(_, e)| e);
    let dotenv = (name == ".env" || name.starts_with(".env.")) && !ENV_TEMPLATES.contains(&name);
    let secret_named = (name.starts_with("secret") || name.starts_with(".secret"))
        && !ext.is_some_and(|e| CODE.contains(&e));
    if dotenv || secret_named || FILES.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p)) {
        return Some(Store::Credentials);
    }
    let public = name.ends_with(".pub");
    if !public
        && (KEY_SUFFIXES.iter().any(|s| name.ends_with(s))
            || KEY_PREFIXES.iter().any(|p| name.starts_with(p)))
    {
        return Some(Store::PrivateKey);
    }
    let history = name.ends_with("_history") || matches!(name, ".history" | ".lesshst" | ".viminfo");
    history.then_some(Store::History)
}

fn system(c: &[String]) -> Option<(usize, Store)> {
    let s: Vec<&str> = c.iter().map(String::as_str).collect();
    match s.as_slice() {
        ["proc"] | ["dev"] | ["dev", "fd", _] => return None,
        ["proc", f] if PROC_FILES.contains(f) => return None,
        ["dev", f] if DEV_FILES.contains(f) => return None,
        ["proc", ..] => return Some((s.len().min(3), Store::Process)),
        ["dev", ..] => return Some((s.len().min(2), Store::Device)),
        ["etc", "ssh", key, ..] if key.starts_with("ssh_host_") && !key.ends_with(".pub") => {
            return Some((3, Store::System))
        }
        _ => {}
    }
    SYSTEM.iter().find(|sys| s.starts_with(sys)).map(|sys| (sys.len(), Store::System))
}

/// System stores as absolute component lists, for the tree rule (which refuses their ancestors).
pub fn system_trees() -> impl Iterator<Item = &'static [&'static str]> {
    SYSTEM.iter().copied().chain([&["proc"][..], &["dev"][..], &["etc", "ssh"][..]])
}
