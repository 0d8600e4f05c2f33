//! What each shell builtin does with its arguments beyond reading them as data: which are
//! variable NAMES (their subscripts are evaluated, `$(…)` included), which are ARITHMETIC, which
//! are CODE. Classified from bash's builtins/*.def, test.c, arrayfunc.c and expr.c, zsh's
//! manual, and checked against the real shells (tests/differential in this crate).
//!
//! | builtin (bash)                         | names                        | arithmetic | code |
//! |----------------------------------------|------------------------------|------------|------|
//! | `printf`                               | `-v NAME` (`-vNAME`)         |            |      |
//! | `read`                                 | operands, `-a NAME`          |            |      |
//! | `mapfile` / `readarray`                | the array operand            |            | `-C` |
//! | `declare` `typeset` `local` `export` `readonly` | every `NAME[=VALUE]`, `-n` targets | values of `-i` | |
//! | `unset`                                | operands                     |            |      |
//! | `test` / `[`                           | the operand of `-v`, `-R`    |            |      |
//! | `[[ ]]` (walk.rs)                      | the operand of `-v`, `-R`    | operands of `-eq` … `-ge` | |
//! | `wait`                                 | `-p NAME`                    |            |      |
//! | `getopts`                              | the name operand             |            |      |
//! | `let`, `(( ))`, `for (( ))`, `$(( ))`  |                              | all        |      |
//! | `compgen`                              | `-V NAME`                    |            | `-C` `-F` `-W` |
//! | `complete`                             |                              |            | `-C` `-F` `-W` |
//! | `eval`, `trap`, `alias` (wrappers)     |                              |            | their strings |
//! | `source` / `.`, `fc` (not `-l`), `bind`, `enable -f` |                |            | a file, history, key bindings, a .so |
//! | everything else (`echo` `cd` `pwd` `type` `hash` `kill` `shift` `exit` `ulimit` …) | | | only print or take plain numbers |
//!
//! zsh adds: `printf`'s operands and `shift`, `return`, `exit`, `break`, `continue` are
//! arithmetic; `print -v NAME`; `read -A NAME`; `integer`, `float`, `private` declare;
//! `vared` and `zparseopts` take names; `r`, `autoload`, `zmodload`, `functions`, `sched`, `zle`,
//! `bindkey`, `zstyle`, `emulate`, `compctl` run or load code.

use super::subscript::{self, Evaluation};
use super::word::Word;
use super::Dialect;

/// How a builtin reads its operands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Operands {
    /// Plain data.
    Data,
    /// Variable names.
    Names,
    /// `NAME[=VALUE]` of a declaration: the name, and a value that may be a name (`-n`), an
    /// array (`-a`) or arithmetic (`-i`).
    Declarations,
    /// Arithmetic expressions.
    Arithmetic,
    /// The second operand is a name (`getopts optstring name`).
    SecondName,
}

/// A builtin's option grammar (bash's `internal_getopt`: options first, `--` ends them).
struct Spec {
    /// Option letters that take a value (`-v NAME` or `-vNAME`).
    valued: &'static str,
    /// Valued letters whose value is a variable name.
    names: &'static str,
    /// Valued letters whose value is code (`mapfile -C`, `compgen -F`).
    code: &'static str,
    operands: Operands,
    /// Operands after the first one are arithmetic (zsh's `printf` format, then numbers).
    arithmetic_after_first: bool,
}

const fn spec(valued: &'static str, names: &'static str, operands: Operands) -> Spec {
    Spec { valued, names, code: "", operands, arithmetic_after_first: false }
}

fn lookup(program: &str, shell: Dialect) -> Option<Spec> {
    let zsh = shell == Dialect::Zsh;
    Some(match program {
        "printf" if zsh => Spec { arithmetic_after_first: true, ..spec("v", "v", Operands::Data) },
        "printf" => spec("v", "v", Operands::Data),
        "print" if zsh => Spec { arithmetic_after_first: true, ..spec("vfCRuxX", "v", Operands::Data) },
        "read" if zsh => spec("AdkuptC", "A", Operands::Names),
        "read" => spec("adinNptu", "a", Operands::Names),
        "mapfile" | "readarray" => Spec { code: "C", ..spec("dnOsuCc", "", Operands::Names) },
        "declare" | "typeset" | "local" | "export" | "readonly" => spec("", "", Operands::Declarations),
        "integer" | "float" | "private" if zsh => spec("", "", Operands::Declarations),
        "unset" | "vared" => spec("", "", Operands::Names),
        "wait" => spec("p", "p", Operands::Data),
        "getopts" => spec("", "", Operands::SecondName),
        "let" => spec("", "", Operands::Arithmetic),
        "shift" | "return" | "exit" | "break" | "continue" if zsh => spec("", "", Operands::Arithmetic),
        "compgen" => Spec { code: "CFW", ..spec("AabcdefgjksuvoCFGPSWXV", "V", Operands::Data) },
        "complete" => Spec { code: "CFW", ..spec("AbcdefgjksuvoCFGPSWXVDEI", "", Operands::Data) },
        "zparseopts" if zsh => spec("AFKDEMa", "A", Operands::Names),
        _ => return None,
    })
}

