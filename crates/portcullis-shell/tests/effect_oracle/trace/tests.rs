//! The trace parser on lines captured from strace 6.1 (`-f -qq -y -e signal=none`).

use super::*;

fn ok(value: i64, fd_path: Option<&str>) -> Outcome {
    Outcome::Ok { value, fd_path: fd_path.map(String::from) }
}

#[test]
fn complete_calls_give_their_arguments_and_results() {
    let cases: &[(&str, &str, &str, Outcome)] = &[
        (
            r#"6913  openat(AT_FDCWD</tmp/or-x>, "we ird\t\"q", O_RDONLY) = 3</tmp/or-x/we ird\t\"q>"#,
            "openat",
            r#"AT_FDCWD</tmp/or-x>, "we ird\t\"q", O_RDONLY"#,
            ok(3, Some("/tmp/or-x/we ird\t\"q")),
        ),
        (
            r#"6873  openat(AT_FDCWD</tmp/or-x>, "/dev/tty", O_RDWR|O_NONBLOCK) = -1 ENXIO (No such device or address)"#,
            "openat",
            r#"AT_FDCWD</tmp/or-x>, "/dev/tty", O_RDWR|O_NONBLOCK"#,
            Outcome::Err("ENXIO".into()),
        ),
        (r#"6912  mkdir("q", 0777)                  = 0"#, "mkdir", r#""q", 0777"#, ok(0, None)),
        (
            r#"6923  renameat2(AT_FDCWD</tmp/or-x>, "q", AT_FDCWD</tmp/or-x>, "z", RENAME_NOREPLACE) = 0"#,
            "renameat2",
            r#"AT_FDCWD</tmp/or-x>, "q", AT_FDCWD</tmp/or-x>, "z", RENAME_NOREPLACE"#,
            ok(0, None),
        ),
        (
            r#"3023  connect(5<socket:[45789]>, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("1.2.3.4")}, 16) = -1 ENETUNREACH (Network is unreachable) (INJECTED)"#,
            "connect",
            r#"5<socket:[45789]>, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("1.2.3.4")}, 16"#,
            Outcome::Err("ENETUNREACH".into()),
        ),
        (
            r#"7001  openat(AT_FDCWD</w>, "a) = 3", O_RDONLY) = 4</w/a) = 3>"#,
            "openat",
            r#"AT_FDCWD</w>, "a) = 3", O_RDONLY"#,
            ok(4, Some("/w/a) = 3")),
        ),
        (r#"7002  exit_group(0)                     = ?"#, "exit_group", "0", Outcome::Unknown),
    ];
    for (line, name, args, result) in cases {
        let calls = parse(line);
        assert_eq!(calls.len(), 1, "{line}");
        assert_eq!(calls[0].name, *name, "{line}");
        assert_eq!(calls[0].args, *args, "{line}");
        assert_eq!(calls[0].result, *result, "{line}");
    }
}

#[test]
fn unfinished_calls_are_joined_with_their_resumption_by_pid() {
    let text = r#"6878  execve("/usr/bin/sort", ["sort"], 0x56514583d8d0 /* 35 vars */ <unfinished ...>
6877  execve("/usr/bin/cat", ["cat", "we ird\t\"q"], 0x56514583d8d0 /* 35 vars */ <unfinished ...>
6878  <... execve resumed>)             = 0
6877  openat(AT_FDCWD</tmp/or-x>, "f", O_RDONLY <unfinished ...>
6880  --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=3013} ---
6877  <... openat resumed>)             = 3</tmp/or-x/f>
6879  +++ exited with 0 +++
6881  openat(AT_FDCWD</tmp>, "g", O_RDONLY <unfinished ...>"#;
    let calls = parse(text);
    let names: Vec<(u32, &str)> = calls.iter().map(|c| (c.pid, c.name.as_str())).collect();
    assert_eq!(names, [(6878, "execve"), (6877, "openat"), (6877, "execve"), (6881, "openat")]);
    assert_eq!(calls[1].args, r#"AT_FDCWD</tmp/or-x>, "f", O_RDONLY"#);
    assert_eq!(calls[1].result, ok(3, Some("/tmp/or-x/f")));
    // 6877's execve never resumed in this cut, nor 6881's open: they are still reported, at
    // the end, as unknown.
    assert_eq!(calls[2].result, Outcome::Unknown);
    assert_eq!(calls[3].result, Outcome::Unknown);
    assert!(parse(text).iter().all(|c| c.name != "---"));
}

#[test]
fn the_never_resumed_execve_is_kept_with_an_unknown_outcome() {
    let calls = parse("9  execve(\"/usr/bin/cat\", [\"cat\"], 0x1 /* 1 var */ <unfinished ...>\n");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].result, Outcome::Unknown);
}

#[test]
fn arguments_split_at_top_level_commas_and_decode_strings_and_descriptors() {
    let a = args(r#"AT_FDCWD</tmp/a\76b\74c>, "x, y", ["cat", "f"], {flags=O_RDONLY, resolve=0}, 24"#);
    assert_eq!(
        a,
        [
            Arg::Fd(Some("/tmp/a>b<c".into())),
            Arg::Str("x, y".into()),
            Arg::Raw(r#"["cat", "f"]"#.into()),
            Arg::Raw("{flags=O_RDONLY, resolve=0}".into()),
            Arg::Raw("24".into()),
        ]
    );
    assert_eq!(
        args(r#"4<socket:[49405]>, {sa_family=AF_UNIX, sun_path="/x"}, 110"#)[0],
        Arg::Fd(Some("socket:[49405]".into()))
    );
    // A string cut by `-s` keeps what strace printed.
    assert_eq!(args(r#""abc"..., 3"#)[0], Arg::Str("abc".into()));
}

#[test]
fn escapes_decode_to_the_bytes_strace_saw() {
    let cases = [
        (r#"we ird\t\"q"#, "we ird\t\"q"),
        (r"\351t", "\u{fffd}t"),
        (r"\303\251t", "ét"),
        (r"\x2e\x65nv", ".env"),
        (r"a\76b\74c", "a>b<c"),
        (r"back\\slash", "back\\slash"),
        (r"\0", "\0"),
        ("trailing\\", "trailing\\"),
    ];
    for (raw, want) in cases {
        assert_eq!(unescape(raw), want, "{raw}");
    }
}
