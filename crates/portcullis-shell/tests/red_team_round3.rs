//! Red team, round 3: lines proven read-only that real bash runs as something else. Every row was
//! run in real bash 5.2 (glibc 2.36, git 2.47) and did what the comment says; each row asserts
//! the safe answer (not proven). Findings and fixes: `findings.md` on branch `attack`.

use portcullis_shell::{analyze, read_only, ReadOnly};

fn proven(rows: &[&str]) -> Vec<String> {
    rows.iter().filter(|l| read_only(&analyze(l)) == ReadOnly::Proven).map(|l| l.to_string()).collect()
}

/// Class B: "formatting only" variables that name files. `LANGUAGE` is joined to
/// /usr/share/locale unchecked, so `../` reaches any directory, and the message catalog found
/// there supplies the format strings every program prints its errors with: `%p` leaks memory,
/// `%188$s` printed `SECRET_TOKEN=hunter2` from the environment, `%n` writes. `TZ` opens its
/// value as a zone file (`openat("/root/.ssh/id_rsa")`).
#[test]
fn locale_and_time_zone_values_that_name_files_are_not_proven() {
    let rows = [
        "LANG=C.UTF-8 LANGUAGE=../../../../tmp/rt/scan/locale/xx ls /nonexist",
        "LC_ALL=C.UTF-8 LANGUAGE=../../../../work/repo/po grep x /nonexist",
        "LANG=C.UTF-8 LANGUAGE=/../../../../tmp/x cat nonexist",
        "TZ=/root/.ssh/id_rsa date",
        "TZ=:/root/.ssh/id_rsa date",
        "TZ=../../../root/.ssh/id_rsa date",
    ];
    assert_eq!(proven(&rows), Vec::<String>::new());
}

/// Class F: git run in a directory that a checkout's *tracked files* make a repository. A cloned
/// repo may track `vendor/pkg/{HEAD,config,objects,refs}`; git discovers it as a repository
/// (`safe.bareRepository` defaults to `all`) and runs its `core.fsmonitor` on `status`
/// (real run: the marker file was created by `git -C vendor/pkg status`).
#[test]
fn git_placed_below_the_start_directory_is_not_proven() {
    let rows = ["git -C vendor/pkg status", "cd vendor/pkg && git status", "cd vendor/pkg && git diff"];
    assert_eq!(proven(&rows), Vec::<String>::new());
}

/// Class G: a secret reached by content address, not by name. `git show HEAD:.env` is refused,
/// but the same blob by its object id (printed by the proven `git ls-tree -r HEAD`) is not; and
/// git's tree readers print every tracked store of a dotfiles repository.
#[test]
fn tracked_stores_read_by_object_id_or_by_a_tree_reader_are_not_proven() {
    let rows = [
        "git cat-file -p 7e802cb9353cf87261ba8863a864065c6a968b3d",
        "git show 7e802cb9353cf87261ba8863a864065c6a968b3d",
        "git cat-file -p 7e802cb",
        "git -C ~/dotfiles grep -h aws_secret",
        "cd ~/dotfiles && git log -p",
    ];
    assert_eq!(proven(&rows), Vec::<String>::new());
}

/// What held: the same secrets by their names.
#[test]
fn secrets_named_through_git_or_variables_stay_unproven() {
    let rows = [
        "git show HEAD:.env",
        "git show :0:.env",
        "git show HEAD@{0}:.env",
        "git cat-file blob HEAD:.env",
        "git -C ~/.password-store log -p",
        "git -c alias.l=log l",
        "GIT_DIR=/tmp/x git log",
        "PAGER=sh git log",
        "jq -nf prog.jq",
        "strings @/root/.ssh/id_rsa",
        "awk 'BEGIN { ARGV[1] = \".env\"; ARGC = 2 } { print }'",
    ];
    assert_eq!(proven(&rows), Vec::<String>::new());
}

/// Builds a GNU message catalog (`.mo`) with one translation.
fn catalog(msgid: &str, msgstr: &str) -> Vec<u8> {
    let header = "Content-Type: text/plain; charset=UTF-8\n";
    let pairs = [("", header), (msgid, msgstr)];
    let n = pairs.len() as u32;
    let key_start = 28 + 16 * n;
    let keys_len: usize = pairs.iter().map(|(k, _)| k.len() + 1).sum();
    let value_start = key_start + keys_len as u32;
    let mut out = Vec::new();
    for word in [0x9504_12de_u32, 0, n, 28, 28 + 8 * n, 0, 0] {
        out.extend(word.to_le_bytes());
    }
    let mut offset = 0u32;
    for (k, _) in pairs {
        out.extend((k.len() as u32).to_le_bytes());
        out.extend((key_start + offset).to_le_bytes());
        offset += k.len() as u32 + 1;
    }
    offset = 0;
    for (_, v) in pairs {
        out.extend((v.len() as u32).to_le_bytes());
        out.extend((value_start + offset).to_le_bytes());
        offset += v.len() as u32 + 1;
    }
    for (k, _) in pairs {
        out.extend(k.as_bytes());
        out.push(0);
    }
    for (_, v) in pairs {
        out.extend(v.as_bytes());
        out.push(0);
    }
    out
}

/// The real effect behind class B: the proven line below prints with a format string taken from
/// a file the line names only through `LANGUAGE` (glibc; skipped where coreutils is not
/// translated through gettext).
#[test]
fn a_catalog_named_by_language_hands_ls_its_format_strings() {
    let dir = std::env::temp_dir().join(format!("rt3-mo-{}", std::process::id()));
    let messages = dir.join("xx/LC_MESSAGES");
    std::fs::create_dir_all(&messages).expect("mkdir");
    std::fs::write(messages.join("coreutils.mo"), catalog("cannot access %s", "LEAK %p %p")).expect("mo");
    let line = format!("LANG=C.UTF-8 LANGUAGE=../../../..{}/xx ls /nonexistent-rt3", dir.display());
    let out = std::process::Command::new("bash").arg("-c").arg(&line).output().expect("bash");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(stderr.contains("LEAK 0x"), "the catalog was not used here: {stderr}");
    // The line is proven read-only while its output format belongs to a file.
    assert_ne!(read_only(&analyze(&line)), ReadOnly::Proven, "{line}");
}

/// Class H: nested parameter offsets (`${x:${x:…}}`) are analysed in time exponential in their
/// depth (release build: depth 14 takes 36 ms, 16 takes 112 ms, 18 takes 432 ms; a 511-byte line
/// did not finish in 13 minutes). Any caller can pin a worker with a 200-byte line.
#[test]
fn nested_parameter_offsets_are_refused_before_their_cost_grows() {
    // Not a timed assertion: past six levels the line is refused before it is analysed (a parse
    // error, which the engine asks), so no depth reaches the exponential analysis.
    for depth in [7, 40, 80] {
        let line = format!("echo ${{x:{}1{}}}", "${x:".repeat(depth), "}".repeat(depth));
        assert!(analyze(&line).parse_error.is_some(), "depth {depth}");
        assert!(matches!(read_only(&analyze(&line)), ReadOnly::NotProven(_)));
    }
}
