//! The invariants a line proven read-only must keep under real execution, checked against what
//! the trace saw. Each violation names its class and the observed effect.
//!
//! Decisions:
//! - A write is an *attempt*: an open with `O_WRONLY`/`O_RDWR`/`O_CREAT`/`O_TRUNC`, or any
//!   unlink, rename, mkdir, chmod, link, truncate… counts even when it failed — the line tried,
//!   and only the sandbox's circumstances (a missing directory) stopped it. Exempt: the sinks
//!   `/dev/null`, `/dev/tty`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/1|2`, the run's own
//!   stdout/stderr files (what `/dev/stdout` resolves to here) and pipes.
//!   Metadata counts: `touch -c` is only a `utimensat`, `chown`, xattrs, `fallocate`.
//! - A connect, a bind, a send that names an address are attempts too, whatever the empty
//!   namespace answered. Exempt: glibc's NSS lookup through nscd's Unix socket (`ls -l` naming
//!   owners), a local read-only service.
//! - A signal (not the probe 0) to a process outside the line's own, or to a process group.
//! - A secret is read when a marked file (or any process's `/proc/N/environ`) is opened
//!   successfully by a program that is not its owner (git reads `.git/config` as its own
//!   configuration), or when any marker appears in stdout or stderr — plainly, as hex or as
//!   base64 (owners included: printing the token is never theirs).
//! - A program run is an `execve` attempt (failed ones too: a failed attempt is still a program
//!   the line tried to run); its basename must be a program or wrapper the analysis named, or
//!   bash itself.
//! - A read — a successful open of a file without write flags, or a listing (`getdents64`) of a
//!   directory; opening a directory alone reads nothing (`find` and git open `.` to come back
//!   to it) — of a path outside the system's own files ([`system_file`]) must lie in a place the
//!   effect model predicted the line may read. The judge runs right after the line, so the
//!   fixture's directories are still there to tell from files.

use std::collections::BTreeSet;
use std::path::Path;

use portcullis_shell::effects::{Access, CommandEffects};
use portcullis_shell::place::Place;
use portcullis_shell::Analysis;

use crate::observed::{basename, Event, OpenAccess, Seen};
use crate::sandbox::Sandbox;

/// The class of a violation (one line of findings.md each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    Write,
    Change,
    Network,
    Signal,
    Untraceable,
    SecretOpened,
    SecretPrinted,
    UnpredictedProgram,
    UnpredictedRead,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Write => "opened a file for writing",
            Class::Change => "changed the file tree",
            Class::Network => "tried to reach the network",
            Class::Signal => "signalled a process it did not start",
            Class::Untraceable => "opened files where the trace cannot see",
            Class::SecretOpened => "opened a fake secret",
            Class::SecretPrinted => "printed a fake secret's marker",
            Class::UnpredictedProgram => "ran a program the analysis did not name",
            Class::UnpredictedRead => "read a path outside the predicted places",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub class: Class,
    /// The observed effect, with the program that did it.
    pub effect: String,
}

/// The judge's inputs for one line.
pub struct Case<'a> {
    pub analysis: &'a Analysis,
    /// The effect model's prediction, when the line is judged against it.
    pub effects: Option<&'a [CommandEffects]>,
    pub events: &'a [Event],
    pub stdout: &'a [u8],
    pub stderr: &'a [u8],
}

