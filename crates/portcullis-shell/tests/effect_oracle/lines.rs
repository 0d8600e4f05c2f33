//! The lines fed to the oracle: the corpus's lines, the red team's examples and their families,
//! and the seeds the mutator respells.
//!
//! Seeds are written in a small notation so the mutator knows each word: segments joined by
//! ` && `, ` || `, ` | ` or ` ; `; words split at spaces and taken literally (the renderer quotes
//! them as needed; `␣` stands for a space inside a word); a word starting with `!` is raw shell
//! text, never requoted (`!<<<`, `!.e*`); a word starting with `~` keeps its tilde unquoted.

use crate::sandbox::PROJECT;

/// One word of a seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word {
    /// A literal word (quote removal already done).
    Lit(String),
    /// Shell text as written.
    Raw(String),
}

/// One simple command of a seed and the operator before it (empty for the first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub sep: String,
    pub words: Vec<Word>,
}

pub type Seed = Vec<Segment>;

/// Parses the seed notation.
pub fn seed(text: &str) -> Seed {
    let mut out = Vec::new();
    let mut sep = String::new();
    let mut current = Vec::new();
    for token in text.split(' ').filter(|t| !t.is_empty()) {
        if matches!(token, "&&" | "||" | "|" | ";") {
            out.push(Segment { sep: std::mem::take(&mut sep), words: std::mem::take(&mut current) });
            sep = format!(" {token} ");
            continue;
        }
        current.push(match token.strip_prefix('!') {
            Some(raw) if !raw.is_empty() => Word::Raw(raw.to_string()),
            _ => Word::Lit(token.replace('␣', " ")),
        });
    }
    out.push(Segment { sep, words: current });
    out
}

/// Renders a seed as a shell line, quoting literal words only where bash needs it.
pub fn render(seed: &Seed) -> String {
    let mut line = String::new();
    for seg in seed {
        line.push_str(&seg.sep);
        let words: Vec<String> = seg.words.iter().map(render_word).collect();
        line.push_str(&words.join(" "));
    }
    line
}

pub fn render_word(w: &Word) -> String {
    match w {
        Word::Raw(r) => r.clone(),
        Word::Lit(s) => match s.strip_prefix('~') {
            Some("") => "~".to_string(),
            Some("/") => "~/".to_string(),
            Some(rest) if rest.starts_with('/') => format!("~/{}", quote(&rest[1..])),
            _ => quote(s),
        },
    }
}

