//! Whole-line tables for the read-only proof: each line goes through `analyze` first.

use crate::{analyze, read_only, ReadOnly};

fn proven(line: &str) -> bool {
    read_only(&analyze(line)) == ReadOnly::Proven
}

#[test]
fn plain_reads_and_their_compositions_are_proven() {
    for line in [
        "ls -la",
        "ls && pwd; echo 'hi there' | wc -l",
        "cat file.txt | grep pattern | sort | uniq | head -10",
        "git status && git log --oneline -5",
        "false || ls",
        "sleep 1 &",
        "ls\npwd\nwhoami",
        "{ cd /tmp; ls; }",
        "ls 2>/dev/null",
        "ls &> /dev/null",
        "grep -rn TODO src 2>&1 | head -50",
        "cat < input.txt",
        "cat <<< 'hello'",
        "cat <<EOF\nrm -rf /home/user\nEOF",
        "wc -l <<'EOF'\n$(rm -rf /)\nEOF",
        "sh -c 'ls -l'",
        "bash -ec 'cd foo && cat foo.txt'",
        "command git status",
        "command -v docker",
        "/usr/bin/rg pattern file.txt",
        "echo $'\\x72\\x6d' -rf /",
        "echo 'rm -rf /'",
        "ls *",
        "LANG=C sort data.txt",
        "LC_ALL=C.UTF-8 ls",
        "echo hello \\\nworld",
        "time ls",
        "! grep -q x file",
        "echo 'مرحبا بالعالم' '你好世界'",
        "sed -n '1,5p' file.txt | nl -ba",
        "awk '{print $1}' data.txt",
        "rm --help",
        "[ -f Cargo.toml ] && cat Cargo.toml",
    ] {
        assert!(proven(line), "{line}: {:?}", read_only(&analyze(line)));
    }
}

#[test]
fn anything_that_writes_runs_or_hides_is_not_proven() {
    for line in [
        "",
        "# just a comment",
        "echo hi > out.txt",
        "echo hi >> out.txt",
        "ls >| out.txt",
        "ls >&out.txt",
        "ls <> file",
        "cat < /dev/tcp/example.com/80",
        "echo $(ls)",
        "echo `ls`",
        "cat <(ls)",
        "echo x > >(cat)",
        "(ls)",
        "ls; (cd /tmp && ls)",
        "echo $HOME",
        "echo ${var}",
        "echo $((1+2))",
        "cat <<EOF\n$HOME\nEOF",
        "FOO=bar ls",
        "PAGER=cat git log",
        "GIT_PAGER='sh -c x' git -p log",
        "LD_PRELOAD=/tmp/x.so ls",
        "PATH=/tmp/evil ls",
        "sudo ls",
        "sudo git status",
        "timeout 5 ls",
        "nice ls",
        "nohup ls",
        "env ls",
        "env",
        "printenv",
        "xargs ls",
        "echo x | xargs cat",
        "./ls",
        "/tmp/malicious/rg pattern",
        "$CMD",
        "eval ls",
        "bash <<EOF\nls\nEOF",
        "python3 <<'PY'\nprint(1)\nPY",
        "bash -c \"$x\"",
        "bash -lc git status",
        "f() { ls; }; f",
        "alias ll='ls -l'",
        "cat ~/.ssh/id_rsa",
        "cat .env",
        "cat ~/.aws/credentials",
        "grep -r key ~",
        "cd ~ && cat .ssh/config",
        "cat < ~/.ssh/id_rsa",
        "git show HEAD:.env",
        "gh auth token",
        "git config --get credential.helper",
        "echo hello\u{2029}rm -rf /",
        "echo hello\u{85}rm -rf /",
        "ls\r\nrm -rf /",
        "echo a\u{200b}b",
        "cat *.txt",
        "cat {.env,x}",
        "ls *(e:date:)",
        "echo \"unterminated",
        "if then fi",
        "for f in a; do cat $f; done",
        "[[ -f x ]]",
        "(( x = 1 ))",
        "coproc ls",
        "echo hello rm -rf / && rm -rf /",
    ] {
        assert!(!proven(line), "{line} must not be proven");
    }
}

#[test]
fn the_reason_names_the_failing_command() {
    let ReadOnly::NotProven(why) = read_only(&analyze("ls && rm -rf build")) else {
        panic!("rm is not read-only");
    };
    assert!(why.contains("rm -rf build"), "{why}");
}

