//! The policy's tables: every red-team example, its respellings, and the reads an agent
//! legitimately makes.

use super::*;
use crate::place::{place, Base};

fn cx() -> Context<'static> {
    Context::default()
}

fn at(word: &str) -> Place {
    place(word, &Base::start(), None)
}

#[test]
fn secret_files_are_refused_however_they_are_spelled() {
    for word in [
        // Issue 23, class 7: stores no list named.
        ".git/config",
        "/work/repo/.git/config",
        "/srv/git/project.git/config",
        "vendor/lib/.git/modules/x/config",
        "~/.kaggle/kaggle.json",
        "~/.claude.json",
        "/root/.claude.json",
        "~/.config/gh/hosts.yml",
        "~/.config",
        "/home/u/.local/share/keyrings/login.keyring",
        "/Users/u/Library/Keychains/login.keychain-db",
        "/home/u/snap/firefox/1234/.mozilla/firefox/x/logins.json",
        "~/.cache/huggingface/token",
        "~/.bashrc",
        "~/.gitconfig",
        // The respellings.
        "/root/.ssh/id_rsa",
        "//root/.ssh",
        "/root/./.ssh",
        "~root/.ssh",
        "/home/u/../u/.aws",
        "/home/U/.AWS/credentials",
        "~/x/../.ssh",
        // Named stores anywhere.
        ".env",
        ".env.production",
        "config/.envrc",
        ".netrc",
        "/opt/app/.npmrc",
        ".pypirc",
        "server.pem",
        "tls/server.KEY",
        "deploy_rsa",
        "id_ed25519",
        "store.kdbx",
        "cert.p12",
        "/var/lib/jenkins/.ssh/known_hosts",
        "/var/lib/jenkins/.aws/config",
        "credentials.json",
        "secrets.yaml",
        "terraform.tfstate",
        "/etc/shadow",
        "/etc/gshadow",
        "/etc/sudoers",
        "/etc/sudoers.d/90-cloud",
        "/etc/ssh/ssh_host_ed25519_key",
        "/proc/1/environ",
        "/proc/self/mem",
        "/proc/self/cmdline",
        "/dev/sda",
        "/var/run/secrets/kubernetes.io/serviceaccount/token",
        "/run/secrets/db_password",
        // Nowhere known.
        "$HOME/x",
        "~alice/notes.txt",
        "../x",
    ] {
        assert!(judge(&at(word), Reading::File, &cx()).is_err(), "{word} should be a secret");
    }
}

#[test]
fn what_an_agent_legitimately_reads_is_not_a_secret() {
    for word in [
        "src/main.rs",
        "Cargo.toml",
        "README.md",
        ".github/workflows/ci.yml",
        ".gitignore",
        "/work/repo/.env.example",
        "/home/u/proj/.github/workflows/ci.yml",
        "/home/u/proj/.eslintrc.json",
        "/home/u/proj/.venv/lib/python3.12/site-packages/requests/api.py",
        "/home/u/proj/src/secrets/mod.rs",
        "src/secrets.rs",
        "~/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde-1.0.0/src/lib.rs",
        "~/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/lib/rustlib/src/rust/library/std/src/lib.rs",
        "~/notes.txt",
        "~",
        "/etc/hostname",
        "/etc/os-release",
        "/etc/ssh/ssh_host_ed25519_key.pub",
        "~/.ssh/../notes.txt",
        "id_rsa.pub",
        "/usr/share/doc/git/README",
        "/dev/null",
        "/dev/fd/3",
        "/proc/cpuinfo",
        "/tmp/build.log",
        "keyboard.rs",
        "environment.md",
    ] {
        assert_eq!(judge(&at(word), Reading::File, &cx()), Ok(()), "{word}");
    }
}

#[test]
fn a_recursive_read_of_an_ancestor_of_a_store_reads_the_store() {
    let refused = [
        ".",
        "~",
        "/",
        "/home",
        "/home/u",
        "/Users/u",
        "/root",
        "/etc",
        "/var",
        "/run",
        "~/.config",
        ".git",
        "src/.cache",
        "/work/other-checkout",
        "~/proj",
        "/proc",
    ];
    for word in refused {
        assert!(judge(&at(word), Reading::Tree, &cx()).is_err(), "{word}");
    }
    for word in ["src", "./tests", "src/../docs", "/usr/share/doc", "/usr/include", "~/.cargo/registry/src/x"]
    {
        assert_eq!(judge(&at(word), Reading::Tree, &cx()), Ok(()), "{word}");
    }
}

#[test]
fn a_known_working_directory_proves_trees_strictly_below_it() {
    let cx = Context { cwd: Some("/work/repo"), ..cx() };
    let abs = |p: &str| Place::Abs(p.into());
    assert_eq!(judge(&abs("/work/repo/src"), Reading::Tree, &cx), Ok(()));
    let hidden_above = Context { cwd: Some("/tmp/.tmpab12/repo"), ..cx };
    assert_eq!(judge(&abs("/tmp/.tmpab12/repo/src"), Reading::Tree, &hidden_above), Ok(()));
    assert!(judge(&abs("/tmp/.tmpab12/repo/.git"), Reading::Tree, &hidden_above).is_err());
    for dir in ["/work/repo", "/work", "/work/repo/.git", "/work/repo/src/.hidden", "/work/other"] {
        assert!(judge(&abs(dir), Reading::Tree, &cx).is_err(), "{dir}");
    }
}

