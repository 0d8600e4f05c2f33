//! Rules hold for what a command does, however it is spelled: the red team's classes 3, 4 and 8
//! (issue 23), each with its family of respellings.

use portcullis_rules::spec::RuleSpec;
use portcullis_rules::{Effect, Engine, EngineParts, Posture, Rule, Scope};
use serde_json::json;

fn engine(deny: &[&str], ask: &[&str], allow: &[&str], posture: Posture) -> Engine {
    let rule = |s: &&str, effect| Rule { spec: RuleSpec::parse(s).expect(s), effect, scope: Scope::Config };
    let rules = deny
        .iter()
        .map(|s| rule(s, Effect::Deny))
        .chain(ask.iter().map(|s| rule(s, Effect::Ask)))
        .chain(allow.iter().map(|s| rule(s, Effect::Allow)))
        .collect();
    Engine::new(EngineParts { rules, posture, ..EngineParts::default() })
}

fn bash(e: &Engine, line: &str) -> (Effect, String) {
    let d = e.decide("claude", "Bash", &json!({ "command": line }));
    (d.effect, d.reason)
}

#[test]
fn a_file_deny_holds_for_every_spelling_of_the_path() {
    let e = engine(&["File(/etc/**)"], &[], &[], Posture::Yolo);
    for line in [
        "cat /etc/hostname",
        "cat //etc/hostname",
        "cat < /etc/hostname",
        "cat 0< /etc/hostname",
        "cat /usr/../etc/hostname",
        "cat /etc/./hostname",
        "date --file=/etc/hostname",
        "grep -f/etc/hostname x",
        "sort --files0-from=/etc/hostname",
        "cd /usr && cd ../etc && cat hostname",
        "cd /etc; cat hostname",
        "pushd /etc && cat hostname",
        "dd if=/etc/hostname of=/dev/null",
        "echo pwned > /etc/motd",
        "cd / && cat etc/hostname",
    ] {
        assert_eq!(bash(&e, line).0, Effect::Deny, "{line}: {:?}", bash(&e, line));
    }
}

#[test]
fn a_path_nobody_can_place_meets_a_file_deny_as_possibly_inside() {
    let e = engine(&["File(/etc/**)"], &[], &[], Posture::Yolo);
    for line in [
        "cd \"$D\" && cat hostname",
        "cd - && cat hostname",
        "cat ../../../../etc/hostname",
        "CDPATH=/ cd etc && cat hostname",
    ] {
        let (effect, reason) = bash(&e, line);
        assert!(effect >= Effect::Ask, "{line}: {effect:?} {reason}");
    }
    // Below the start directory, nothing climbs out: the deny does not speak about it.
    assert_eq!(bash(&e, "cat src/main.rs").0, Effect::Allow);
    assert_eq!(bash(&e, "cd src && cat ../README.md").0, Effect::Allow);
}

#[test]
fn a_recursive_read_above_a_denied_tree_reads_it() {
    let e = engine(&["Read(/etc/**)"], &[], &[], Posture::Yolo);
    for line in ["grep -r x /", "cd / && grep -R x .", "tar cf /tmp/all.tar /", "tar cf - -C / etc"] {
        assert!(bash(&e, line).0 >= Effect::Ask, "{line}: {:?}", bash(&e, line));
    }
}

#[test]
fn a_jail_root_places_relative_words() {
    let jail = portcullis_rules::jail::Jail::new(
        Some(std::path::Path::new("/srv/app")),
        &[],
        portcullis_rules::jail::Resolve::Lexical,
    )
    .expect("jail");
    let rule = Rule {
        spec: RuleSpec::parse("File(/srv/app/secrets/**)").unwrap(),
        effect: Effect::Deny,
        scope: Scope::Config,
    };
    let e = Engine::new(EngineParts {
        rules: vec![rule],
        jail: Some(jail),
        posture: Posture::Yolo,
        ..EngineParts::default()
    });
    assert_eq!(bash(&e, "cat secrets/key").0, Effect::Deny);
    assert_eq!(bash(&e, "cd secrets && cat key").0, Effect::Deny);
    assert_eq!(bash(&e, "cat src/../secrets/key").0, Effect::Deny);
    assert_eq!(bash(&e, "cat src/main.rs").0, Effect::Allow);
}

