//! `sh [options] -c 'script'`: which shell options leave the script's meaning alone.
//!
//! A shell's options can change what its script does before a word of it runs: `-i` reads
//! `~/.bashrc` (or `--rcfile /dev/stdin`), `-l` / `--login` read the profiles, `-k` turns every
//! `NAME=value` word into an environment variable (`bash -k -c 'git log GIT_PAGER=…'`), `-O` /
//! `+O` set `shopt` options, `+B` stops brace expansion, `-o posix` … So only a short list of
//! options is transparent: `-c`, `-e`, `-u`, `-x`, `-v`, `-f`, `-C`, `-o` with one of the
//! matching names, `--norc`, `--noprofile`. Anything else still hands back the script (deny
//! rules must see its commands) but marks every command in it [`Opacity::ShellOption`].
//!
//! [`Opacity::ShellOption`]: crate::Opacity::ShellOption

use super::Peel;
use crate::word::Word;

/// `-o NAME` options that change nothing about which commands run or with which words.
const HARMLESS_O: &[&str] = &["errexit", "nounset", "pipefail", "noglob", "xtrace", "verbose", "noclobber"];

/// Short options that change nothing about which commands run or with which words.
const HARMLESS_SHORT: &str = "euxvfC";

pub(super) fn shell(name: &str, args: &[Word]) -> Peel {
    let mut i = 0;
    let mut command_string = false;
    let mut risky: Option<String> = None;
    let mut note = |why: String| {
        risky.get_or_insert(why);
    };
    while let Some(arg) = args.get(i) {
        let t = arg.text.as_str();
        if !arg.is_literal() && (t.starts_with(['-', '+']) || !command_string) {
            // Could be any option, `-c` included, or several.
            note(format!("{name} with a non-literal option"));
            i += 1;
            continue;
        }
        if !t.starts_with(['-', '+']) || t.len() < 2 {
            if t == "-" {
                i += 1;
            }
            break;
        }
        i += 1;
        if t == "--" {
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            match long {
                "norc" | "noprofile" => {}
                "rcfile" | "init-file" => {
                    note(format!("{name} --{long} reads a start-up file"));
                    i += 1;
                }
                _ => note(format!("{name} option --{long}")),
            }
            continue;
        }
        let sign = &t[..1];
        for c in t[1..].chars() {
            match c {
                'c' if sign == "-" => command_string = true,
                'o' | 'O' => {
                    let value = args.get(i).map(|w| w.text.as_str());
                    i += 1;
                    let harmless = c == 'o'
                        && sign == "-"
                        && args.get(i - 1).is_some_and(Word::is_literal)
                        && value.is_some_and(|v| HARMLESS_O.contains(&v));
                    if !harmless {
                        note(format!("{name} {sign}{c} {}", value.unwrap_or("")));
                    }
                }
                _ if sign == "-" && HARMLESS_SHORT.contains(c) => {}
                _ => note(format!("{name} option {sign}{c}")),
            }
        }
    }
    // `-o` at the very end counts a value that is not there.
    let i = i.min(args.len());
    if !command_string {
        let Some(why) = risky else {
            // A script file or stdin: the walker deals with stdin scripts.
            return Peel::Terminal;
        };
        // An option not modelled may have taken the next word as its value (`mksh -T x -c …`):
        // a `-c` further on may still be live.
        let later = args[i..]
            .iter()
            .position(|w| w.text.starts_with('-') && !w.text.starts_with("--") && w.text[1..].contains('c'));
        return match later {
            Some(at) => Peel::Script {
                scripts: args[i + at + 1..]
                    .iter()
                    .filter(|w| !w.dynamic && !w.text.starts_with('-'))
                    .map(|w| w.text.clone())
                    .collect(),
                opaque: Some(why),
            },
            None => Peel::Opaque(why),
        };
    }
    match args.get(i) {
        // An option not modelled may take a value we took for the script: then every literal
        // word left could be the script, and deny rules should see them all.
        Some(w) if !w.dynamic && risky.is_some() => Peel::Script {
            scripts: args[i..].iter().filter(|w| !w.dynamic).map(|w| w.text.clone()).collect(),
            opaque: risky,
        },
        Some(w) if !w.dynamic => Peel::Script { scripts: vec![w.text.clone()], opaque: None },
        Some(_) => Peel::Opaque(format!("{name} -c with a non-literal command string")),
        None => Peel::Opaque(format!("{name} -c without a command string")),
    }
}

