//! Whole-line tables for the read-only proof: each line goes through `analyze` first.

use crate::shell::{analyze, read_only, ReadOnly};

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