pub fn judge(case: &Case<'_>, sandbox: &Sandbox) -> Vec<Violation> {
    let mut out = Vec::new();
    let run_dir = sandbox.run.display().to_string();
    let mut push = |class, effect: String| {
        // Paths in the run directory are shown from it: `$RUN/acme-app/.env`.
        let v = Violation { class, effect: effect.replace(&run_dir, "$RUN") };
        if !out.contains(&v) {
            out.push(v);
        }
    };
    let programs = predicted_programs(case.analysis);
    let pids: BTreeSet<u32> = case.events.iter().map(|e| e.pid).collect();
    let secret_paths: Vec<(String, &crate::sandbox::Secret)> =
        sandbox.secrets.iter().map(|s| (sandbox.run.join(s.rel).display().to_string(), s)).collect();
    // (The environment secret's "path" is never opened: it is judged by its marker alone.)
    for e in case.events {
        let who = &e.program;
        match &e.seen {
            Seen::Exec { path, argv, ok } => {
                let name = basename(path);
                if !programs.contains(name) {
                    push(Class::UnpredictedProgram, format!("{who} ran {path} {argv} (ok={ok})"));
                }
            }
            Seen::Open { path, access: OpenAccess::Write, ok } => {
                if !write_sink(path, sandbox) {
                    push(Class::Write, format!("{who} opened {path} for writing (ok={ok})"));
                }
            }
            Seen::Open { path, access: OpenAccess::Read, ok: true } => {
                if environ(path) {
                    push(Class::SecretOpened, format!("{who} opened {path} (the environment's secrets)"));
                    continue;
                }
                if let Some((_, s)) = secret_paths.iter().find(|(p, _)| p == path) {
                    if !s.owners.contains(&who.as_str()) {
                        push(Class::SecretOpened, format!("{who} opened {}", s.rel));
                    }
                    continue;
                }
                // Opening a directory reads nothing; listing it does (below).
                let directory = std::fs::metadata(path).is_ok_and(|m| m.is_dir());
                if let Some(effects) = case.effects.filter(|_| !directory) {
                    if !system_file(path, &pids, sandbox) && !predicted_read(path, effects) {
                        push(Class::UnpredictedRead, format!("{who} read {path}"));
                    }
                }
            }
            Seen::List { path } => {
                if let Some(effects) = case.effects {
                    if !system_file(path, &pids, sandbox) && !predicted_read(path, effects) {
                        push(Class::UnpredictedRead, format!("{who} listed {path}"));
                    }
                }
            }
            Seen::Open { .. } => {}
            Seen::Change { call, paths, ok } => {
                push(Class::Change, format!("{who} {call} {} (ok={ok})", paths.join(" → ")));
            }
            Seen::Network { call, address, ok } => {
                if !(call == "connect" && nss_socket(address)) {
                    push(Class::Network, format!("{who} {call} {address} (ok={ok})"));
                }
            }
            Seen::Signal { target, signal, ok } => {
                if *target <= 0 || !pids.contains(&(*target as u32)) {
                    push(Class::Signal, format!("{who} sent {signal} to {target} (ok={ok})"));
                }
            }
            Seen::Untraceable { call, ok } => push(Class::Untraceable, format!("{who} {call} (ok={ok})")),
        }
    }
    for s in &sandbox.secrets {
        for (stream, bytes) in [("stdout", case.stdout), ("stderr", case.stderr)] {
            if let Some(form) = encodings(&s.marker).into_iter().find(|(_, e)| contains(bytes, e.as_bytes()))
            {
                push(Class::SecretPrinted, format!("{}'s marker on {stream} ({})", s.rel, form.0));
            }
        }
    }
    out
}

/// bash, and every program and wrapper the analysis named (by basename: bash resolves a name
/// through PATH, `/usr/bin/env` is `env`).
fn predicted_programs(analysis: &Analysis) -> BTreeSet<String> {
    let mut out = BTreeSet::from(["bash".to_string()]);
    for c in &analysis.commands {
        out.insert(basename(&c.program).to_string());
        out.insert(basename(&c.invoked_as).to_string());
        out.extend(c.wrappers.iter().map(|w| basename(w).to_string()));
    }
    out
}

fn write_sink(path: &str, sandbox: &Sandbox) -> bool {
    matches!(path, "/dev/null" | "/dev/tty" | "/dev/stdout" | "/dev/stderr" | "/dev/fd/1" | "/dev/fd/2")
        || path.starts_with("pipe:[")
        || Path::new(path) == sandbox.stdout_file
        || Path::new(path) == sandbox.stderr_file
}

fn nss_socket(address: &str) -> bool {
    address.starts_with("{sa_family=AF_UNIX, sun_path=\"")
        && (address.contains("\"/var/run/nscd/socket\"") || address.contains("\"/run/nscd/socket\""))
}