#[cfg(test)]
mod tests {
    use crate::word::Word;
    use crate::wrappers::unwrap;
    use crate::Opacity;

    fn run(argv: &[&str]) -> crate::wrappers::Unwrapped {
        unwrap(argv.iter().map(|s| Word::literal(s)).collect(), crate::Dialect::Bash)
    }

    #[test]
    fn harmless_options_unwrap_transparently() {
        let cases: &[&[&str]] = &[
            &["bash", "-c", "ls"],
            &["sh", "-e", "-c", "ls"],
            &["bash", "-ec", "ls"],
            &["bash", "-euxc", "ls"],
            &["bash", "-o", "pipefail", "-c", "ls"],
            &["bash", "--norc", "--noprofile", "-c", "ls"],
            &["dash", "-fC", "-c", "ls"],
            &["zsh", "-c", "ls", "arg0", "arg1"],
            &["bash", "-c", "--", "ls"],
            &["bash", "-c", "ls", "-x"],
        ];
        for argv in cases {
            let u = run(argv);
            assert_eq!(u.scripts, ["ls"], "{argv:?}");
            assert!(u.opaque.is_empty(), "{argv:?}: {:?}", u.opaque);
        }
    }

    #[test]
    fn other_options_still_hand_back_the_script_but_mark_it() {
        let cases: &[&[&str]] = &[
            &["bash", "--rcfile", "/dev/stdin", "-ic", "true"],
            &["bash", "--init-file", "x", "-c", "true"],
            &["bash", "-k", "-c", "true"],
            &["bash", "-kc", "true"],
            &["bash", "-i", "-c", "true"],
            &["bash", "-lc", "true"],
            &["bash", "--login", "-c", "true"],
            &["bash", "-O", "extglob", "-c", "true"],
            &["bash", "+O", "extglob", "-c", "true"],
            &["bash", "-o", "keyword", "-c", "true"],
            &["bash", "-o", "posix", "-c", "true"],
            &["bash", "+o", "pipefail", "-c", "true"],
            &["bash", "+B", "-c", "true"],
            &["bash", "-s", "-c", "true"],
            &["bash", "--debugger", "-c", "true"],
            &["bash", "--posix", "-c", "true"],
            &["bash", "--version", "-c", "true"],
            &["sh", "-a", "-c", "true"],
            &["zsh", "-o", "globsubst", "-c", "true"],
            &["ksh", "-p", "-c", "true"],
            &["mksh", "-T", "x", "-c", "true"],
            &["bash", "-h", "-c", "true"],
        ];
        for argv in cases {
            let u = run(argv);
            assert!(u.scripts.iter().any(|s| s == "true"), "{argv:?}: {:?}", u.scripts);
            assert!(matches!(u.opaque[..], [Opacity::ShellOption(_)]), "{argv:?}: {:?}", u.opaque);
        }
        let dynamic = unwrap(
            vec![
                Word::literal("bash"),
                crate::word::decode("$O"),
                Word::literal("-c"),
                Word::literal("true"),
            ],
            crate::Dialect::Bash,
        );
        assert_eq!(dynamic.scripts, ["true"]);
        assert!(matches!(dynamic.opaque[..], [Opacity::ShellOption(_)]));
    }

    #[test]
    fn risky_options_without_a_command_string_are_opaque() {
        for argv in [&["bash", "-i"][..], &["bash", "--rcfile", "/dev/stdin"], &["sh", "-k", "x.sh"]] {
            assert!(matches!(run(argv).opaque[..], [Opacity::OpaqueWrapper(_)]), "{argv:?}");
        }
        assert!(run(&["bash", "x.sh"]).opaque.is_empty());
    }
}
