//! Reads `strace -f -qq -y -s 256 -o FILE` output into typed events: the programs run, the
//! files opened (resolved through strace's `-y` descriptor paths), the changes tried, the
//! connections tried.
//!
//! What counts: a successful open is the path the kernel opened (the `= 3</path>` strace prints
//! for the new descriptor: symlinks and `..` already resolved); a failed open is placed from its
//! directory descriptor and name, lexically. Every *attempt* is kept with its outcome — the
//! judge decides what a failure means (a failed write is still a write the line tried).

/// One traced system call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub pid: u32,
    pub name: String,
    /// The argument list as printed (between the parentheses), joined when strace split it
    /// across `<unfinished ...>` and `<... resumed>`.
    pub args: String,
    pub result: Outcome,
}

/// How a call returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A non-negative return, with the path of the descriptor when it is one (`-y`).
    Ok { value: i64, fd_path: Option<String> },
    /// `-1 ENOENT (…)`; the errno name.
    Err(String),
    /// The process ended before the call returned (killed, or `exit`-like).
    Unknown,
}

impl Outcome {
    pub fn ok(&self) -> bool {
        matches!(self, Outcome::Ok { .. })
    }
}

/// Parses a whole trace file, pairing unfinished calls with their resumptions by pid.
pub fn parse(text: &str) -> Vec<Call> {
    let mut calls = Vec::new();
    let mut pending: Vec<(u32, String, String)> = Vec::new();
    for line in text.lines() {
        let Some((pid, rest)) = split_pid(line) else { continue };
        if let Some(tail) = rest.strip_prefix("<... ") {
            // `<... openat resumed>, O_RDONLY) = 3</x>` or `<... execve resumed>) = 0`
            let Some((name, after)) = tail.split_once(" resumed>") else { continue };
            let Some(at) = pending.iter().position(|(p, n, _)| *p == pid && n == name) else { continue };
            let (_, name, mut args) = pending.remove(at);
            let (more, result) = split_result(after);
            args.push_str(more);
            calls.push(Call { pid, name, args: args.trim().to_string(), result });
            continue;
        }
        let Some(open) = rest.find('(') else { continue };
        let name = &rest[..open];
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            continue; // `--- SIGCHLD …`, `+++ exited …`
        }
        let body = &rest[open + 1..];
        if let Some(head) = body.strip_suffix(" <unfinished ...>") {
            pending.push((pid, name.to_string(), head.to_string()));
            continue;
        }
        let (args, result) = split_result(body);
        calls.push(Call { pid, name: name.to_string(), args: args.trim().to_string(), result });
    }
    for (pid, name, args) in pending {
        calls.push(Call { pid, name, args, result: Outcome::Unknown });
    }
    calls
}

fn split_pid(line: &str) -> Option<(u32, &str)> {
    let (pid, rest) = line.split_once(char::is_whitespace)?;
    Some((pid.parse().ok()?, rest.trim_start()))
}

/// Splits `ARGS) = RESULT` at the `)` that closes the argument list: the first one outside
/// strings, `-y` paths and brackets (strings may hold `) = `, strace pads before `=`).
fn split_result(body: &str) -> (&str, Outcome) {
    let Some(close) = closing_paren(body) else { return (body, Outcome::Unknown) };
    let args = &body[..close];
    let Some(result) = body[close + 1..].trim_start().strip_prefix("= ") else {
        return (args, Outcome::Unknown);
    };
    let result = result.trim();
    let result = result.strip_suffix(" (INJECTED)").unwrap_or(result);
    if let Some(err) = result.strip_prefix("-1 ") {
        let errno = err.split_whitespace().next().unwrap_or("").to_string();
        return (args, Outcome::Err(errno));
    }
    let (num, fd_path) = match result.split_once('<') {
        Some((num, tail)) => (num, tail.rfind('>').map(|end| unescape(&tail[..end]))),
        None => (result.split_whitespace().next().unwrap_or(""), None),
    };
    match num.trim().parse::<i64>() {
        Ok(value) => (args, Outcome::Ok { value, fd_path }),
        Err(_) => (args, Outcome::Unknown),
    }
}

fn closing_paren(text: &str) -> Option<usize> {
    let mut depth = 0i32;
    let mut scan = Scan::default();
    for (i, b) in text.bytes().enumerate() {
        if scan.inside(b) {
            continue;
        }
        match b {
            b'[' | b'{' | b'(' => depth += 1,
            b']' | b'}' => depth -= 1,
            b')' if depth == 0 => return Some(i),
            b')' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// Whether a byte is inside a string (`"…"`, escapes honoured) or a `-y` path (`<…>`).
#[derive(Default)]
struct Scan {
    in_str: bool,
    in_fd: bool,
    escaped: bool,
}

impl Scan {
    /// Feeds one byte; true when it belongs to a string or path (its delimiters included).
    fn inside(&mut self, b: u8) -> bool {
        if self.escaped {
            self.escaped = false;
            return true;
        }
        if self.in_str || self.in_fd {
            match b {
                b'\\' => self.escaped = true,
                b'"' if self.in_str => self.in_str = false,
                b'>' if self.in_fd => self.in_fd = false,
                _ => {}
            }
            return true;
        }
        match b {
            b'"' => self.in_str = true,
            b'<' => self.in_fd = true,
            _ => return false,
        }
        true
    }
}

/// One top-level argument: a string (decoded), a descriptor with its `-y` path, or raw text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    Str(String),
    /// `AT_FDCWD</dir>` or `3</path>`: the path, when strace printed one.
    Fd(Option<String>),
    Raw(String),
}

/// Splits an argument list at top-level commas (outside strings, `[]`, `{}` and `<>` paths).
pub fn args(text: &str) -> Vec<Arg> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let mut scan = Scan::default();
    for (i, b) in text.bytes().enumerate() {
        if scan.inside(b) {
            continue;
        }
        match b {
            b'[' | b'{' | b'(' => depth += 1,
            b']' | b'}' | b')' => depth -= 1,
            b',' if depth == 0 => {
                out.push(arg(&text[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    if !text[start..].trim().is_empty() {
        out.push(arg(&text[start..]));
    }
    out
}

fn arg(raw: &str) -> Arg {
    let raw = raw.trim();
    if let Some(inner) = raw.strip_prefix('"') {
        // A string strace cut at `-s` ends `"...`.
        let inner = inner.strip_suffix("...").unwrap_or(inner);
        return Arg::Str(unescape(inner.strip_suffix('"').unwrap_or(inner)));
    }
    if let Some(open) = raw.find('<') {
        let head = &raw[..open];
        if head == "AT_FDCWD" || head.bytes().all(|b| b.is_ascii_digit()) && !head.is_empty() {
            let tail = &raw[open + 1..];
            return Arg::Fd(tail.strip_suffix('>').map(unescape));
        }
    }
    Arg::Raw(raw.to_string())
}

/// Undoes strace's string escapes: `\t \n \r \v \f \" \\`, octal `\351`, hex `\xe9`. Bytes that
/// are not UTF-8 become U+FFFD (paths are compared as text).
pub fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 == b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        i += 2;
        match c {
            b't' => out.push(b'\t'),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b'v' => out.push(0x0b),
            b'f' => out.push(0x0c),
            b'x' => {
                let end = (i + 2).min(b.len());
                let hex = std::str::from_utf8(&b[i..end]).unwrap_or("");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i = end;
            }
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                let mut n = 1;
                while n < 3 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + u32::from(b[i] - b'0');
                    i += 1;
                    n += 1;
                }
                out.push(v as u8);
            }
            other => out.push(other),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests;