/// The system's own files, read by every program whatever its arguments: the loader's cache,
/// libraries, locale and zone data, terminfo and magic (all below /usr, /lib*), the user and
/// group databases and NSS configuration (owner names in `ls -l`), the process's own /proc
/// entries and the kernel facts programs size themselves by (CPU count, memory), and the
/// character devices a program may read that hold no file's content.
pub fn system_file(path: &str, pids: &BTreeSet<u32>, sandbox: &Sandbox) -> bool {
    const TREES: &[&str] = &["/usr/", "/lib/", "/lib64/", "/lib32/", "/libx32/", "/bin/", "/sbin/"];
    const FILES: &[&str] = &[
        "/etc/ld.so.cache",
        "/etc/ld.so.preload",
        "/etc/localtime",
        "/etc/nsswitch.conf",
        "/etc/passwd",
        "/etc/group",
        // git's system-wide configuration (an administrator's file, like nsswitch.conf).
        "/etc/gitconfig",
        // libmagic's local rules, which `file` reads beside its compiled database in /usr.
        "/etc/magic",
        "/proc/filesystems",
        "/proc/meminfo",
        "/proc/stat",
        "/proc/sys/kernel/ngroups_max",
        "/dev/null",
        "/dev/tty",
        "/dev/urandom",
        "/dev/random",
        "/dev/zero",
    ];
    if TREES.iter().any(|t| path.starts_with(t)) || FILES.contains(&path) {
        return true;
    }
    if path.starts_with("/sys/devices/system/cpu/") || path.starts_with("/sys/fs/cgroup/") {
        return true;
    }
    if let Some(rest) = path.strip_prefix("/proc/") {
        let pid = rest.split('/').next().unwrap_or("");
        return pid == "self" || pid.parse::<u32>().is_ok_and(|p| pids.contains(&p));
    }
    Path::new(path) == sandbox.stdout_file || Path::new(path) == sandbox.stderr_file
}

/// Whether some command's predicted effect covers reading `path`: the same place, or below a
/// place read as a tree; `Anywhere` covers everything.
fn predicted_read(path: &str, effects: &[CommandEffects]) -> bool {
    effects.iter().flat_map(|c| &c.paths).any(|p| {
        if !p.access.may_read() {
            return false;
        }
        match &p.place {
            Place::Anywhere => true,
            Place::Abs(a) => {
                a == path
                    || (matches!(p.access, Access::ReadTree)
                        && (a == "/" || path.strip_prefix(a.as_str()).is_some_and(|r| r.starts_with('/'))))
            }
            // Never produced for a run with a known directory and home; a place we cannot
            // compare covers nothing.
            _ => false,
        }
    })
}

/// `/proc/N/environ` or `/proc/self/environ`: a process's environment, where agents keep tokens.
fn environ(path: &str) -> bool {
    path.strip_prefix("/proc/")
        .and_then(|r| r.strip_suffix("/environ"))
        .is_some_and(|pid| pid == "self" || pid == "thread-self" || pid.bytes().all(|b| b.is_ascii_digit()))
}

/// The marker as printed plainly, as hex (`xxd -p`, `od -An -tx1` without spaces), and as base64
/// at each of the three alignments it can start at (`base64 .env`), edges trimmed.
pub fn encodings(marker: &str) -> Vec<(&'static str, String)> {
    let mut out = vec![("plain", marker.to_string())];
    out.push(("hex", marker.bytes().map(|b| format!("{b:02x}")).collect()));
    for pad in 0..3 {
        let mut bytes = vec![b'#'; pad];
        bytes.extend_from_slice(marker.as_bytes());
        let b64 = base64(&bytes);
        // Characters that mix in the padding or the bytes after the marker vary; drop them.
        let skip = if pad == 0 { 0 } else { 4 };
        let keep = b64.len().saturating_sub(skip + 4);
        out.push(("base64", b64.chars().skip(skip).take(keep).collect()));
    }
    out
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_markers_are_what_base64_and_xxd_print() {
        let marker = "PCMARKDOTENV005ec2e7";
        for (prefix, tool) in
            [("", "base64 -w0"), ("K=", "base64 -w0"), ("AB=", "base64 -w0"), ("", "xxd -p -c0")]
        {
            let out = std::process::Command::new("/bin/bash")
                .args([
                    "--norc",
                    "--noprofile",
                    "-c",
                    &format!("printf '%s%s\\n' '{prefix}' '{marker}' | {tool}"),
                ])
                .output()
                .expect("bash");
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(
                encodings(marker).iter().any(|(_, e)| text.contains(e.as_str())),
                "{tool} of {prefix}{marker}: {text}"
            );
        }
    }

    #[test]
    fn environ_files_are_every_process_environment() {
        assert!(environ("/proc/self/environ") && environ("/proc/4242/environ"));
        assert!(!environ("/proc/4242/cmdline") && !environ("/tmp/environ"));
    }
}