#[test]
fn secrets_reached_by_a_path_the_text_check_does_not_see_are_not_proven() {
    for line in [
        // Recursive reads rooted at or above a home directory, root, or a parent.
        "grep -r PRIVATE //root",
        "grep -r PRIVATE /root/.",
        "grep -r PRIVATE /root/./",
        "grep -r PRIVATE ///root//",
        "grep -R PRIVATE /home/../root",
        "grep -r PRIVATE /tmp/../root",
        "grep -r x ./..",
        "grep -r x ./../",
        "grep -r x ../.",
        "grep -r x src/../..",
        "grep -r x ~/.",
        "grep -r x ~/src/..",
        "grep -r x ~/..",
        "grep -r x ~/../bob",
        "grep -r x //",
        "grep -r x /.",
        "rg -. X ~",
        "rg X //root",
        "rg X /home/alice/.",
        "rg X ./..",
        "rg X --search-zip=no ~",
        "ag X //",
        "git -C ~ grep --no-index X",
        "git -C ~ log",
        "git -C //root status",
        "git -C .. grep X",
        "git -C ./.. log",
        "git grep --no-index X",
        "git grep --no-i X",
        "git grep --untracked X",
        "ls -R ~",
        "ls -laR /root",
        "ls --recursive //",
        "du -a ~",
        "du -sh /root/.",
        "du ./..",
        "tree ~",
        "tree -a //home/alice",
        "find ~ -name id_rsa",
        "find / -name '*.pem'",
        "find //root -type f",
        "find ./.. -name x",
        "find . -files0-from list",
        "grep -r x ./.",
        "grep -r x src/..",
        "grep -r x .//",
        "grep -r -e x src/./..",
        "grep -R x lib/../.",
        "head -c 512 -- -f//dev/sda",
        "grep -f//proc/self/environ x",
        "fd id_rsa ~",
        "fd -H x /",
        "fd x --base-directory=/root",
        "cd //root",
        "cd /root/.",
        "cd ./..",
        // Option values that name files to read.
        "wc --files0-from F",
        "wc --files0-from=F",
        "du --files0-from=list",
        "sort --files0-from=list",
        "wc --files0=F",
        "grep -f //etc/shadow x",
        "grep --file=/etc/./shadow x",
        "grep --exclude-from=~/.ssh/config -r x src",
        "rg --ignore-file=/root/.ssh/config x",
        // /proc and /dev by any spelling.
        "cat //proc/1/environ",
        "cat /proc/./1/environ",
        "cat /proc/self/../1/environ",
        "cat /proc//self/environ",
        "cat /proc/1/cmdline",
        "cat /proc/self/mem",
        "cat /proc/1/maps",
        "head -c 512 //dev/sda",
        "head -c 512 /dev/./sda",
        "head -c 512 /dev/fd/../sda",
        "od -N 64 /dev/nvme0n1",
        "cat /dev/mem",
        "cat //etc/passwd",
        "cat /etc/./shadow",
        // Credential files the list lacked.
        "cat ~/.m2/settings.xml",
        "cat ~/.m2/settings-security.xml",
        "cat /home/u/.m2/settings.xml",
        "cat ~/.config/hub",
        "cat ~/.config/github-copilot/hosts.json",
        "cat ~/.config/github-copilot/apps.json",
        "cat ~/.config/gh/hosts.yml",
        "cat ~/.config/gcloud/credentials.db",
        "cat ~/.docker/config.json",
        "cat ~/.kube/config",
        "cat ~/.terraform.d/credentials.tfrc.json",
        "cat ~/.cargo/credentials",
        "cat ~/.gem/credentials",
        "cat ~/.vault-token",
        "cat ~/.config/op/config",
        "cat ~/Library/Keychains/login.keychain-db",
        "cat /var/run/secrets/kubernetes.io/serviceaccount/token",
        "cat /run/secrets/db_password",
        "cat vault.kdbx",
        "cat ~root/.bashrc",
        "cat ~/.zshrc",
        "cat /home/u/.profile",
        "cat ~/.yarnrc.yml",
        "cat ~/.node_repl_history",
        // Globs that could expand to a secret, or list home or root.
        "ls ~/.ss?",
        "ls ~/.ss[h]",
        "ls ~/.*",
        "ls .e*",
        "ls ~/*",
        "ls /root/*",
        "ls /*",
        "du -sh ~/.aw?",
        "wc -c ~/.ss?/id_*",
        "stat id_*",
        "ls *.pem",
        "cat ~/.ss?/id_*",
    ] {
        assert!(!proven(line), "{line} must not be proven: it reaches a secret");
    }
}

