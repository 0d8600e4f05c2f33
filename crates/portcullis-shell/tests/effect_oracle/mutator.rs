//! Respells commands the way an attacker would, seeded and deterministic: GNU long-option
//! abbreviations, `--opt=v` / `--opt v` / glued `-ov`, cluster reorderings, options after
//! operands, `--`, path spellings (`//`, `/./`, `..`, trailing `/.`, `~` forms, relative after
//! `cd`), quoting forms, redirections, brace expansion and globs that match the word.
//!
//! Meaning need not survive a respelling: whatever line comes out, if the analyzer proves it
//! read-only, it must be.

use std::collections::BTreeMap;

use crate::lines::{quote, Seed, Segment, Word};
use crate::sandbox::PROJECT;

/// A small seeded generator (the same line list on every run for a given seed).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        if n == 0 {
            0
        } else {
            ((self.0 >> 33) % n as u64) as usize
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() {
            None
        } else {
            Some(&items[self.below(items.len())])
        }
    }
}

/// Each program's long options (without `--`), as its own `--help` lists them.
pub type LongOptions = BTreeMap<String, Vec<String>>;

/// Every unique abbreviation of `--name` among `options`: the prefixes no other option shares
/// (the full name included).
pub fn unique_prefixes(name: &str, options: &[String]) -> Vec<String> {
    (1..=name.len())
        .filter(|&n| name.is_char_boundary(n))
        .map(|n| &name[..n])
        .filter(|p| *p == name || options.iter().filter(|o| o.starts_with(p)).count() == 1)
        .map(String::from)
        .collect()
}

/// Every line that abbreviates one long option of `seed` to one of its unique prefixes.
pub fn abbreviations(seed: &Seed, options: &LongOptions) -> Vec<Seed> {
    let mut out = Vec::new();
    for (si, seg) in seed.iter().enumerate() {
        let Some(known) = program(seg).and_then(|p| options.get(p)) else { continue };
        for (wi, w) in seg.words.iter().enumerate() {
            let Word::Lit(text) = w else { continue };
            let Some(body) = text.strip_prefix("--") else { continue };
            let (name, value) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            if !known.iter().any(|o| o == name) {
                continue;
            }
            for prefix in unique_prefixes(name, known) {
                if prefix == name {
                    continue;
                }
                let mut s = seed.clone();
                s[si].words[wi] = Word::Lit(match value {
                    Some(v) => format!("--{prefix}={v}"),
                    None => format!("--{prefix}"),
                });
                out.push(s);
            }
        }
    }
    out
}

fn program(seg: &Segment) -> Option<&str> {
    match seg.words.first() {
        Some(Word::Lit(p)) => Some(p.as_str()),
        _ => None,
    }
}

/// Applies 1–3 random respellings to `seed`.
pub fn mutate(seed: &Seed, options: &LongOptions, rng: &mut Rng) -> Seed {
    let mut s = seed.clone();
    for _ in 0..1 + rng.below(3) {
        let si = rng.below(s.len());
        respell(&mut s, si, options, rng);
    }
    s
}

