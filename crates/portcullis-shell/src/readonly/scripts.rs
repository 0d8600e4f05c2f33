//! awk and jq programs given inline: read-only unless they can reach the shell, a file or the
//! environment.
//!
//! awk has no `eval`, so everything it can do outside printing goes through a few names and
//! operators: `system`, `getline`, output redirection (`>`, `|`), `close`, and the arrays that
//! expose the environment or rewrite the file list (`ENVIRON`, `ARGV`, `PROCINFO`, gawk's
//! `@load` and `/inet`). A program mentioning any of them is not proven; `>` also rules out
//! comparisons such as `$1 > 5`, which costs only a checker call. jq cannot write or run
//! anything, but `env` / `$ENV` print the environment (tokens!) and modules load code.

use super::flags::operands;

/// Words and characters that let an awk program escape printing its input.
const AWK_DENIED: &[&str] = &[
    "system", "getline", "close", "fflush", "ENVIRON", "PROCINFO", "ARGV", "ARGC", "SYMTAB", "FUNCTAB", ">",
    "|", "@", "/inet", "`",
];

/// `awk [-F fs] [-v var=val] 'program' [files]`.
pub(super) fn awk(args: &[String]) -> Result<(), String> {
    let mut iter = args.iter();
    let mut program = None;
    while let Some(a) = iter.next() {
        match a.as_str() {
            "--" => {
                program = iter.next();
                break;
            }
            "-F" | "-v" => {
                iter.next();
            }
            s if s.starts_with("-F") || s.starts_with("-v") => {}
            s if s.starts_with('-') && s.len() > 1 => return Err(format!("awk option {s}")),
            _ => {
                program = Some(a);
                break;
            }
        }
    }
    let program = program.ok_or("awk without an inline program")?;
    match AWK_DENIED.iter().find(|d| program.contains(*d)) {
        Some(d) => Err(format!("awk program uses {d}")),
        None => Ok(()),
    }
}

/// `jq [options] filter [files]`.
pub(super) fn jq(args: &[String]) -> Result<(), String> {
    const DENIED_OPTIONS: &[&str] = &["-f", "--from-file", "-L", "--library-path"];
    if let Some(a) = args.iter().find(|a| DENIED_OPTIONS.iter().any(|d| a.starts_with(d))) {
        return Err(format!("jq {a} loads a program from a file"));
    }
    if args.iter().any(|a| a.to_lowercase().contains("env")) {
        return Err("jq reads the environment".into());
    }
    let filter = operands(args, "", &["arg", "argjson", "slurpfile", "rawfile", "indent"]);
    match filter.first() {
        Some(f) if f.contains("import") || f.contains("include") => Err("jq filter loads a module".into()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn printing_awk_programs_are_proven_escapes_are_not() {
        for args in [
            v(&["{print $1}"]),
            v(&["-F:", "{print $1}", "/etc/hosts"]),
            v(&["-F", ",", "-v", "n=2", "NR==n {print}", "f.csv"]),
            v(&["{ s += $2 } END { print s }"]),
        ] {
            assert_eq!(awk(&args), Ok(()), "{args:?}");
        }
        for args in [
            v(&["BEGIN{system(\"sh\")}"]),
            v(&["BEGIN { print \"DATA\" > \"/path/to/output-file\" }"]),
            v(&["{ print | \"sh\" }"]),
            v(&["BEGIN { while ((getline l < \"/etc/shadow\") > 0) print l }"]),
            v(&["BEGIN { print ENVIRON[\"TOKEN\"] }"]),
            v(&["BEGIN { ARGV[1] = \"/etc/shadow\"; ARGC = 2 } { print }"]),
            v(&["-f", "script.awk", "Cargo.toml"]),
            v(&["--load", "x", "{print}"]),
            v(&["@load \"filefuncs\"; {print}"]),
            v(&[]),
        ] {
            assert!(awk(&args).is_err(), "{args:?}");
        }
    }

    #[test]
    fn jq_filters_without_environment_or_modules_are_proven() {
        for args in [v(&[".name", "package.json"]), v(&["-r", "--arg", "k", "v", ".[$k]"])] {
            assert_eq!(jq(&args), Ok(()), "{args:?}");
        }
        for args in [
            v(&["-n", "env"]),
            v(&["$ENV.TOKEN"]),
            v(&["-f", "prog.jq"]),
            v(&["-L", "/tmp", "import \"x\" as x; ."]),
            v(&["include \"x\"; ."]),
        ] {
            assert!(jq(&args).is_err(), "{args:?}");
        }
    }
}