/// What `program args` evaluates beyond its words, under `shell`.
pub(crate) fn evaluation(program: &str, args: &[Word], shell: Dialect) -> Evaluation {
    let mut out = Evaluation::default();
    if matches!(program, "test" | "[") {
        for pair in args.windows(2) {
            if matches!(pair[0].text.as_str(), "-v" | "-R") {
                out.merge(name_word(&pair[1]));
            }
        }
        return out;
    }
    let Some(spec) = lookup(program, shell) else {
        return out;
    };
    let mut i = 0;
    let mut letters = String::new();
    while let Some(arg) = args.get(i) {
        let t = arg.text.as_str();
        if arg.dynamic {
            // A word in option position we cannot read could be any option, a name-taking one
            // included (`printf "$o" 'a[$(cmd)]'` with o=-v): every argument may be a name.
            out.merge(Evaluation::unknown());
            for word in args {
                out.merge(name_word(word));
            }
        }
        if t == "--" {
            i += 1;
            break;
        }
        if t.len() < 2
            || !(t.starts_with('-') || (t.starts_with('+') && spec.operands == Operands::Declarations))
        {
            break;
        }
        i += 1;
        letters.push_str(&t[1..]);
        for (at, letter) in t.char_indices().skip(1) {
            if !spec.valued.contains(letter) {
                continue;
            }
            let inline = &t[at + letter.len_utf8()..];
            let value = match inline.is_empty() {
                true => {
                    i += 1;
                    args.get(i - 1).map(|w| (w.text.as_str(), w.dynamic))
                }
                false => Some((inline, arg.dynamic)),
            };
            if let Some((text, dynamic)) = value {
                if spec.names.contains(letter) {
                    out.merge(subscript::name(text));
                    if dynamic {
                        out.merge(Evaluation::unknown());
                    }
                }
                if spec.code.contains(letter) {
                    out.merge(code_value(letter, text, dynamic));
                }
            }
            break;
        }
    }
    let operands = args.get(i..).unwrap_or(&[]);
    for (n, word) in operands.iter().enumerate() {
        let evaluation = match spec.operands {
            _ if spec.arithmetic_after_first && n > 0 => arithmetic_word(word),
            Operands::Data => continue,
            Operands::Names => name_word(word),
            Operands::Declarations => declaration(word, &letters),
            Operands::SecondName if n == 1 => name_word(word),
            Operands::SecondName => continue,
            Operands::Arithmetic => arithmetic_word(word),
        };
        out.merge(evaluation);
    }
    out
}

/// The value of a code-taking option: `-C 'cmd'` is a command line (returned for analysis),
/// `-W 'words'` is expanded (its substitutions run), `-F func` calls a function.
fn code_value(letter: char, text: &str, dynamic: bool) -> Evaluation {
    let mut out = Evaluation { code: true, dynamic, ..Evaluation::default() };
    match letter {
        'C' if !dynamic => out.substitutions.push(text.to_string()),
        'W' => out.substitutions = crate::word::decode(text).substitutions,
        _ => {}
    }
    out
}

/// A name operand; a name only known at run time could hold any subscript.
fn name_word(word: &Word) -> Evaluation {
    let mut out = subscript::name(&word.text);
    if word.dynamic {
        out.merge(Evaluation::unknown());
    }
    out
}

/// `NAME[=VALUE]`: the name as a name; the value as a name for `-n`, as arithmetic for `-i`,
/// as subscripted keys for `-a` / `-A` (`([k]=v)`), and otherwise as a value a later command
/// may evaluate.
fn declaration(word: &Word, letters: &str) -> Evaluation {
    if word.dynamic {
        return Evaluation::unknown();
    }
    let text = word.text.as_str();
    let Some(eq) = assignment_sign(text) else {
        return subscript::name(text);
    };
    let (name, value) = (&text[..eq], &text[eq + 1..]);
    let mut out = subscript::name(name);
    out.merge(subscript::value(value));
    if letters.contains(['n', 'a', 'A']) || value.starts_with('(') {
        out.merge(subscript::name(value));
    }
    if letters.contains('i') {
        out.merge(subscript::arithmetic(value));
    }
    out
}

/// The `=` (or `+=`'s `=`) after a name and its subscript.
fn assignment_sign(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'[' => depth += 1,
            b']' => depth = depth.saturating_sub(1),
            b'=' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// An arithmetic operand: the text after the shell's expansion is evaluated again.
fn arithmetic_word(word: &Word) -> Evaluation {
    let mut evaluation = subscript::arithmetic(&word.text);
    evaluation.dynamic |= word.dynamic;
    evaluation
}

/// Builtins that run code they do not show (a file, history, a key binding, a loaded module),
/// beyond `eval`, `trap` and `alias`, whose strings the wrappers hand back.
pub(crate) fn runs_hidden_code(program: &str, args: &[Word], shell: Dialect) -> Option<&'static str> {
    let has = |flag: &str| args.iter().any(|a| a.text == flag);
    let letter = |c: char| {
        args.iter().any(|a| a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains(c))
    };
    match program {
        "source" | "." if !args.is_empty() => Some("runs a file"),
        "fc" if !letter('l') => Some("runs commands from history"),
        "bind" if !args.is_empty() => Some("binds keys to commands"),
        "enable" if letter('f') => Some("loads a builtin from a shared object"),
        "mapfile" | "readarray" if letter('C') => Some("runs a callback per line"),
        _ if shell != Dialect::Zsh => None,
        "r" => Some("runs commands from history"),
        "autoload" | "zmodload" | "zcompile" if !args.is_empty() => Some("loads code"),
        "functions" if !args.is_empty() => Some("defines or changes functions"),
        "sched" | "zle" | "compctl" if !args.is_empty() => Some("runs code later"),
        "bindkey" if has("-s") => Some("binds keys to input"),
        "zstyle" if letter('e') => Some("evaluates a style"),
        "emulate" if letter('c') => Some("runs code in an emulation"),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