fn respell(s: &mut Seed, si: usize, options: &LongOptions, rng: &mut Rng) {
    let n = s[si].words.len();
    if n == 0 {
        return;
    }
    // Word 0 is the program; most respellings work on the arguments.
    let wi = if n > 1 { 1 + rng.below(n - 1) } else { 0 };
    let words = &mut s[si].words;
    let text = match &words[wi] {
        Word::Lit(t) => t.clone(),
        Word::Raw(_) => return,
    };
    match rng.below(13) {
        0 => {
            // A long option abbreviated to a random unique prefix.
            if let (Some(body), Some(known)) =
                (text.strip_prefix("--"), program(&s[si]).and_then(|p| options.get(p)))
            {
                let (name, value) = body.split_once('=').map_or((body, None), |(a, b)| (a, Some(b)));
                if let Some(prefix) = rng.pick(&unique_prefixes(name, known)) {
                    let w = value.map_or(format!("--{prefix}"), |v| format!("--{prefix}={v}"));
                    s[si].words[wi] = Word::Lit(w);
                }
            }
        }
        1 => split_or_glue(words, wi, &text),
        2 => cluster(words, wi, &text, rng),
        3 => {
            // Options after operands (GNU permutes), or before them.
            let w = words.remove(wi);
            let at = 1 + rng.below(words.len());
            words.insert(at.min(words.len()), w);
        }
        4 => {
            let at = 1 + rng.below(words.len());
            words.insert(at.min(words.len()), Word::Lit("--".into()));
        }
        5 | 6 => {
            if let Some(w) = rng.pick(&path_forms(&text)) {
                words[wi] = w.clone();
            }
        }
        7 | 8 => {
            if let Some(w) = rng.pick(&quote_forms(&text)) {
                words[wi] = Word::Raw(w.clone());
            }
        }
        9 => redirect(words, wi, &text, rng),
        10 => {
            if let Some(w) = rng.pick(&brace_forms(&text)) {
                words[wi] = Word::Raw(w.clone());
            }
        }
        11 => {
            if let Some(w) = rng.pick(&glob_forms(&text)) {
                words[wi] = Word::Raw(w.clone());
            }
        }
        _ => cd_first(s, si, wi, &text, rng),
    }
}

/// Globs that match the word's file (when it exists): `.e*`, `.en?`, `.[e]nv`, `.git/c*g`.
pub fn glob_forms(text: &str) -> Vec<String> {
    if let Some(rest) = text.strip_prefix("~/") {
        return glob_forms(rest).into_iter().map(|g| format!("~/{g}")).collect();
    }
    if !text.is_ascii() || text.contains(['*', '?', '[', ']', '{', '}', '\'', ' ']) {
        return Vec::new();
    }
    // Only the last component: `*` never crosses a `/`.
    let (dir, base) = text.rsplit_once('/').map_or(("", text), |(d, b)| (d, b));
    let dir = if text.contains('/') { format!("{}/", quote(dir)) } else { String::new() };
    if base.len() < 2 {
        return Vec::new();
    }
    let (head, tail) = base.split_at(base.len() - 1);
    let mut out = vec![format!("{dir}{}*", quote(head)), format!("{dir}{}?", quote(head))];
    if base.len() > 2 {
        let (a, b) = base.split_at(1);
        let (c, d) = b.split_at(1);
        out.push(format!("{dir}{}[{c}]{}", quote(a), quote(d)));
        out.push(format!("{dir}{}*{}", quote(a), quote(tail)));
    }
    out
}

/// `--opt=v` ↔ `--opt v`; `-o v` → `-ov`; `-ov` → `-o v`.
fn split_or_glue(words: &mut Vec<Word>, wi: usize, text: &str) {
    if let Some((opt, value)) = text.split_once('=').filter(|_| text.starts_with("--")) {
        words[wi] = Word::Lit(opt.to_string());
        words.insert(wi + 1, Word::Lit(value.to_string()));
    } else if text.starts_with("--") {
        if let Some(Word::Lit(next)) = words.get(wi + 1).cloned() {
            words[wi] = Word::Lit(format!("{text}={next}"));
            words.remove(wi + 1);
        }
    } else if text.len() == 2 && text.starts_with('-') {
        if let Some(Word::Lit(next)) = words.get(wi + 1).cloned() {
            words[wi] = Word::Lit(format!("{text}{next}"));
            words.remove(wi + 1);
        }
    } else if text.len() > 2 && text.starts_with('-') && !text.starts_with("--") && text.is_char_boundary(2) {
        let (opt, value) = text.split_at(2);
        words[wi] = Word::Lit(opt.to_string());
        words.insert(wi + 1, Word::Lit(value.to_string()));
    }
}