#[test]
fn ordinary_paths_stay_proven_after_normalisation() {
    for line in [
        "grep -rn TODO src",
        "grep -rn TODO ./src/../lib",
        "rg x src/",
        "ls -R src",
        "du -sh target",
        "tree -L 2 src",
        "find . -name '*.rs'",
        "find src -type f",
        "fd x src",
        "git grep TODO src",
        "cat ./src/main.rs",
        "ls ~",
        "ls -la /tmp/",
        "ls *",
        "ls src/*.rs",
        "cat /proc/cpuinfo",
        "head -c 16 /dev/urandom",
    ] {
        assert!(proven(line), "{line}: {:?}", read_only(&analyze(line)));
    }
}

#[test]
fn a_path_that_climbs_out_of_the_start_directory_may_be_anywhere() {
    // The start directory may be `~/proj`: `../.ssh` is then `~/.ssh`, `../other` another home.
    for line in ["git -C ../other log", "cat ../.ssh/id_rsa", "cat ../README.md"] {
        assert!(!proven(line), "{line} must not be proven");
    }
}

#[test]
fn sed_scripts_are_judged_by_gnu_seds_grammar_in_whole_lines() {
    for line in [
        "sed ':a e touch x' f",
        "sed ':a;e touch x' f",
        "sed -n ':x w /tmp/out' f",
        "sed 'b e touch x' f",
        "sed -e 'a\\' -e x -e 'e touch x' f",
        "sed --exp='1e id' f",
        "sed -ni p f",
        "sed -n 's/[/]/x/e' f",
    ] {
        assert!(!proven(line), "{line} must not be proven");
    }
    assert!(proven("sed -n ':a;N;$!ba;p' f"));
}

#[test]
fn a_glob_that_could_become_an_option_is_proven_only_where_no_option_writes_or_reads() {
    // A file named `-o`, `--fromfile` or `--files0-from=.env` in the directory turns these into
    // a write or a secret's contents printed as file names.
    for line in ["tree *", "tree -a *", "du *", "du -sh *", "wc *", "wc -l *.rs", "tree ?", "du [-a]*"] {
        assert!(matches!(read_only(&analyze(line)), ReadOnly::NotProven(_)), "{line} was proven");
    }
    // Listing programs have no such option; names that cannot start with `-` are only names.
    for line in ["ls *", "ls -la *.rs", "stat *", "du -sh src/*", "tree src/*", "wc -l ./*.rs"] {
        assert_eq!(read_only(&analyze(line)), ReadOnly::Proven, "{line}");
    }
}

#[test]
fn issue_23s_secret_stores_are_not_proven_read_only() {
    for line in [
        "cat .git/config",
        "grep -r oauth_token ~/.config",
        "cat ~/.kaggle/kaggle.json",
        "cat ~/.claude.json",
        "cat /root/.ssh/id_rsa",
        "cat //root/./.ssh/id_rsa",
        "cat ~root/.ssh/id_rsa",
        "head /home/u/../u/.aws/credentials",
        "grep -r token /work/other-checkout",
        "grep -rn password .git",
        "cat .env.local",
        "cat ~/.config/gh/hosts.yml",
    ] {
        assert!(!proven(line), "{line} must not be proven");
    }
    for line in
        ["cat .github/workflows/ci.yml", "grep -rn TODO src tests", "cat /etc/hostname", "cat .gitignore"]
    {
        assert!(proven(line), "{line}: {:?}", read_only(&analyze(line)));
    }
}

#[test]
fn git_subcommands_that_print_the_config_are_not_proven_in_any_spelling() {
    for line in [
        "git remote -v",
        "git rem''ote --verbose",
        "git -C . remote get-url origin",
        "git {remote,} -v",
        "git config --get remote.origin.url",
    ] {
        assert!(matches!(read_only(&analyze(line)), ReadOnly::NotProven(_)), "{line} was proven");
    }
}

#[test]
fn locale_and_zone_values_that_name_files_are_not_proven() {
    for line in [
        "TZ=/root/.ssh/id_rsa date",
        "LANG=C.UTF-8 LANGUAGE=../../../../tmp/x/locale/xx ls /nonexist",
        "TZ=:/etc/x date",
    ] {
        assert!(matches!(read_only(&analyze(line)), ReadOnly::NotProven(_)), "{line} was proven");
    }
    for line in ["TZ=UTC date", "TZ=America/New_York date", "LANG=C.UTF-8 ls"] {
        assert_eq!(read_only(&analyze(line)), ReadOnly::Proven, "{line}");
    }
}

#[test]
fn git_is_proven_only_where_the_line_starts() {
    for line in ["git -C vendor/pkg status", "cd vendor/pkg && git status", "git --git-dir=x/.git log"] {
        assert!(matches!(read_only(&analyze(line)), ReadOnly::NotProven(_)), "{line} was proven");
    }
    assert_eq!(read_only(&analyze("git status")), ReadOnly::Proven);
}
