//! Commands that fetch code and run it in one go: `curl … | sh`, `wget -O- … | sudo bash -`,
//! `bash <(curl …)`, `sh -c "$(curl …)"`, `iwr … | iex`, `iex (New-Object Net.WebClient)
//! .DownloadString(…)`, `powershell -enc <base64>`, a download followed by `chmod +x`, and the
//! decode-and-run variant (`… | base64 -d | sh`) used to hide the command.
//!
//! Pipelines are walked rather than pattern-matched end to end, so wrappers (`sudo -E`, `env`,
//! `command`), intermediate filters (`| tee log |`) and paths (`/bin/bash`) do not hide the
//! interpreter, while a pipe into an interpreter that is given its own program (`| python -m
//! json.tool`, `| bash -c 'wc -l'`) is recognised as reading data, not running it.

use std::sync::LazyLock;

use regex::Regex;

use super::{Category, Input, Sink};

const EXEC: Category = Category::DownloadExecute;

/// Where a pipeline may start carrying code: a fetch, or a decoder (the obfuscated variant).
/// Each kind is followed separately so a decoder inside a fetch's pipeline does not cut it short.
static FETCH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod|aria2c)(?-u:\b)")
        .expect("fetch pattern compiles")
});
static DECODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)(?:base64[ \t]+(?:-d|--decode)|xxd[ \t]+-r|openssl[ \t]+(?:enc[ \t]+)?-?base64[ \t]+-d)(?-u:\b)")
        .expect("decode pattern compiles")
});

