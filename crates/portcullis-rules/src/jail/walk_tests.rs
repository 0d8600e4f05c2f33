//! The walk against real links, with the real kernel (a child process's `realpath`) as the judge.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::*;

/// What the kernel resolves `p` to for a process started in `cwd` (`realpath -m`).
fn kernel(p: &Path, cwd: &Path) -> PathBuf {
    let out = std::process::Command::new("realpath").arg("-m").arg(p).current_dir(cwd).output().unwrap();
    assert!(out.status.success(), "realpath {p:?}: {out:?}");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim_end())
}

#[test]
fn every_link_into_a_per_process_or_device_tree_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().canonicalize().unwrap();
    let links = [
        ("cwd", "/proc/self/cwd"),
        ("root", "/proc/self/root"),
        ("thread", "/proc/thread-self/cwd"),
        ("pid1", "/proc/1/cwd"),
        ("fd", "/dev/fd/3"),
        ("devfd", "/dev/fd"),
        ("sys", "/sys/kernel"),
        ("climb", "../../../../../../../../../../proc/self/cwd"),
        ("chain", "cwd"),
        ("procdir", "/proc"),
    ];
    for (name, target) in links {
        symlink(target, d.join(name)).unwrap();
    }
    for (name, _) in links {
        for tail in ["", "/notes/private.txt", "/../x"] {
            let p = d.join(format!("{name}{tail}"));
            let r = resolve(&p);
            assert!(matches!(r, Err(Refusal::HardDenied { .. })), "{p:?} gave {r:?}");
        }
    }
    for p in ["/proc/self/root/etc/passwd", "/dev/fd/0", "/sys", "/dev", "/proc/thread-self"] {
        assert!(matches!(resolve(Path::new(p)), Err(Refusal::HardDenied { via: None, .. })), "{p}");
    }
}

#[test]
fn plain_links_resolve_where_the_kernel_resolves_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(d.join("a/b/c")).unwrap();
    std::fs::create_dir_all(d.join("other/deep")).unwrap();
    std::fs::write(d.join("other/x"), "x").unwrap();
    symlink(d.join("other/deep"), d.join("a/abs")).unwrap();
    symlink("../../other/deep", d.join("a/b/rel")).unwrap();
    symlink("rel", d.join("a/b/rel2")).unwrap();
    symlink("/etc", d.join("a/etc")).unwrap();
    let cases = [
        "a/abs/../x",
        "a/b/rel/../x",
        "a/b/rel2/../x",
        "a/b/c/../../abs",
        "a/b/../b/./c",
        "a/abs/new-file",
        "a/missing/new-file",
        "a/etc/passwd",
        "a//b///c",
    ];
    let elsewhere = tempfile::tempdir().unwrap();
    for case in cases {
        let p = d.join(case);
        assert_eq!(resolve(&p).unwrap(), kernel(&p, elsewhere.path()), "{case}");
    }
    assert_eq!(resolve(Path::new("/../..")).unwrap(), PathBuf::from("/"));
}

#[test]
fn a_loop_or_more_than_forty_links_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().canonicalize().unwrap();
    symlink("b", d.join("a")).unwrap();
    symlink("a", d.join("b")).unwrap();
    assert_eq!(resolve(&d.join("a/x")), Err(Refusal::TooManyLinks));
    std::fs::write(d.join("end"), "e").unwrap();
    let chain = |n: usize| {
        for i in 0..n {
            let target = if i == 0 { "end".to_owned() } else { format!("l{}-{n}", i - 1) };
            symlink(target, d.join(format!("l{i}-{n}"))).unwrap();
        }
        d.join(format!("l{}-{n}", n - 1))
    };
    let forty = chain(MAX_LINKS);
    assert_eq!(resolve(&forty).unwrap(), d.join("end"));
    assert!(std::fs::read(&forty).is_ok(), "the kernel follows forty");
    let forty_one = chain(MAX_LINKS + 1);
    assert_eq!(resolve(&forty_one), Err(Refusal::TooManyLinks));
    assert!(std::fs::read(&forty_one).is_err(), "the kernel refuses forty-one (ELOOP)");
}
