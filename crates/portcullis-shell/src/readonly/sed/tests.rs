use super::*;

fn judge(args: &[&str]) -> Result<(), String> {
    check(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

#[test]
fn printing_scripts_are_proven() {
    let proven: &[&[&str]] = &[
        &["-n", "1,5p", "file.txt"],
        &["-n", "10p", "f"],
        &["-n", "$p", "f"],
        &["s/old/new/g", "file.txt"],
        &["-E", "s|a+|b|2", "f"],
        &["-e", "1d", "-e", "s/x/y/", "f"],
        &["-ne", "/start/,/end/p", "f"],
        &["--quiet", "--expression=2q", "f"],
        &["y/abc/xyz/"],
        &["/x/{p;d}"],
        &["1!G;h;$!d"],
        &["s/a\\/b/c/"],
        &["-n", "/foo/I p"],
        &["1i\\\nheader"],
        &[":a;N;$!ba;s/\\n/ /g"],
        // GNU forms: steps, `0,/re/`, custom delimiters, brackets hiding the delimiter.
        &["-n", "0~4p", "f"],
        &["-n", "0,/x/p", "f"],
        &["-n", "1,+3p", "f"],
        &["-n", "\\%x%p", "f"],
        &["s/[/]/x/", "f"],
        &["s,a/b,c/d,g", "f"],
        &["1a foo", "f"],
        &["$a\\", "-e", "trailer", "f"],
        &["-s", "-z", "--sandbox", "--posix", "--debug", "-n", "p", "f"],
        &["--exp=p", "f"],
        &["--follow-symlinks", "-n", "p", "f"],
        &["-l", "5", "l", "f"],
        &["-n", "p", "f", "-s"],
        &["-n", "--", "p", "-i"],
    ];
    for args in proven {
        assert_eq!(judge(args), Ok(()), "{args:?}");
    }
}

#[test]
fn writing_executing_or_unknown_scripts_are_not() {
    let refused: &[&[&str]] = &[
        &["-i", "s/a/b/", "f"],
        &["-i.bak", "s/a/b/", "f"],
        &["--in-place", "s/a/b/", "f"],
        &["-f", "script.sed", "f"],
        &["-n", "1s/.*/DATA/w /path/to/output-file", "/etc/hosts"],
        &["-n", "1e exec /bin/sh", "/etc/hosts"],
        &["s/x/y/e"],
        &["w out.txt"],
        &["1r /etc/shadow"],
        &["-n", "'1,200p'", "filename.txt"],
        &["s/x/y"],
        &["v"],
        &[],
    ];
    for args in refused {
        assert!(judge(args).is_err(), "{args:?}");
    }
}

#[test]
fn a_label_ends_where_gnu_sed_ends_it_and_the_next_command_is_judged() {
    // GNU sed ends a label at a blank, `;`, `}` or `#`: the rest is the next command.
    for script in [
        ":a e touch x",
        ":a\te touch x",
        ":a;e touch x",
        "{:a e touch x\n}",
        ":x w out",
        ":x\tW out",
        ":x r /etc/hosts",
        ":x R f",
        ":x s/a/b/e",
        ":x s/a/b/w out",
        "ba;:a e ls",
        "b a\n:a e ls",
        "t e ls",
        "T e ls",
        "b\te ls",
        "{b}\n1e ls",
        ":a#x\ne ls",
        "v 4.2 e ls",
    ] {
        assert!(judge(&["-n", script, "f"]).is_err(), "{script:?}");
    }
}

#[test]
fn dangerous_commands_are_refused_in_every_spelling() {
    for script in [
        "e",
        "e ls",
        "1e ls",
        "$!e ls",
        "0,/x/e ls",
        "1,+2e ls",
        "1~2e ls",
        "/x/I,/y/M e ls",
        "\\%x%e ls",
        "1 ! e ls",
        "w f",
        "W f",
        "w f;p",
        "1,2w f",
        "r f",
        "R f",
        "0r f",
        "s/x/y/e",
        "s/x/y/ e",
        "s/x/y/pe",
        "s/x/y/gpw f",
        "s/x/y/ w f",
        "sxaxbxe",
        "s;a;b;e",
        "s}a}b}e",
        "s#a#b#w f",
        "s/[/]/x/e",
        "s/[/]/x/w f",
        "y/a/b/;e ls",
        "a foo\ne ls",
        "a foo\\\nbar\ne ls",
        "i\\\nx\ne ls",
        "p;;;e ls",
        "p # c\ne ls",
        "1{p}\ne ls",
    ] {
        assert!(judge(&["-n", script, "f"]).is_err(), "{script:?}");
    }
}

#[test]
fn text_and_filenames_run_to_the_end_of_the_line() {
    // `a foo; e ls` is one text; `w f; e ls` writes the file `f; e ls`. Both are data, but a
    // newline ends them and what follows is a command.
    assert_eq!(judge(&["a foo; e ls", "f"]), Ok(()));
    assert!(judge(&["a foo\ne ls", "f"]).is_err());
    assert!(judge(&["a foo\\", "-e", "bar", "-e", "e ls", "f"]).is_err());
    assert_eq!(judge(&["a foo\\", "-e", "e ls", "f"]), Ok(()), "the backslash continues the text");
    assert_eq!(judge(&["a\\", "-e", "e ls", "f"]), Ok(()), "`a\\` takes the next -e as its text");
}

#[test]
fn in_place_editing_and_script_files_are_refused_in_every_spelling() {
    for args in [
        &["-ni", "p", "f"][..],
        &["-si", "p", "f"],
        &["-i.bak", "p", "f"],
        &["-Ei", "p", "f"],
        &["-n", "-i", "p", "f"],
        &["p", "f", "-i"],
        &["--in-place=.bak", "p", "f"],
        &["--in", "p", "f"],
        &["--in-pl", "p", "f"],
        &["-f", "s.sed", "f"],
        &["-nf", "s.sed", "f"],
        &["-fs.sed", "f"],
        &["--file=s.sed", "f"],
        &["--fi", "s.sed", "f"],
        &["-f", "-", "f"],
    ] {
        assert!(judge(args).is_err(), "{args:?}");
    }
}

#[test]
fn options_are_read_the_way_getopt_reads_them() {
    // An abbreviated --expression is still a script; an ambiguous or unknown option is refused.
    assert!(judge(&["--e=w out", "f"]).is_err());
    assert!(judge(&["--expr", "e ls", "f"]).is_err());
    assert!(judge(&["--s", "p", "f"]).is_err(), "ambiguous: --silent --sandbox --separate");
    assert!(judge(&["--f", "p", "f"]).is_err(), "ambiguous: --file --follow-symlinks");
    assert!(judge(&["--debug=x", "p", "f"]).is_err());
    assert!(judge(&["-x", "p", "f"]).is_err());
    // With POSIXLY_CORRECT, `sed 'e ls' -e p` runs `e ls`: the first operand is checked too.
    assert!(judge(&["e ls", "-e", "p"]).is_err());
    assert!(judge(&["w out", "--expression=p"]).is_err());
    // `-e` scripts given after the file names are still scripts (getopt permutes).
    assert!(judge(&["-n", "f", "-e", "w out"]).is_err());
    assert!(judge(&["-n", "f", "-ee ls"]).is_err());
}

#[test]
fn scripts_sed_would_refuse_are_not_proven() {
    for script in [
        "s/x/y",
        "s/[/x/",
        "y/a/bc/",
        "{p",
        "p}",
        "1!!p",
        "1,2,3p",
        "+3p",
        "0,5p",
        "b nowhere",
        "s/x/y/gg",
        "s/x/y/0",
        "l 5 p",
        "y/a/b/ p",
        "a",
        "s/é/e/",
    ] {
        assert!(judge(&["-n", script, "f"]).is_err(), "{script:?}");
    }
}
