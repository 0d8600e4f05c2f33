//! What a traced line did, in the terms the invariants speak: programs run, files opened for
//! reading or writing, changes to the file tree, connections — each with the process that did
//! it and the program that process was running.

use std::collections::HashMap;

use crate::trace::{args, Arg, Call, Outcome};

/// One effect seen in the trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// `execve` / `execveat` of `path` (the argv as strace printed it, for messages).
    Exec { path: String, argv: String, ok: bool },
    /// An open: the kernel's path when it succeeded, else the lexical one.
    Open { path: String, access: OpenAccess, ok: bool },
    /// `unlink`, `rename`, `mkdir`, `chmod`, `truncate`, … with the paths named.
    Change { call: String, paths: Vec<String>, ok: bool },
    /// `connect`, `bind`, or a `sendto`/`sendmsg` that names an address: the call and the
    /// address as strace printed it.
    Network { call: String, address: String, ok: bool },
    /// A signal other than 0 sent to `target` (a pid, or ≤ 0 for a process group).
    Signal { target: i64, signal: String, ok: bool },
    /// A way to open files the trace cannot follow: `open_by_handle_at` (no path) or
    /// `io_uring_setup` (its opens never pass through a syscall).
    Untraceable { call: String, ok: bool },
    /// A successful `getdents64` of a directory: its names were read.
    List { path: String },
}

/// How a file was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenAccess {
    Read,
    /// `O_WRONLY`, `O_RDWR`, `O_CREAT` or `O_TRUNC`, or `creat`.
    Write,
}

/// An effect with the process behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub pid: u32,
    /// The basename of what the process was running (`bash` until its first `execve`,
    /// inherited across `clone`/`fork`).
    pub program: String,
    pub seen: Seen,
}

const CHANGES: &[&str] = &[
    "mknod",
    "mknodat",
    "fchmod",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "fallocate",
    "utime",
    "utimes",
    "utimensat",
    "futimesat",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "mkdir",
    "mkdirat",
    "rmdir",
    "symlink",
    "symlinkat",
    "link",
    "linkat",
    "chmod",
    "fchmodat",
    "truncate",
    "ftruncate",
];