struct Form {
    detector: &'static str,
    reason: &'static str,
    regex: Regex,
    /// A check on the match in context.
    accept: fn(&str, &regex::Match<'_>) -> bool,
}

static FORMS: LazyLock<Vec<Form>> = LazyLock::new(|| {
    let form = |detector, reason, pattern: &str| Form {
        detector,
        reason,
        regex: Regex::new(pattern).expect("download-execute pattern compiles"),
        accept: |_, _| true,
    };
    vec![
        form(
            "substitution_exec",
            "runs a downloaded script through command or process substitution",
            r#"(?-u:\b)(?:(?:ba|z|k|da)?sh(?:[ \t]+-[a-z]*c)?|eval|source|exec)[ \t]+["']?(?:\$\(|<\(|`)[ \t]*(?:sudo[ \t]+)?(?:curl|wget|fetch|iwr|irm)(?-u:\b)"#,
        ),
        Form {
            // `. <(wget …)`: the dot must be a command of its own, not the end of a word.
            accept: |text, m| {
                text[..m.start()].chars().next_back().is_none_or(|c| c.is_whitespace() || ";&|(".contains(c))
            },
            ..form(
                "substitution_exec",
                "runs a downloaded script through command or process substitution",
                r"\.[ \t]+<\([ \t]*(?:curl|wget|fetch|iwr|irm)(?-u:\b)",
            )
        },
        form(
            "decode_to_shell",
            "runs a base64-decoded command through a shell",
            r#"(?-u:\b)(?:(?:ba|z|k|da)?sh(?:[ \t]+-[a-z]*c)?|eval)[ \t]+["']?\$\([^)]*?(?-u:\b)base64[ \t]+(?:-d|--decode)(?-u:\b)"#,
        ),
        form(
            "download_chmod",
            "downloads a file and makes it executable",
            r"(?-u:\b)(?:curl|wget)(?-u:\b)[^\n]{0,300}?(?-u:\b)chmod[ \t]+(?:[ugoa]*\+[rwx]*x|[0-7]?[0-7]?[1357][0-7]?[0-7]?)(?-u:\b)",
        ),
        form(
            "powershell_download_exec",
            "PowerShell Invoke-Expression of downloaded code",
            r"(?-u:\b)(?:iex|invoke-expression)(?-u:\b)[^\n]{0,300}?(?:download(?:string|data|file)|(?-u:\b)(?:iwr|irm|invoke-webrequest|invoke-restmethod|start-bitstransfer)(?-u:\b)|net\.webclient)",
        ),
        form(
            "powershell_encoded",
            "PowerShell run with an encoded (hidden) command",
            r#"(?-u:\b)(?:powershell|pwsh)(?:\.exe)?(?-u:\b)[^\n|]{0,200}?[ \t][-/]e(?:c|n[a-z]*)?[ \t]+["']?[A-Za-z0-9+/=]{20,}"#,
        ),
        form(
            "lolbin_download",
            "a Windows system binary used to fetch or run remote code",
            r#"(?-u:\b)(?:certutil(?:\.exe)?(?-u:\b)[^\n]{0,200}?-urlcache[^\n]{0,200}?https?://|mshta(?:\.exe)?[ \t]+["']?(?:https?|javascript|vbscript):|regsvr32(?:\.exe)?(?-u:\b)[^\n]{0,200}?/i:["']?https?://|rundll32(?:\.exe)?(?-u:\b)[^\n]{0,100}?javascript:)"#,
        ),
    ]
});

/// How far a pipeline is followed from its source.
const MAX_PIPELINE: usize = 1024;

/// Runs on the lowered text: every pattern here is written in lower case, and the pipeline walk
/// compares program names and flags case-insensitively anyway.
pub(super) fn scan(input: &Input<'_>, sink: &mut Sink) {
    let text = input.lower;
    pipelines(text, &FETCH, "pipe_to_shell", "pipes a download into a shell or interpreter", sink);
    pipelines(text, &DECODE, "decode_to_shell", "pipes decoded data into a shell or interpreter", sink);
    for form in FORMS.iter() {
        for m in form.regex.find_iter(text) {
            if sink.full(EXEC) {
                return;
            }
            if (form.accept)(text, &m) && !sink.overlaps(EXEC, &m.range()) {
                sink.push(EXEC, form.detector, m.range(), form.reason.to_string());
            }
        }
    }
}

/// Follow each source through its pipeline to an interpreter that runs stdin. Each pipeline
/// stops at the next source of its kind, so the total work stays linear in the text.
fn pipelines(text: &str, sources: &Regex, detector: &'static str, reason: &str, sink: &mut Sink) {
    let mut sources = sources.find_iter(text).peekable();
    while let Some(source) = sources.next() {
        let next_source = sources.peek().map_or(text.len(), |m| m.start());
        let limit = super::floor_boundary(text, (source.end() + MAX_PIPELINE).min(next_source));
        let region = &text[source.end()..limit.max(source.end())];
        let Some(exec_end) = interpreter_end(region) else { continue };
        let span = source.start()..source.end() + exec_end;
        if sink.full(EXEC) {
            return;
        }
        if !sink.overlaps(EXEC, &span) {
            sink.push(EXEC, detector, span, reason.to_string());
        }
    }
}

/// Within one command line after a source, the byte offset just past the first later pipeline
/// stage that executes its standard input, if any.
fn interpreter_end(region: &str) -> Option<usize> {
    let line_end = ["\n", "\\n", ";", "&&", "||", "`"].iter().filter_map(|stop| region.find(stop)).min();
    let line = &region[..line_end.unwrap_or(region.len())];
    let mut stage_start = line.find('|')? + 1;
    loop {
        let rest = &line[stage_start..];
        let stage_len = rest.find('|').unwrap_or(rest.len());
        let (stage, skip) = match rest[..stage_len].strip_prefix('&') {
            Some(stage) => (stage, 1), // `|&`
            None => (&rest[..stage_len], 0),
        };
        if let Some(end) = executes_stdin(stage) {
            return Some(stage_start + skip + end);
        }
        if stage_len == rest.len() {
            return None;
        }
        stage_start += stage_len + 1;
    }
}

/// Whether a pipeline stage runs what it reads: an interpreter, past any wrappers, that is not
/// handed its own program. Returns the offset just past the interpreter's name.
fn executes_stdin(stage: &str) -> Option<usize> {
    const WRAPPERS: [&str; 9] =
        ["sudo", "doas", "env", "command", "exec", "nohup", "time", "nice", "builtin"];
    let mut words = words(stage).peekable();
    let (at, word) = loop {
        let (at, word) = words.next()?;
        let name = program_name(word);
        if WRAPPERS.contains(&name.as_str()) {
            while words.peek().is_some_and(|(_, w)| w.starts_with('-') || w.contains('=')) {
                words.next();
            }
            continue;
        }
        break (at, word);
    };
    let name = program_name(word);
    let end = at + word.len();
    // `sh'` or `sh")`: the interpreter closes a quoted command (`find -exec sh -c '… | sh' \;`);
    // what follows belongs to the outer command, not to the interpreter.
    let closes_quote = word.ends_with(['\'', '"', ')', '}']);
    let args = words.map(|(_, w)| w).take_while(|_| !closes_quote);
    match name.as_str() {
        "iex" | "invoke-expression" => Some(end),
        "sh" | "bash" | "zsh" | "ksh" | "dash" | "ash" | "mksh" | "fish" | "csh" | "tcsh" => {
            args_leave_stdin_as_program(args, &['c']).then_some(end)
        }
        "perl" | "ruby" | "node" | "nodejs" | "php" | "pwsh" | "powershell" => {
            args_leave_stdin_as_program(args, &['c', 'e', 'm', 'n', 'p', 'r']).then_some(end)
        }
        python if python.starts_with("python") => {
            args_leave_stdin_as_program(args, &['c', 'm']).then_some(end)
        }
        _ => None,
    }
}

/// An interpreter reads its program from stdin unless a flag supplies one (`-c`, `-e`, `-m`) or
/// a script operand comes first. `-`, `-s` and `--` explicitly keep stdin as the program.
fn args_leave_stdin_as_program<'a>(args: impl Iterator<Item = &'a str>, program_flags: &[char]) -> bool {
    for arg in args {
        let arg = arg.trim_matches(['"', '\'']);
        match arg {
            "-" | "-s" | "--" => return true,
            "--eval" | "--print" | "--command" | "-command" | "-Command" => return false,
            long if long.starts_with("--") => continue,
            flags if flags.starts_with('-') => {
                if flags[1..].chars().any(|c| program_flags.contains(&c)) {
                    return false;
                }
            }
            _ => return false, // a script file: stdin is its data
        }
    }
    true
}

/// `/usr/bin/Bash.exe` → `bash`; quotes stripped.
fn program_name(word: &str) -> String {
    let word = word.trim_matches(['"', '\'', '(', ')', '{', '}', ';']);
    let base = word.rsplit(['/', '\\']).next().unwrap_or(word).to_ascii_lowercase();
    base.strip_suffix(".exe").map(str::to_string).unwrap_or(base)
}

/// Whitespace-separated words with their byte offsets.
fn words(s: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        let rest = &s[pos..];
        let start = pos + (rest.len() - rest.trim_start().len());
        if start >= s.len() {
            return None;
        }
        let len = s[start..].find(char::is_whitespace).unwrap_or(s.len() - start);
        pos = start + len;
        Some((start, &s[start..start + len]))
    })
}

#[cfg(test)]
#[path = "download_exec_tests.rs"]
mod tests;