/// Joins a short option with the next one (`-r -n` → `-rn`), or reorders a cluster.
fn cluster(words: &mut Vec<Word>, wi: usize, text: &str, rng: &mut Rng) {
    let short = |t: &str| t.len() >= 2 && t.starts_with('-') && !t.starts_with("--");
    if !short(text) {
        return;
    }
    if let Some(Word::Lit(next)) =
        words.get(wi + 1).cloned().filter(|w| matches!(w, Word::Lit(t) if short(t)))
    {
        words[wi] = Word::Lit(format!("{text}{}", &next[1..]));
        words.remove(wi + 1);
    } else if text.len() > 2 {
        let mut letters: Vec<char> = text[1..].chars().collect();
        let i = rng.below(letters.len());
        let j = rng.below(letters.len());
        letters.swap(i, j);
        words[wi] = Word::Lit(format!("-{}", letters.into_iter().collect::<String>()));
    }
}

/// Spellings of the same path: `./x`, `.//x`, `x/.`, `d//x`, `d/./x`, `d/../d/x`, through the
/// project's own name from its parent, and the `~` forms.
pub fn path_forms(text: &str) -> Vec<Word> {
    let lit = |s: String| Word::Lit(s);
    let mut out = Vec::new();
    if let Some(rest) = text.strip_prefix("~/") {
        out.push(lit(format!("~//{rest}")));
        out.push(lit(format!("~/./{rest}")));
        out.push(lit(format!("~/../home/{rest}")));
        out.push(Word::Raw(format!("$HOME/{}", quote(rest))));
        out.push(Word::Raw(format!("\"$HOME\"/{}", quote(rest))));
        out.push(Word::Raw(format!("${{HOME}}//{}", quote(rest))));
        out.push(lit(format!("../home/{rest}")));
        return out;
    }
    if text.starts_with('-') || text.is_empty() || text.contains('$') {
        return out;
    }
    if text.starts_with('/') {
        out.push(lit(format!("/{text}")));
        out.push(lit(format!("{text}/.")));
        return out;
    }
    out.push(lit(format!("./{text}")));
    out.push(lit(format!(".//{text}")));
    out.push(lit(format!("{text}/.")));
    out.push(lit(format!("../{PROJECT}/{text}")));
    out.push(lit(format!("src/../{text}")));
    if let Some((dir, file)) = text.rsplit_once('/') {
        out.push(lit(format!("{dir}//{file}")));
        out.push(lit(format!("{dir}/./{file}")));
        out.push(lit(format!("{dir}/../{dir}/{file}")));
    }
    out
}

/// Quoted spellings of a literal word: single, double, every byte escaped, `$'\xHH'`, split.
pub fn quote_forms(text: &str) -> Vec<String> {
    let mut out = vec![format!("'{}'", text.replace('\'', r"'\''"))];
    if !text.contains(['"', '$', '`', '\\', '!']) {
        out.push(format!("\"{text}\""));
    }
    if text.is_ascii() {
        out.push(text.chars().map(|c| format!("\\{c}")).collect());
        out.push(format!("$'{}'", text.bytes().map(|b| format!("\\x{b:02x}")).collect::<String>()));
        if text.len() > 1 {
            let (a, b) = text.split_at(text.len() / 2);
            out.push(format!("{}''{}", quote(a), quote(b)));
            out.push(format!("{}\"\"{}", quote(a), quote(b)));
        }
    }
    out
}

/// Brace expansions that yield the word: `{w,}`, `w{,}` (twice), `pre{fix,}` splits.
pub fn brace_forms(text: &str) -> Vec<String> {
    if text.is_empty() || !text.is_ascii() || text.contains(['{', '}', ',', '\'', ' ']) {
        return Vec::new();
    }
    let q = quote(text);
    let mut out = vec![format!("{{{q},}}"), format!("{q}{{,}}")];
    if text.len() > 2 {
        let (a, b) = text.split_at(text.len() / 2);
        out.push(format!("{}{{{},x}}", quote(a), quote(b)));
    }
    out
}

/// An operand read through a redirection instead: `< f`, `0<f`, `<>f`, `0<> f`.
fn redirect(words: &mut [Word], wi: usize, text: &str, rng: &mut Rng) {
    if text.starts_with('-') || text.is_empty() {
        return;
    }
    let forms = ["< ", "0<", "<>", "0<> "];
    let form = forms[rng.below(forms.len())];
    words[wi] = Word::Raw(format!("{form}{}", quote(text)));
}