/// Interprets a parsed trace, in order. `root_program` is what the first traced process runs.
pub fn events(calls: &[Call], root_program: &str) -> Vec<Event> {
    let mut running: HashMap<u32, String> = HashMap::new();
    let mut out = Vec::new();
    for call in calls {
        let program = running.get(&call.pid).cloned().unwrap_or_else(|| root_program.to_string());
        let a = args(&call.args);
        let seen = match call.name.as_str() {
            "clone" | "clone3" | "fork" | "vfork" => {
                if let Outcome::Ok { value, .. } = call.result {
                    running.insert(value as u32, program.clone());
                }
                continue;
            }
            "execve" | "execveat" => {
                let (dir, path, argv) = if call.name == "execve" {
                    (None, string(&a, 0), raw(&a, 1))
                } else {
                    (fd(&a, 0), string(&a, 1), raw(&a, 2))
                };
                let path = place(dir.as_deref(), &path);
                if call.result.ok() {
                    running.insert(call.pid, basename(&path).to_string());
                }
                Seen::Exec { path, argv, ok: call.result.ok() }
            }
            "open" | "openat" | "openat2" | "creat" => {
                let (dir, name) = if call.name.starts_with("openat") {
                    (fd(&a, 0), string(&a, 1))
                } else {
                    (None, string(&a, 0))
                };
                let flags: String = a
                    .iter()
                    .skip(1)
                    .filter_map(|x| match x {
                        Arg::Raw(r) => Some(r.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                let writes = call.name == "creat"
                    || ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC"].iter().any(|f| flags.contains(f));
                let path = match &call.result {
                    Outcome::Ok { fd_path: Some(p), .. } => p.clone(),
                    _ => place(dir.as_deref(), &name),
                };
                let access = if writes { OpenAccess::Write } else { OpenAccess::Read };
                Seen::Open { path, access, ok: call.result.ok() }
            }
            "connect" | "bind" => {
                Seen::Network { call: call.name.clone(), address: raw(&a, 1), ok: call.result.ok() }
            }
            "sendto" | "sendmsg" | "sendmmsg" => {
                // Only a send that names its destination reaches past a connect we saw.
                let Some(at) = call.args.find("sa_family=") else { continue };
                let address = call.args[at..].split('}').next().unwrap_or("").to_string();
                Seen::Network { call: call.name.clone(), address, ok: call.result.ok() }
            }
            "kill" | "tkill" | "tgkill" => {
                let (target, signal) =
                    if call.name == "tgkill" { (raw(&a, 0), raw(&a, 2)) } else { (raw(&a, 0), raw(&a, 1)) };
                if signal == "0" {
                    continue; // a probe: whether the process exists
                }
                Seen::Signal { target: target.parse().unwrap_or(0), signal, ok: call.result.ok() }
            }
            "getdents" | "getdents64" => match (fd(&a, 0), &call.result) {
                (Some(path), Outcome::Ok { .. }) => Seen::List { path },
                _ => continue,
            },
            "open_by_handle_at" | "io_uring_setup" => {
                Seen::Untraceable { call: call.name.clone(), ok: call.result.ok() }
            }
            name if CHANGES.contains(&name) => {
                Seen::Change { call: name.to_string(), paths: change_paths(&a), ok: call.result.ok() }
            }
            _ => continue,
        };
        out.push(Event { pid: call.pid, program, seen });
    }
    out
}

/// The paths a change names: every string, placed against the descriptor before it, and the
/// path of a bare descriptor (`ftruncate(3</x>, 0)`).
fn change_paths(a: &[Arg]) -> Vec<String> {
    let mut out = Vec::new();
    let mut dir: Option<String> = None;
    for x in a {
        match x {
            Arg::Fd(p) => {
                if let Some(p) = p {
                    out.push(p.clone());
                }
                dir = p.clone();
            }
            Arg::Str(s) => {
                if dir.is_some() {
                    out.pop(); // the descriptor was a directory for this name
                }
                out.push(place(dir.as_deref(), s));
                dir = None;
            }
            Arg::Raw(_) => dir = None,
        }
    }
    out
}

fn string(a: &[Arg], i: usize) -> String {
    match a.get(i) {
        Some(Arg::Str(s)) => s.clone(),
        _ => String::new(),
    }
}

fn raw(a: &[Arg], i: usize) -> String {
    match a.get(i) {
        Some(Arg::Raw(s)) => s.clone(),
        Some(Arg::Str(s)) => s.clone(),
        _ => String::new(),
    }
}

fn fd(a: &[Arg], i: usize) -> Option<String> {
    match a.get(i) {
        Some(Arg::Fd(p)) => p.clone(),
        _ => None,
    }
}

/// `name` against directory `dir` (absolute names stand alone), normalised lexically.
pub fn place(dir: Option<&str>, name: &str) -> String {
    let joined = match dir {
        _ if name.starts_with('/') => name.to_string(),
        Some(d) => format!("{d}/{name}"),
        None => return name.to_string(),
    };
    portcullis_shell::place::normalize_abs(&joined)
}

pub fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::parse;

    #[test]
    fn opens_writes_changes_and_programs_are_attributed_to_their_process() {
        let text = r#"100  openat(AT_FDCWD</w>, "/dev/tty", O_RDWR|O_NONBLOCK) = -1 ENXIO (No such device or address)
100  clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD, child_tidptr=0x7f) = 101
101  execve("/usr/bin/git", ["git", "status"], 0x5 /* 3 vars */) = 0
101  clone(child_stack=NULL, flags=SIGCHLD) = 102
102  openat(AT_FDCWD</w>, ".git/config", O_RDONLY) = 3</w/.git/config>
101  openat(AT_FDCWD</w>, ".git/index.lock", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0666) = 3</w/.git/index.lock>
101  renameat2(AT_FDCWD</w>, ".git/index.lock", AT_FDCWD</w>, ".git/index", 0) = 0
101  ftruncate(1<pipe:[77]>, 0) = -1 EINVAL (Invalid argument)
100  openat(4</w/sub>, "../x", O_RDONLY) = -1 ENOENT (No such file or directory)
101  connect(4<socket:[1]>, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT (No such file or directory)
101  sendto(5<socket:[2]>, "x", 1, MSG_NOSIGNAL, NULL, 0) = 1
101  sendto(5<socket:[2]>, "q", 1, 0, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.0.0.1")}, 16) = -1 ENETUNREACH (Network is unreachable)
100  getdents64(3</w/src>, 0x561c247a2080 /* 3 entries */, 32768) = 80
100  kill(1, 0)                        = 0
100  kill(4972, SIGTERM)               = 0"#;
        let ev = events(&parse(text), "bash");
        let by: Vec<(&str, &Seen)> = ev.iter().map(|e| (e.program.as_str(), &e.seen)).collect();
        let open = |path: &str, access, ok| Seen::Open { path: path.into(), access, ok };
        assert_eq!(
            by,
            [
                ("bash", &open("/dev/tty", OpenAccess::Write, false)),
                (
                    "bash",
                    &Seen::Exec {
                        path: "/usr/bin/git".into(),
                        argv: r#"["git", "status"]"#.into(),
                        ok: true
                    }
                ),
                ("git", &open("/w/.git/config", OpenAccess::Read, true)),
                ("git", &open("/w/.git/index.lock", OpenAccess::Write, true)),
                (
                    "git",
                    &Seen::Change {
                        call: "renameat2".into(),
                        paths: vec!["/w/.git/index.lock".into(), "/w/.git/index".into()],
                        ok: true
                    }
                ),
                (
                    "git",
                    &Seen::Change { call: "ftruncate".into(), paths: vec!["pipe:[77]".into()], ok: false }
                ),
                ("bash", &open("/w/x", OpenAccess::Read, false)),
                (
                    "git",
                    &Seen::Network {
                        call: "connect".into(),
                        address: r#"{sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}"#.into(),
                        ok: false
                    }
                ),
                (
                    "git",
                    &Seen::Network {
                        call: "sendto".into(),
                        address: "sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr(\"10.0.0.1\")"
                            .into(),
                        ok: false
                    }
                ),
                ("bash", &Seen::List { path: "/w/src".into() }),
                ("bash", &Seen::Signal { target: 4972, signal: "SIGTERM".into(), ok: true }),
            ]
        );
    }
}
