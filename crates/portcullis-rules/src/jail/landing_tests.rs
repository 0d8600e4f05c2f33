use std::path::PathBuf;

use portcullis_shell::effects::{effects, Access};
use portcullis_shell::place::{Base, Place};

use super::super::{Jail, Resolve};

/// `<tmp>/repo` holding `deep -> <tmp>/outside/a/b` and `fd -> /proc/self/fd`, with
/// `<tmp>/outside/a/notes.txt` behind it.
struct Workspace {
    _dir: tempfile::TempDir,
    base: PathBuf,
    repo: PathBuf,
}

fn workspace() -> Workspace {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let repo = base.join("repo");
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    std::fs::create_dir_all(base.join("outside/a/b")).unwrap();
    std::fs::write(base.join("outside/a/notes.txt"), "outside\n").unwrap();
    std::os::unix::fs::symlink(base.join("outside/a/b"), repo.join("deep")).unwrap();
    std::os::unix::fs::symlink("/proc/self/fd", repo.join("fd")).unwrap();
    Workspace { _dir: dir, base, repo }
}

/// Every place the commands of `line` touch, once landed, run from the jail's root.
fn landed(w: &Workspace, line: &str) -> Vec<(Place, Access)> {
    let jail = Jail::new(Some(&w.repo), &[], Resolve::Filesystem).unwrap();
    let analysis = portcullis_shell::analyze(line);
    assert!(analysis.parse_error.is_none(), "{line}");
    let mut fx = effects(&analysis, &Base::Dir(w.repo.display().to_string()), None);
    jail.land(&mut fx);
    fx.into_iter().flat_map(|e| e.paths).map(|p| (p.place, p.access)).collect()
}

#[test]
fn every_operand_position_lands_where_the_kernel_opens_it() {
    let w = workspace();
    let notes = Place::Abs(w.base.join("outside/a/notes.txt").display().to_string());
    let cases: &[(&str, Access)] = &[
        ("cat deep/../notes.txt", Access::Read),
        ("cat ./deep/../notes.txt", Access::Read),
        ("cat < deep/../notes.txt", Access::Read),
        ("echo x > deep/../notes.txt", Access::Write),
        ("echo x >> deep/../notes.txt", Access::Write),
        ("cd deep && cat ../notes.txt", Access::Read),
        ("cd deep; cat ../notes.txt", Access::Read),
        ("cd sub/../deep && cat ../notes.txt", Access::Read),
        ("cd -P deep/.. && cat notes.txt", Access::Read),
        ("pushd deep && cat ../notes.txt", Access::Read),
        ("tar -C deep/.. -cf /tmp/out.tar notes.txt", Access::ReadTree),
        ("tar --directory=deep/.. -cf /tmp/out.tar notes.txt", Access::ReadTree),
        ("make -C deep/.. -f notes.txt", Access::Execute),
        ("make --directory=deep/.. -f notes.txt", Access::Execute),
        // A program no grammar reads: every piece of every word may be a path.
        ("frobnicate --input=deep/../notes.txt", Access::Any),
        ("frobnicate deep/../notes.txt", Access::Any),
    ];
    for (line, access) in cases {
        let got = landed(&w, line);
        assert!(got.iter().any(|(p, a)| *p == notes && a == access), "{line}: {got:?}");
    }
}

#[test]
fn git_run_from_a_climbed_link_reads_the_repository_where_it_lands() {
    let w = workspace();
    let got = landed(&w, "git -C deep/.. status");
    let there = Place::Abs(w.base.join("outside/a").display().to_string());
    assert!(got.iter().any(|(p, a)| *p == there && *a == Access::Repository), "{got:?}");
}

#[test]
fn a_climb_through_a_link_into_proc_lands_anywhere() {
    let w = workspace();
    for line in ["cat fd/../environ", "cat < fd/../environ", "cd fd/.. && cat environ", "cat fd/3"] {
        let got = landed(&w, line);
        assert!(got.iter().any(|(p, _)| *p == Place::Anywhere), "{line}: {got:?}");
    }
}

#[test]
fn plain_spellings_land_where_they_are_read() {
    let w = workspace();
    for line in ["cat sub/x", "cat /etc/hostname", "cat sub/../x", "cat /proc/cpuinfo", "ls 2>/dev/null"] {
        let analysis = portcullis_shell::analyze(line);
        let lexical: Vec<_> = effects(&analysis, &Base::Dir(w.repo.display().to_string()), None)
            .into_iter()
            .flat_map(|e| e.paths)
            .map(|p| (p.place, p.access))
            .collect();
        assert_eq!(landed(&w, line), lexical, "{line}: nothing to add");
    }
}

#[test]
fn lexical_jails_add_nothing_the_effect_model_did_not_read() {
    let w = workspace();
    let jail = Jail::new(Some(&w.repo), &[], Resolve::Lexical).unwrap();
    let analysis = portcullis_shell::analyze("cat deep/../notes.txt");
    let mut fx = effects(&analysis, &Base::Dir(w.repo.display().to_string()), None);
    let before = fx.clone();
    jail.land(&mut fx);
    assert_eq!(fx, before);
}