/// A relative operand reached after a `cd`: `cat x` → `cd .. && cat acme-app/x`.
fn cd_first(s: &mut Seed, si: usize, wi: usize, text: &str, rng: &mut Rng) {
    if text.starts_with('-') || text.starts_with('/') || text.is_empty() {
        return;
    }
    let (dir, word) = match text.strip_prefix("~/") {
        Some(rest) => match rest.rsplit_once('/') {
            Some((d, f)) if rng.below(2) == 0 => (format!("~/{d}"), f.to_string()),
            _ => ("~".to_string(), rest.to_string()),
        },
        None if rng.below(2) == 0 => ("..".to_string(), format!("{PROJECT}/{text}")),
        None => ("src".to_string(), format!("../{text}")),
    };
    s[si].words[wi] = Word::Lit(word);
    let sep = std::mem::take(&mut s[si].sep);
    let joiner = if rng.below(3) == 0 { " ; " } else { " && " };
    s[si].sep = joiner.to_string();
    s.insert(si, Segment { sep, words: vec![Word::Lit("cd".into()), Word::Lit(dir)] });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lines::{render, seed};

    fn opts(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn unique_prefixes_stop_where_another_option_shares_them() {
        let grep = opts(&["directories", "devices", "dereference-recursive", "recursive", "regexp"]);
        assert_eq!(unique_prefixes("directories", &grep)[0], "di");
        assert_eq!(unique_prefixes("directories", &grep).last().map(String::as_str), Some("directories"));
        assert_eq!(
            unique_prefixes("recursive", &grep),
            ["rec", "recu", "recur", "recurs", "recursi", "recursiv", "recursive"]
        );
        assert_eq!(unique_prefixes("devices", &grep)[0], "dev");
    }

    #[test]
    fn abbreviations_respell_every_long_option_of_a_seed() {
        let mut table = LongOptions::new();
        table.insert("grep".into(), opts(&["directories", "devices", "recursive"]));
        let lines: Vec<String> =
            abbreviations(&seed("grep --directories=recurse KEY ."), &table).iter().map(render).collect();
        assert!(lines.contains(&"grep --di=recurse KEY .".to_string()), "{lines:?}");
        assert!(lines.contains(&"grep --directorie=recurse KEY .".to_string()), "{lines:?}");
        assert!(!lines.contains(&"grep --d=recurse KEY .".to_string()), "{lines:?}");
    }

    #[test]
    fn the_same_seed_gives_the_same_lines() {
        let table = LongOptions::new();
        let s = seed("grep -r -n KEY .env");
        let run = |n| {
            let mut rng = Rng::new(n);
            (0..50).map(|_| render(&mutate(&s, &table, &mut rng))).collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn glob_forms_expand_to_the_file_they_respell() {
        for w in [".env", ".git/config", "~/.netrc"] {
            for glob in glob_forms(w) {
                // In a scratch directory that is also HOME: expand the glob, print one per line.
                let line = format!(
                    "d=$(mktemp -d) && cd \"$d\" && HOME=\"$d\" && mkdir .git && touch .env .netrc .git/config \
                     && printf '%s\\n' {glob} | sed \"s|^$d/|~/|\"; rm -rf \"$d\""
                );
                let out = std::process::Command::new("/bin/bash")
                    .args(["--norc", "--noprofile", "-c", &line])
                    .output()
                    .expect("bash");
                let text = String::from_utf8_lossy(&out.stdout);
                assert!(text.lines().any(|l| l == w), "{glob} gave {text:?}");
            }
        }
    }

    #[test]
    fn quote_forms_are_words_bash_reads_back_to_the_same_text() {
        for w in [".env", "a b", "it's", "-d"] {
            for form in quote_forms(w) {
                let out = std::process::Command::new("/bin/bash")
                    .args(["--norc", "--noprofile", "-c", &format!("printf %s {form}")])
                    .output()
                    .expect("bash");
                assert_eq!(String::from_utf8_lossy(&out.stdout), w, "{form}");
            }
        }
    }
}
