//! Which programs run code they are handed, and which of those we can read.
//!
//! A shell fed a script on stdin or a here-document runs that script, so its program is not in
//! its argv: the walker either parses the script (for the POSIX-family shells our parser
//! understands) or marks the segment opaque (Python, Node, fish …).

/// Shells whose `-c` strings and stdin scripts are bash-compatible enough to parse.
pub(crate) fn is_parsable_shell(program: &str) -> bool {
    matches!(program, "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash" | "rbash")
}

/// Shells with their own syntax: their scripts cannot be parsed here.
fn is_foreign_shell(program: &str) -> bool {
    matches!(
        program,
        "csh" | "tcsh" | "fish" | "nu" | "xonsh" | "elvish" | "pwsh" | "powershell" | "rc" | "es"
    )
}

/// Programs that run code read from their stdin when given no script operand.
pub(crate) fn is_interpreter(program: &str) -> bool {
    is_parsable_shell(program)
        || is_foreign_shell(program)
        || program.starts_with("python")
        || program.starts_with("pypy")
        || program.starts_with("ruby")
        || program.starts_with("perl")
        || program.starts_with("php")
        || program.starts_with("lua")
        || matches!(
            program,
            "node"
                | "nodejs"
                | "deno"
                | "bun"
                | "irb"
                | "julia"
                | "Rscript"
                | "R"
                | "osascript"
                | "tclsh"
                | "wish"
                | "expect"
                | "guile"
                | "racket"
                | "sbcl"
                | "ghci"
                | "scala"
                | "groovy"
                | "jshell"
                | "gdb"
                | "sqlite3"
                | "psql"
                | "mysql"
                | "bc"
                | "dc"
        )
}

/// Paths that name the standard input.
fn is_stdin_path(a: &str) -> bool {
    matches!(a, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0")
}

/// Whether `program args` would read its program from stdin: an interpreter with no operand
/// (or `-`, `/dev/stdin`) and no inline-code flag such as `-c` / `-e`; `source /dev/stdin`.
pub(crate) fn reads_program_from_stdin(program: &str, args: &[String]) -> bool {
    if matches!(program, "source" | ".") {
        return args.first().is_some_and(|a| is_stdin_path(a));
    }
    if !is_interpreter(program) {
        return false;
    }
    let inline = |c: char| match c {
        'c' | 'e' | 'E' | 'm' => true,
        'r' => program.starts_with("php"),
        'p' => program.starts_with("node"),
        _ => false,
    };
    let inline_flag = |a: &str| {
        (a.starts_with('-') && !a.starts_with("--") && a.len() > 1 && a[1..].chars().any(inline))
            || matches!(a, "--eval" | "--print" | "--command")
    };
    if args.iter().any(|a| inline_flag(a)) {
        return false;
    }
    let shell_stdin = is_parsable_shell(program) && args.iter().any(|a| a == "-s");
    match args.iter().find(|a| !a.starts_with(['-', '+']) || is_stdin_path(a)) {
        None => true,
        Some(first) => shell_stdin || is_stdin_path(first),
    }
}

/// Programs that run another command but whose options we do not model: never unwrapped.
pub(crate) fn is_opaque_runner(program: &str) -> bool {
    matches!(
        program,
        "watch"
            | "flock"
            | "setsid"
            | "taskset"
            | "chrt"
            | "unshare"
            | "chroot"
            | "nsenter"
            | "strace"
            | "ltrace"
            | "valgrind"
            | "rlwrap"
            | "script"
            | "su"
            | "runuser"
            | "sg"
            | "pkexec"
            | "firejail"
            | "torsocks"
            | "proxychains"
            | "proxychains4"
            | "systemd-run"
            | "start-stop-daemon"
            | "parallel"
            | "catchsegv"
            | "caffeinate"
            | "screen"
            | "tmux"
            | "sudoedit"
    ) || is_foreign_shell(program)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn interpreters_without_a_script_read_stdin() {
        let cases = [
            ("sh", "", true),
            ("bash", "-", true),
            ("bash", "-s foo", true),
            ("python3", "", true),
            ("python3", "-u", true),
            ("python3", "script.py", false),
            ("python3", "-c print(1)", false),
            ("node", "-e x", false),
            ("ruby", "-w", true),
            ("php", "-r x", false),
            ("bash", "/dev/stdin", true),
            ("source", "/dev/stdin", true),
            (".", "/dev/fd/0", true),
            ("source", "x.sh", false),
            ("ls", "", false),
        ];
        for (program, a, want) in cases {
            assert_eq!(reads_program_from_stdin(program, &args(a)), want, "{program} {a}");
        }
    }
}