/// Minimal quoting: bare when every byte is plain, else single quotes.
pub fn quote(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./=:,@%+-".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Lines run as written: the red team's examples.
pub fn red_team() -> Vec<String> {
    let p = PROJECT;
    let mut out: Vec<String> = [
        "printf '-va[$(touch pwned)]' x",
        "printf -v 'a[$(touch pwned)]' x",
        "read 'a[$(touch p)]' <<< x",
        "read -a 'a[$(touch p)]' <<< x",
        "mapfile 'a[$(touch p)]' < /dev/null",
        "grep -d rec KEY .",
        "grep --dir=recurse KEY .",
        "diff -rN . /nonexistent",
        "printf '\\x2e\\x65nv' | sort --fil=-",
        "printf '.env\\0' | wc --files0-from=-",
        "printf '.env\\0' | du --files0-from=- -b",
        "cat .git/config",
        "git config -l",
        "git remote -v",
        "git config --get remote.origin.url",
        "grep -r oauth_token ~/.config",
        "cat ~/.kaggle/kaggle.json",
        "cat ~/.claude.json",
        "jq --arg a b . data.json",
        "jq --rawfile a .env -n '$a'",
        "jq -n 'env'",
        "jq -n '$ENV'",
        "date -f .env",
        "sed -n 'e touch pwned' file.txt",
        "sed -n 'w out' file.txt",
        "sort -o out file.txt",
        "find . -fprint out",
        "find . -name .env",
        "rg --pre 'touch pwned' KEY",
        "less -o out file.txt",
        "git log --output=out",
        "git diff --output=out",
        "tree -o out",
        "cat /proc/self/environ",
        "env",
        "printenv",
        "echo ~/.ssh/id_rsa",
        "ls -la ~/.ssh",
        "grep -f .env file.txt",
        "cat < .env",
        "cat <> file.txt",
        "git show HEAD:.gitignore",
        "git grep -e KEY",
        "git -C .. status",
        "split file.txt",
        "file .env",
        "md5sum .env",
        // Globs meeting the file named `--files0-from=list`.
        "wc *",
        "wc -l *",
        "du *",
        "sort *",
        "wc -- *",
        "wc ./*",
        // The working directory, tracked through the line.
        "cd; cat .netrc",
        "cd && cat .claude.json",
        "pushd ~ && cat .netrc",
        "pushd ~/.ssh > /dev/null; cat id_rsa",
        "CDPATH=.. cd home && cat .netrc",
        "cd ~/.aws; cd -; cd -; cat credentials",
        "cd ../home || true; cat .netrc",
        "cd /nonexistent; cat .env",
        "cd .. ; cd acme-app/../home ; cat .claude.json",
        "cd ~/.ssh && cat ~+/id_rsa",
        "cd ~/.ssh; cd ..; cat ~-/id_rsa",
        "cd src && cd .. && cd .. && cat home/.netrc",
        "cd -P .. && cat home/.netrc",
        "cd docs/.. && cat .env",
        "(cd ~ && cat .netrc)",
        "{ cd ~; cat .netrc; }",
        // The environment's secret.
        "export -p",
        "declare -p",
        "declare -x",
        "set",
        "jq -n env.AWS_SECRET_ACCESS_KEY",
        "sort /proc/self/environ",
        "grep -a . /proc/self/environ",
        "strings /proc/self/environ",
        "tr '\\0' '\\n' < /proc/self/environ",
        "xargs -0 -a /proc/self/environ echo",
        "ps e",
        "ps eww",
        "git var -l",
        // A symlink the repository carries into the home directory.
        "cat docs/setup.txt",
        "head -n 5 docs/*",
        "grep -R KEY .",
        "grep -R KEY docs",
        "ls -lL docs",
        // Programs that run other programs from their options.
        "git grep -O'touch pwned' KEY",
        "git grep --open-files-in-pager='touch pwned' KEY",
        "git -c core.pager='touch pwned' log",
        "git -c alias.x='!touch pwned' x",
        "git log --ext-diff -p",
        "git diff --ext-diff",
        "git -c diff.external='touch pwned' diff --ext-diff HEAD",
        "git blame --contents .env README.md",
        "git archive -o out HEAD",
        "git bundle create out HEAD",
        "git --work-tree=../home status",
        "git --git-dir=.git --work-tree=.. ls-files",
        "git hook run pre-commit",
        "tar -cf - . --to-command='touch pwned'",
        "tar --checkpoint=1 --checkpoint-action=exec='touch pwned' -cf /dev/null .",
        "sort --compress-program=touch file.txt",
        "find . -exec touch pwned \\;",
        "find . -execdir touch pwned \\;",
        "find . -fprintf out x",
        "find . -fls out",
        "awk 'BEGIN{system(\"touch pwned\")}'",
        "awk '{print > \"out\"}' file.txt",
        "sed -n 's/x/y/w out' file.txt",
        "sed -i s/a/b/ file.txt",
        "xargs -a list touch",
        "xargs touch < list",
        "less '+!touch pwned' file.txt",
        "man -P 'touch pwned' ls",
        "env -S 'touch pwned'",
        "timeout 5 touch pwned",
        "nice touch pwned",
        "rg --pre=touch KEY",
        "rg --pre touch KEY",
        "jq -n 'input_filename'",
        "jq -n --rawfile a ~/.netrc '$a'",
        "jq . ~/.claude.json",
        "yq . ~/.kaggle/kaggle.json",
        "column ~/.netrc",
        "diff ~/.netrc /dev/null",
        "cmp -l ~/.netrc /dev/null",
        "git diff --no-index --stat ~/.ssh/id_rsa /dev/null",
        "git diff --no-index ~/.ssh/id_rsa /dev/null",
        "tail -c 100 ~/.aws/credentials",
        "head -c 100 ~/.config/gh/hosts.yml",
        "cat ~/.git-credentials",
        "cat ~/.netrc",
        "ls -la ~ && cat ~/.claude.json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    out.push(format!("grep -r KEY ../{p}"));
    out.push(format!("cd .. && cat {p}/.env"));
    out.push("git diff --no-index ../home .".to_string());
    out.push(format!("git diff --no-index /dev/null ../{p}/.env"));
    out
}

/// The seeds the mutator respells: secret readers, code runners and writers, in families.
pub fn seeds() -> Vec<Seed> {
    let p = PROJECT;
    let texts: Vec<String> = [
        "cat .env",
        "head .env",
        "tail -n 5 .env",
        "grep -r KEY .",
        "grep --directories=recurse KEY .",
        "grep --recursive --line-number KEY",
        "grep -R -n -i key .",
        "grep --files-with-matches -r KEY .",
        "grep --include=.env -r KEY .",
        "grep --exclude-from=.env KEY file.txt",
        "grep --file=.env file.txt",
        "sort --files0-from=list",
        "sort --output=out file.txt",
        "sort --compress-program=sh file.txt",
        "sort --random-source=.env file.txt",
        "wc --files0-from=list",
        "du --files0-from=list",
        "diff --recursive --new-file . ../home",
        "diff --from-file=.env file.txt",
        "diff --to-file=.env file.txt",
        "cat .git/config",
        "cat ~/.ssh/id_rsa",
        "cat ~/.aws/credentials",
        "cat ~/.config/gh/hosts.yml",
        "cat ~/.kaggle/kaggle.json",
        "cat ~/.claude.json",
        "cat ~/.netrc",
        "cat ~/.git-credentials",
        "grep -r oauth_token ~/.config",
        "ls -la ~/.ssh",
        "od -c .env",
        "base64 .env",
        "nl .env",
        "tac .env",
        "cut -c1- .env",
        "uniq .env",
        "sed -n p .env",
        "sed -n 1,5p .env",
        "awk {print} .env",
        "printf -v a[$(touch␣pwned)] x",
        "printf -va[$(touch␣pwned)] x",
        "read a[$(touch␣p)] !<<< x",
        "sed -n e␣touch␣pwned file.txt",
        "sed --quiet --expression=w␣out file.txt",
        "find . -name .env",
        "find . -newer .env",
        "find . -exec cat {} !+",
        "ls --hide=x -R .",
        "ls -la .",
        "tree -a .",
        "stat .env",
        "file --files-from=list",
        "date --file=.env",
        "jq --rawfile a .env -n $a",
        "jq --slurpfile a data.json -n $a",
        "jq . data.json",
        "git log --output=out",
        "git diff --no-index .env file.txt",
        "git config --list",
        "git config --get-regexp url",
        "git remote --verbose",
        "git grep --untracked KEY",
        "git grep --no-index KEY",
        "git show HEAD:.gitignore",
        "git status --short",
        "git log --oneline",
        "printf \\x2e\\x65nv | sort --files0-from=-",
        "cd .. && cat acme-app/.env",
        "cd src && cat ../.env",
        "cd ~ && cat .netrc",
        "cd ~/.ssh && cat id_rsa",
        "cat docs/setup.txt",
        "grep -R KEY docs",
        "git grep --open-files-in-pager=touch KEY",
        "git -c core.pager=touch log",
        "find . -exec touch pwned !\\;",
        "sed -n s/x/y/w␣out file.txt",
        "tar --create --file=/dev/null --to-command=touch .",
        "xargs --arg-file=list touch",
        "less +!touch␣pwned file.txt",
        "jq --null-input env",
        "sort /proc/self/environ",
        "ps e",
        "git diff --no-index ~/.ssh/id_rsa /dev/null",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut out: Vec<Seed> = texts.iter().map(|t| seed(t)).collect();
    out.push(seed(&format!("grep -r KEY ../{p}")));
    out.push(seed(&format!("diff -r ../{p} ../home")));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_render_to_the_lines_they_describe() {
        let cases = [
            ("cat .env", "cat .env"),
            ("printf -v a[$(touch␣pwned)] x", "printf -v 'a[$(touch pwned)]' x"),
            ("read a !<<< x", "read a <<< x"),
            ("cat ~/.ssh/id_rsa | wc -c", "cat ~/.ssh/id_rsa | wc -c"),
            ("cd ~ && cat it's", r"cd ~ && cat 'it'\''s'"),
            ("echo ~x", "echo '~x'"),
        ];
        for (notation, line) in cases {
            assert_eq!(render(&seed(notation)), line, "{notation}");
        }
    }
}
