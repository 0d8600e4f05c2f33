use super::*;
use crate::analyze;

fn all(line: &str, start: Base) -> Vec<CommandEffects> {
    effects(&analyze(line), &start, None)
}

fn places(e: &CommandEffects) -> Vec<String> {
    e.paths.iter().map(|p| format!("{} {}", p.access.as_str(), p.place)).collect()
}

fn touches(line: &str, start: Base, path: &str) -> bool {
    all(line, start).iter().any(|e| e.paths.iter().any(|p| p.place == Place::Abs(path.into())))
}

#[test]
fn every_spelling_of_a_path_reaches_its_place() {
    for line in [
        "cat /etc/hostname",
        "cat //etc/hostname",
        "cat < /etc/hostname",
        "cat 0</etc/hostname",
        "cat /usr/../etc/hostname",
        "date --file=/etc/hostname",
        "grep -f/etc/hostname x",
        "cd /usr && cd ../etc && cat hostname",
        "cd /etc; cat ./hostname",
        "pushd /etc && cat hostname",
        "dd if=/etc/hostname",
        "cat /etc/./hostname/.",
        "echo x > /etc/hostname",
        "cd / && cat etc/hostname",
    ] {
        assert!(
            touches(line, Base::start(), "/etc/hostname"),
            "{line}: {:?}",
            all(line, Base::start()).iter().map(places).collect::<Vec<_>>()
        );
    }
}

#[test]
fn relative_words_stay_below_the_start_directory_until_they_climb() {
    let e = all("cat src/main.rs", Base::start());
    assert_eq!(places(&e[0]), ["reads ./src/main.rs"]);
    let e = all("cat ../../etc/passwd", Base::start());
    assert!(e[0].paths.iter().any(|p| p.place == Place::Anywhere));
    let e = all("cd src && cat ../README", Base::start());
    assert!(e[1].paths.iter().all(|p| p.place != Place::Anywhere), "{:?}", places(&e[1]));
}

#[test]
fn unknown_directory_changes_make_relative_words_anywhere() {
    for line in [
        "cd \"$D\" && cat x",
        "cd - && cat x",
        "popd; cat x",
        "CDPATH=/ cd etc && cat hostname",
        "source env.sh; cat x",
    ] {
        let e = all(line, Base::start());
        assert!(e.last().unwrap().paths.iter().any(|p| p.place == Place::Anywhere), "{line}");
    }
}

#[test]
fn a_directory_change_that_may_fail_keeps_both_directories() {
    let e = all("cd /nonexistent; cat x", Base::Dir("/w".into()));
    let got: Vec<_> = e[1].paths.iter().map(|p| p.place.clone()).collect();
    assert!(
        got.contains(&Place::Abs("/w/x".into())) && got.contains(&Place::Abs("/nonexistent/x".into())),
        "{got:?}"
    );
}

#[test]
fn redirections_are_exact() {
    let e = all("sort < in.txt > out.txt 2>&1", Base::Dir("/w".into()));
    let rs: Vec<_> = e[0].paths.iter().map(|p| (p.place.to_string(), p.access)).collect();
    assert!(rs.contains(&("/w/in.txt".into(), Access::Read)));
    assert!(rs.contains(&("/w/out.txt".into(), Access::Write)));
    let e = all("cat < /dev/tcp/10.0.0.1/80", Base::start());
    assert_eq!(e[0].network, ["/dev/tcp/10.0.0.1/80"]);
}

#[test]
fn assignments_and_urls_are_recorded() {
    let e = all("FOO=1 curl https://x.example/a", Base::start());
    assert_eq!(e[0].env, ["FOO"]);
    assert_eq!(e[0].network, ["https://x.example/a"]);
}

proptest::proptest! {
    #[test]
    fn effects_never_panic_and_stay_parallel_to_commands(line in "\\PC{0,60}") {
        let a = analyze(&line);
        let e = effects(&a, &Base::start(), Some("/home/u"));
        proptest::prop_assert_eq!(e.len(), a.commands.len());
    }
}

#[test]
fn global_options_are_read_by_the_programs_own_grammar() {
    for (line, canonical) in [
        ("git -C . push origin", "git push origin"),
        ("git --no-pager -c color.ui=never push", "git push"),
        ("git --git-dir=.git push", "git push"),
        ("cargo +nightly publish", "cargo publish"),
        ("kubectl -n prod delete pod x", "kubectl delete pod x"),
        ("docker --context x run img", "docker run img"),
        ("npm --prefix x publish", "npm publish"),
    ] {
        let e = all(line, Base::start());
        assert_eq!(e[0].canonical.join(" "), canonical, "{line}");
        assert_eq!(e[0].canonical_from, Canonical::Placed, "{line}");
    }
    let e = all("git --frobnicate push", Base::start());
    assert_eq!(e[0].canonical_from, Canonical::Unplaced);
}

#[test]
fn a_grammars_directory_change_moves_the_words_after_it() {
    let e = all("tar cf - -C / etc", Base::start());
    assert!(
        e[0].paths.iter().any(|p| p.place == Place::Abs("/etc".into()) && p.access.may_read()),
        "{:?}",
        places(&e[0])
    );
    let e = all("git -C /usr -C ../root log", Base::start());
    assert!(e[0].paths.iter().all(|p| p.place != Place::Anywhere), "{:?}", places(&e[0]));
}

#[test]
fn nested_parameter_expansions_are_refused_before_they_cost_exponential_time() {
    let mut line = String::from("x");
    for _ in 0..40 {
        line = format!("${{x:{line}}}");
    }
    let a = analyze(&format!("echo {line}"));
    assert!(a.parse_error.is_some());
    let a = analyze("echo ${x:${y:-1}}");
    assert!(a.parse_error.is_none());
}
