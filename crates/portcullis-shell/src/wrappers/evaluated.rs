//! Code that arrives in arguments: builtins that run strings (`eval`, `trap`, `alias`, and those
//! that evaluate array subscripts such as `unset 'a[$(cmd)]'`), and programs that run argv lists
//! of their own (`find -exec`, `fd -x`). The strings are handed back for recursive analysis, the
//! argv lists as commands, so deny rules see what these would run.

use super::Unwrapped;
use crate::word::Word;
use crate::{builtins, zsh};
use crate::{Dialect, Opacity};

/// Builtins that run strings as code: `eval`, `trap`, `alias`; those that run code they do not
/// show (`source`, `fc`); and those that evaluate array subscripts or arithmetic in their
/// arguments (`unset 'a[$(cmd)]'`, see [`builtins`]).
pub(super) fn strings(name: &str, args: &[Word], shell: Dialect, out: &mut Unwrapped) {
    let mut inner_wrappers = out.wrappers.clone();
    inner_wrappers.push(name.to_string());
    let before = out.scripts.len();
    match name {
        "eval" => {
            out.opaque.push(Opacity::Eval);
            if !args.is_empty() && args.iter().all(|a| !a.dynamic) {
                let joined: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
                out.scripts.push(joined.join(" "));
            }
        }
        "trap" => {
            let operands: Vec<&Word> =
                args.iter().skip_while(|a| a.text.starts_with('-') && a.text != "-").collect();
            if let [action, _signal, ..] = operands.as_slice() {
                if !matches!(action.text.as_str(), "" | "-") {
                    out.opaque.push(Opacity::Eval);
                    if !action.dynamic {
                        out.scripts.push(action.text.clone());
                    }
                }
            }
        }
        "alias" => {
            for arg in args {
                if let Some((alias, value)) = arg.text.split_once('=') {
                    out.defines.push(alias.to_string());
                    out.scripts.push(value.to_string());
                }
            }
            if !out.defines.is_empty() {
                out.opaque.push(Opacity::Eval);
            }
        }
        _ => {}
    }
    if let Some(why) = builtins::runs_hidden_code(name, args, shell) {
        let _ = why; // the reason is for the table in `builtins`; the opacity says it all
        out.opaque.push(Opacity::Eval);
    }
    // zsh glob qualifiers run a command line per matching file: `ls *(e:'rm x':)`.
    if shell == Dialect::Zsh {
        for arg in args.iter().filter(|a| a.text.contains('(')) {
            let (runs, code) = zsh::qualifier_code(&arg.text);
            if runs {
                out.opaque.push(Opacity::Eval);
                out.scripts.extend(code);
            }
        }
    }
    // Names and arithmetic the builtin evaluates: `printf -v 'a[$(rm x)]'`, `let 'a[$(rm x)]'`.
    let evaluated = builtins::evaluation(name, args, shell);
    if evaluated.code {
        out.opaque.push(Opacity::Eval);
    }
    if evaluated.dynamic {
        out.opaque.push(Opacity::DynamicWord);
    }
    out.scripts.extend(evaluated.substitutions);
    out.opaque.dedup();
    if out.scripts.len() > before {
        out.script_wrappers = inner_wrappers;
    }
}

/// The argv lists a program runs per match: `find … -exec cmd {} ;`, `fd -x cmd`.
pub(super) fn argv_lists(name: &str, args: &[Word]) -> Vec<Vec<Word>> {
    let starts: &[&str] = match name {
        "find" => &["-exec", "-execdir", "-ok", "-okdir"],
        "fd" | "fdfind" => &["-x", "--exec", "-X", "--exec-batch"],
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if starts.contains(&arg.text.as_str()) {
            let argv: Vec<Word> =
                iter.by_ref().take_while(|w| w.text != ";" && w.text != "+").cloned().collect();
            if !argv.is_empty() {
                out.push(argv);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::word::{decode, Word};
    use crate::wrappers::{unwrap, Unwrapped};
    use crate::{Dialect, Opacity};

    fn run(line: &str) -> Unwrapped {
        unwrap(line.split_whitespace().map(decode).collect(), Dialect::Bash)
    }

    #[test]
    fn eval_like_builtins_hand_back_their_code_and_stay_opaque() {
        let cases = [
            (vec!["eval", "rm -rf /"], vec!["rm -rf /"]),
            (vec!["eval", "rm", "-rf", "/"], vec!["rm -rf /"]),
            (vec!["trap", "rm -rf x", "EXIT"], vec!["rm -rf x"]),
            (vec!["alias", "ls=rm -rf"], vec!["rm -rf"]),
            (vec!["unset", "a[$(rm x)]"], vec!["rm x"]),
        ];
        for (argv, scripts) in cases {
            let u = unwrap(argv.iter().map(|s| Word::literal(s)).collect(), Dialect::Bash);
            assert_eq!(u.scripts, scripts, "{argv:?}");
            assert!(u.opaque.contains(&Opacity::Eval), "{argv:?}");
            assert_eq!(u.script_wrappers, [argv[0]]);
            assert_eq!(u.words.len(), argv.len(), "the builtin itself stays");
        }
        assert_eq!(run("alias ls=x").defines, ["ls"]);
        assert!(run("trap - EXIT").opaque.is_empty());
    }
    #[test]
    fn find_and_fd_actions_are_returned_as_commands() {
        let u = run("find . -name x -exec rm -f {} ; -execdir sh -c x +");
        let argvs: Vec<Vec<&str>> =
            u.embedded.iter().map(|a| a.iter().map(|w| w.text.as_str()).collect()).collect();
        assert_eq!(argvs, [vec!["rm", "-f", "{}"], vec!["sh", "-c", "x"]]);
        assert_eq!(run("fd -e rs -x rm").embedded.len(), 1);
        assert!(run("find . -name x").embedded.is_empty());
    }
}