#[test]
fn a_prefix_rule_holds_for_the_subcommand_behind_global_options() {
    let e = engine(
        &["Shell(kubectl delete:*)", "Shell(cargo publish:*)"],
        &["Shell(git push:*)", "Shell(npm publish:*)", "Shell(docker run:*)"],
        &[],
        Posture::Auto,
    );
    for (line, want) in [
        ("git push", Effect::Ask),
        ("git -C . push", Effect::Ask),
        ("git --no-pager push origin", Effect::Ask),
        ("git -c k=v push", Effect::Ask),
        ("git --git-dir=.git push", Effect::Ask),
        ("cd /tmp && git -C /w --work-tree=. push -f", Effect::Ask),
        ("git --frobnicate push", Effect::Ask),
        ("docker --context x run img", Effect::Ask),
        ("kubectl -n x delete pod y", Effect::Deny),
        ("npm --prefix x publish", Effect::Ask),
        ("cargo +nightly publish", Effect::Deny),
        ("git status", Effect::Allow),
        ("git -C . log", Effect::Allow),
    ] {
        assert_eq!(bash(&e, line).0, want, "{line}: {:?}", bash(&e, line));
    }
}

#[test]
fn a_fetch_rule_holds_for_a_shell_commands_destinations_in_every_spelling() {
    let e = engine(&["Fetch(domain:127.0.0.1)"], &[], &[], Posture::Yolo);
    for line in [
        "curl http://127.0.0.1:8080/",
        "curl http://2130706433:8080/",
        "wget http://0x7f000001/",
        "curl http://127.1/x",
        "curl -s 'http://[::ffff:7f00:1]/'",
    ] {
        assert!(bash(&e, line).0 >= Effect::Ask, "{line}: {:?}", bash(&e, line));
    }
    assert_eq!(bash(&e, "curl https://docs.rs/").0, Effect::Allow);
}

#[test]
fn locale_and_zone_variables_that_name_files_meet_file_rules() {
    let e = engine(&["File(/etc/**)"], &[], &[], Posture::Yolo);
    for line in
        ["TZ=../../../etc/hostname date", "TZ=/etc/shadow date", "LANGUAGE=../../../../etc/x ls /nonexist"]
    {
        assert_eq!(bash(&e, line).0, Effect::Deny, "{line}: {:?}", bash(&e, line));
    }
    assert_eq!(bash(&e, "TZ=UTC date").0, Effect::Allow);
}

#[test]
fn a_glob_that_may_expand_into_a_denied_tree_is_asked() {
    let e = engine(&["File(/etc/**)"], &[], &[], Posture::Yolo);
    for line in ["cat /e?c/hostname", "cat /[e]tc/hostname", "cat /*/hostname", "cd /e* && cat hostname"] {
        assert!(bash(&e, line).0 >= Effect::Ask, "{line}: {:?}", bash(&e, line));
    }
    assert_eq!(bash(&e, "cat /usr/share/doc/*/README").0, Effect::Allow);
}

#[test]
fn a_git_rule_holds_for_aliases_and_command_strings_git_may_run() {
    let e = engine(&[], &["Shell(git push:*)"], &[], Posture::Auto);
    for line in [
        "git -c alias.pu=push pu origin",
        "git pu origin",
        "git rebase -x 'git push' HEAD~1",
        "git submodule foreach git push",
    ] {
        assert!(bash(&e, line).0 >= Effect::Ask, "{line}: {:?}", bash(&e, line));
    }
    assert_eq!(bash(&e, "git log -p").0, Effect::Allow);
}

#[test]
fn git_reads_the_repository_it_runs_in_whatever_its_words_name() {
    let e = engine(&["Read(/srv/vault/**)"], &[], &[], Posture::Auto);
    for line in [
        "git -C /srv/vault grep -h .",
        "cd /srv/vault && git log -p",
        "git -C /srv/vault cat-file -p HEAD:key.txt",
    ] {
        assert_eq!(bash(&e, line).0, Effect::Deny, "{line}: {:?}", bash(&e, line));
    }
}

#[test]
fn a_fetch_rule_holds_where_a_fetcher_is_routed_elsewhere_than_its_url() {
    let e = engine(&["Fetch(domain:evil.com)", "Fetch(domain:6.6.6.6)"], &[], &[], Posture::Yolo);
    for line in [
        "curl --connect-to ::evil.com: https://good.example",
        "curl --resolve good.example:443:6.6.6.6 https://good.example",
        "curl --socks5-hostname evil.com:1080 https://good.example",
        "curl --preproxy evil.com https://good.example",
        "wget -e http_proxy=evil.com http://good.example",
    ] {
        assert!(bash(&e, line).0 >= Effect::Ask, "{line}: {:?}", bash(&e, line));
    }
    assert_eq!(bash(&e, "curl https://good.example/").0, Effect::Allow);
}
