//! Which sed invocations only print.
//!
//! sed is a small language with a shell escape (`e`), file writes (`w`, `W`, the `s///w` and
//! `s///e` flags), file reads (`r`, `R`) and in-place editing (`-i`). Rather than hunt for those,
//! the script is parsed and accepted only if every command is from the printing subset:
//! addresses, `p P d D n N g G h H x = l q Q z F`, labels and branches, `a i c` text, `s` with
//! the flags `g p i I m M` and a number, `y`, and `{ }` blocks.

/// Check `sed [options] [script] [files]`.
pub(super) fn check(args: &[String]) -> Result<(), String> {
    let mut scripts = Vec::new();
    let mut operands = Vec::new();
    let mut iter = args.iter();
    while let Some(a) = iter.next() {
        if a == "--" {
            operands.extend(iter.by_ref().cloned());
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            match long.split_once('=') {
                Some(("expression", script)) => scripts.push(script.to_string()),
                Some(("line-length", _)) => {}
                None if long == "expression" => {
                    scripts.push(iter.next().ok_or("sed --expression without a script")?.clone())
                }
                None if matches!(
                    long,
                    "quiet"
                        | "silent"
                        | "regexp-extended"
                        | "separate"
                        | "unbuffered"
                        | "null-data"
                        | "posix"
                        | "debug"
                        | "sandbox"
                ) => {}
                _ => return Err(format!("sed option {a}")),
            }
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let cluster = &a[1..];
            for (at, c) in cluster.char_indices() {
                match c {
                    'n' | 'E' | 'r' | 's' | 'u' | 'z' => {}
                    'e' | 'l' => {
                        let rest = &cluster[at + 1..];
                        let value = if rest.is_empty() {
                            iter.next().ok_or("sed option without its value")?.clone()
                        } else {
                            rest.to_string()
                        };
                        if c == 'e' {
                            scripts.push(value);
                        }
                        break;
                    }
                    _ => return Err(format!("sed option -{c}")),
                }
            }
            continue;
        }
        operands.push(a.clone());
    }
    if scripts.is_empty() {
        if operands.is_empty() {
            return Err("sed without a script".into());
        }
        scripts.push(operands.remove(0));
    }
    for script in &scripts {
        Script::new(script).check()?;
    }
    Ok(())
}

struct Script<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
}

impl<'a> Script<'a> {
    fn new(src: &'a str) -> Self {
        Self { chars: src.chars().peekable() }
    }

    fn check(&mut self) -> Result<(), String> {
        loop {
            self.skip(|c| c.is_whitespace() || c == ';');
            let Some(&c) = self.chars.peek() else {
                return Ok(());
            };
            if c == '#' {
                self.skip(|c| c != '\n');
                continue;
            }
            self.address()?;
            self.skip(|c| c == ' ' || c == '\t');
            if self.chars.peek() == Some(&',') {
                self.chars.next();
                self.skip(|c| c == ' ' || c == '\t');
                self.address()?;
            }
            self.skip(|c| c == ' ' || c == '\t' || c == '!');
            self.command()?;
        }
    }

    fn skip(&mut self, while_: impl Fn(char) -> bool) {
        while self.chars.peek().is_some_and(|&c| while_(c)) {
            self.chars.next();
        }
    }

    /// `12`, `$`, `first~step`, `+N`, `~N`, `/re/I`, `\cREc`.
    fn address(&mut self) -> Result<(), String> {
        match self.chars.peek() {
            Some('0'..='9' | '+' | '~') => {
                self.chars.next();
                self.skip(|c| c.is_ascii_digit() || c == '~');
            }
            Some('$') => {
                self.chars.next();
            }
            Some('/') => {
                self.chars.next();
                self.delimited('/')?;
                self.skip(|c| c == 'I' || c == 'M');
            }
            Some('\\') => {
                self.chars.next();
                let delim = self.chars.next().ok_or("sed address without a delimiter")?;
                self.delimited(delim)?;
                self.skip(|c| c == 'I' || c == 'M');
            }
            _ => {}
        }
        Ok(())
    }

    /// Consume up to and including the unescaped `delim`.
    fn delimited(&mut self, delim: char) -> Result<(), String> {
        while let Some(c) = self.chars.next() {
            if c == '\\' {
                self.chars.next();
            } else if c == delim {
                return Ok(());
            } else if c == '\n' {
                break;
            }
        }
        Err("unterminated sed expression".into())
    }

    fn command(&mut self) -> Result<(), String> {
        let c = self.chars.next().ok_or("sed address without a command")?;
        match c {
            'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | '=' | 'z' | 'F' | '{' | '}' => {
                Ok(())
            }
            'l' | 'q' | 'Q' | 'L' => {
                self.skip(|c| c == ' ' || c.is_ascii_digit());
                Ok(())
            }
            ':' | 'b' | 't' | 'T' => {
                self.skip(|c| c != '\n' && c != ';');
                Ok(())
            }
            'a' | 'i' | 'c' => {
                // Text to the end of the line (a trailing backslash continues it).
                while let Some(c) = self.chars.next() {
                    match c {
                        '\\' => {
                            self.chars.next();
                        }
                        '\n' => break,
                        _ => {}
                    }
                }
                Ok(())
            }
            's' => {
                let delim = self.substitution_delimiter()?;
                self.delimited(delim)?;
                self.delimited(delim)?;
                self.substitution_flags()
            }
            'y' => {
                let delim = self.substitution_delimiter()?;
                self.delimited(delim)?;
                self.delimited(delim)
            }
            'e' => Err("sed e runs a shell command".into()),
            'w' | 'W' => Err("sed w writes a file".into()),
            'r' | 'R' => Err("sed r reads another file".into()),
            other => Err(format!("sed command {other}")),
        }
    }

    fn substitution_delimiter(&mut self) -> Result<char, String> {
        match self.chars.next() {
            Some(c) if c != '\n' && c != '\\' => Ok(c),
            _ => Err("sed s without a delimiter".into()),
        }
    }

    fn substitution_flags(&mut self) -> Result<(), String> {
        while let Some(&c) = self.chars.peek() {
            match c {
                'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => {
                    self.chars.next();
                }
                'e' => return Err("sed s///e runs the pattern space".into()),
                'w' | 'W' => return Err("sed s///w writes a file".into()),
                ';' | '\n' | '}' | ' ' | '\t' => return Ok(()),
                other => return Err(format!("sed s flag {other}")),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
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
}
