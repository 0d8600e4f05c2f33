//! Placing the subcommand of programs driven by one, by their own global options.

use super::{read, subcommand, Role};

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

#[test]
fn the_subcommand_is_found_after_each_programs_global_options() {
    let cases = [
        ("cargo +nightly publish", "publish"),
        ("cargo -C sub --locked --config k=v test", "test"),
        ("cargo -q build --release", "build"),
        ("kubectl -n x delete pod p", "delete"),
        ("kubectl --kubeconfig=k --context c get pods", "get"),
        ("docker --context x run img", "run"),
        ("docker -H tcp://h:2375 ps", "ps"),
        ("docker --tls=true ps", "ps"),
        ("npm --prefix x install", "install"),
        ("npm -g ls", "ls"),
        ("pnpm -C x -r test", "test"),
        ("yarn --cwd x add y", "add"),
        ("pip --python /x install y", "install"),
        ("pip3 -q list", "list"),
        ("python3 -m pip install y", "install"),
        ("go test ./...", "test"),
        ("gh pr create", "pr"),
    ];
    for (line, expected) in cases {
        let all = words(line);
        let r = subcommand(&all[0], &all[1..]).unwrap_or_else(|| panic!("{line}"));
        assert_eq!(r.subcommand, [expected], "{line}");
        let at = r.subcommand_at.unwrap_or_else(|| panic!("{line}: no index"));
        assert_eq!(all[1 + at], expected, "{line}");
    }
    let args = words("-n delete delete pod");
    assert_eq!(subcommand("kubectl", &args).and_then(|r| r.subcommand_at), Some(2));
}

#[test]
fn an_unknown_global_option_leaves_the_subcommand_unplaced() {
    for line in [
        "cargo --frobnicate publish",
        "kubectl --frob x delete",
        "docker --frob x run",
        "npm --script-shell=/tmp/x test",
        "npm --userconfig x publish",
        "pip --frob install",
        "go -C dir build",
        "python3 -c x",
        "cargo -- publish",
        "ls -l",
    ] {
        let all = words(line);
        assert_eq!(subcommand(&all[0], &all[1..]), None, "{line}");
    }
}

#[test]
fn global_options_carry_their_effects() {
    let cases = [
        ("cargo --config build.rustc-wrapper=/tmp/x build", "build.rustc-wrapper=/tmp/x", Role::Executes),
        ("cargo -C /elsewhere build", "/elsewhere", Role::Chdir),
        ("kubectl --kubeconfig evil get pods", "evil", Role::Executes),
        ("kubectl -s https://h get pods", "https://h", Role::Connects),
        ("docker --config /tmp/d ps", "/tmp/d", Role::Executes),
        ("pip --python /tmp/py install x", "/tmp/py", Role::Executes),
        ("pip --log out.txt list", "out.txt", Role::Writes),
        ("yarn --cwd sub test", "sub", Role::Chdir),
    ];
    for (line, text, role) in cases {
        let all = words(line);
        let r = subcommand(&all[0], &all[1..]).unwrap_or_else(|| panic!("{line}"));
        assert!(r.items.iter().any(|i| i.text == text && i.role == role), "{line}: {:?}", r.items);
    }
}

#[test]
fn make_runs_its_makefile_and_its_variable_overrides() {
    let cases = [
        ("make", "Makefile", Role::Executes),
        ("make -f build.mk all", "build.mk", Role::Executes),
        ("make -C sub", "sub", Role::Chdir),
        ("make SHELL=/tmp/x all", "SHELL=/tmp/x", Role::Executes),
        ("make --eval=x", "x", Role::Executes),
        ("make -t all", "all", Role::Writes),
        ("make test", "test", Role::Inert),
    ];
    for (line, text, role) in cases {
        let all = words(line);
        let r = read(&all[0], &all[1..]).unwrap_or_else(|e| panic!("{line}: {e:?}"));
        assert!(r.items.iter().any(|i| i.text == text && i.role == role), "{line}: {:?}", r.items);
    }
}