#[test]
fn a_known_home_is_a_home_wherever_it_is() {
    let cx = Context { home: Some("/work/agent"), ..cx() };
    let abs = |p: &str| Place::Abs(p.into());
    assert!(judge(&abs("/work/agent/.kaggle/kaggle.json"), Reading::File, &cx).is_err());
    assert!(judge(&abs("/work"), Reading::Tree, &cx).is_err(), "holds the home");
    assert_eq!(judge(&abs("/work/agent/notes.txt"), Reading::File, &cx), Ok(()));
}

#[test]
fn globs_are_judged_by_what_they_could_expand_to() {
    let shell = Context { globbing: Globbing::Shell, ..cx() };
    let tool = Context { globbing: Globbing::Tool, ..cx() };
    let abs = |p: &str| Place::Abs(p.into());
    let rows: &[(&str, &Context, bool)] = &[
        ("~/.ss?", &shell, false),
        ("~/.*", &shell, false),
        ("id_*", &shell, false),
        ("*.pem", &shell, false),
        ("*", &shell, false),
        (".e*", &shell, false),
        ("/etc/*", &shell, false),
        ("/etc/sh*", &shell, false),
        ("/home/*/.ssh/*", &shell, false),
        ("/proc/*/environ", &shell, false),
        (".g*/config", &shell, false),
        ("*.rs", &shell, true),
        ("src/*.rs", &shell, true),
        ("docs/*.md", &shell, true),
        ("/home/*/proj/*.rs", &shell, true),
        ("/etc/*.conf", &shell, true),
        // Tools: `*` matches a leading dot, `**` walks hidden directories.
        ("/work/repo/**/*.rs", &tool, true),
        ("/home/u/proj/**/*.ts", &tool, true),
        ("/work/repo/*", &tool, false),
        ("/work/repo/**/config", &tool, false),
        ("/work/repo/**/*.pem", &tool, false),
        ("/etc/**", &tool, false),
        ("/home/u/**/*.rs", &tool, false),
        ("/**/*.rs", &tool, false),
        ("/home/u/*.md", &tool, false),
        ("/home/u/proj/*.md", &tool, true),
        ("/home/u/*", &tool, false),
        ("/usr/share/doc/**", &tool, true),
        ("/work/repo/**", &tool, false),
        ("/work/repo/**/*.{ts,tsx}", &tool, true),
        ("/work/repo/**/*.{rs,pem}", &tool, false),
        ("/work/repo/{src,/etc}/*", &tool, false),
        ("/work/repo/**/*.{a,b", &tool, false),
    ];
    for (word, cx, ok) in rows {
        let place = if word.starts_with('/') { abs(word) } else { at(word) };
        assert_eq!(judge(&place, Reading::File, cx).is_ok(), *ok, "{word} under {:?}", cx.globbing);
    }
}

#[test]
fn reasons_name_the_secret_and_why() {
    let e = judge(&at("~/.kaggle/kaggle.json"), Reading::File, &cx()).unwrap_err();
    assert_eq!(e.to_string(), "~/.kaggle, a hidden file of a home directory");
    let e = judge(&at(".git/config"), Reading::File, &cx()).unwrap_err();
    assert!(e.to_string().starts_with("./.git/config, git's configuration"), "{e}");
    let e = judge(&at("."), Reading::Tree, &cx()).unwrap_err();
    assert!(e.to_string().contains("holds the working directory"), "{e}");
}

proptest::proptest! {
    /// Whatever is appended below a home store, the read stays a secret: no suffix, `..` pair
    /// or doubled slash escapes the home rule.
    #[test]
    fn nothing_below_a_home_store_escapes_it(tail in "[a-z./]{0,16}") {
        let word = format!("/home/u/.aws/{tail}");
        let p = place(&word, &Base::start(), None);
        let escaped = p.absolute().is_some_and(|a| !a.starts_with("/home/u/.aws"));
        proptest::prop_assume!(!escaped);
        proptest::prop_assert!(judge(&p, Reading::File, &cx()).is_err());
    }
}

#[test]
fn an_effects_access_says_how_it_reads() {
    use crate::effects::Access;
    assert_eq!(Reading::of(Access::Read), Some(Reading::File));
    assert_eq!(Reading::of(Access::Any), Some(Reading::Tree));
    assert_eq!(Reading::of(Access::ReadTree), Some(Reading::Tree));
    assert_eq!(Reading::of(Access::Write), None);
}

proptest::proptest! {
    /// A secret path respelt with `.`, doubled slashes and `x/..` detours, from `/`, `~` or
    /// `~root`, is the same secret.
    #[test]
    fn respellings_of_a_secret_are_the_same_secret(
        secret in proptest::sample::select(vec![
            "/root/.ssh/id_rsa", "/home/u/.aws/credentials", "/work/repo/.git/config", "/etc/shadow",
            "/proc/1/environ", "/home/u/.kaggle/kaggle.json",
        ]),
        detours in proptest::collection::vec(proptest::sample::select(vec!["", ".", "x/..", "./.", "a/b/../.."]), 6),
    ) {
        let mut word = String::new();
        for (i, comp) in secret.split('/').skip(1).enumerate() {
            word.push('/');
            if let Some(d) = detours.get(i).filter(|d| !d.is_empty()) {
                word.push_str(d);
                word.push('/');
            }
            word.push_str(comp);
        }
        let word = match word.strip_prefix("/root/") {
            Some(rest) => format!("~root/{rest}"),
            None => word,
        };
        let p = place(&word, &Base::start(), None);
        proptest::prop_assert!(judge(&p, Reading::File, &cx()).is_err(), "{} (from {})", word, secret);
    }
}
