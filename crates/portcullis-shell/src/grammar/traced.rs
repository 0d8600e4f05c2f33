//! The readings checked against what the programs do: each command runs under `strace` in a
//! scratch directory holding a small fixture, and every file it opens, creates, renames,
//! links, removes or runs there must be one the reading names with a role that allows it.
//! A write the reading did not see would be a hole in every proof built on it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{read, Role};

/// Commands to trace (split on spaces), each in a fresh copy of the fixture.
const COMMANDS: &[&str] = &[
    "cat a b",
    "head -n1 a",
    "tail -c2 a",
    "wc -l a b",
    "wc --files0-from=list",
    "sort -o out a",
    "sort --out=o2 a b",
    "sort -ob64 a",
    "sort a -o o3",
    "sort --files0-from=list",
    "uniq a u1",
    "cut -c1 a",
    "grep -r x d",
    "grep -d recurse x d",
    "grep x -r",
    "grep -f a b",
    "grep --dir=rec x d",
    "diff a b",
    "diff -r d d2",
    "diff -rN d d2",
    "find d -name x",
    "find d -fprint f1",
    "find -fprint0 f2",
    "find d -exec cat {} ;",
    "ls -R d",
    "ls",
    "du -s d",
    "du",
    "sed -n p a",
    "sed -i s/a/c/ b",
    "sed -i.bak s/a/c/ a",
    "sed -n -e p -i a b",
    "cp a c1",
    "cp -r d d3",
    "cp -t d a b",
    "mv a m1",
    "mkdir -p e/f",
    "touch t1",
    "tee t2",
    "ln -s a l1",
    "ln a l2",
    "rm b",
    "rm -r d",
    "tar -cf o.tar d",
    "tar cf o2.tar a b",
    "tar -xf arch.tar",
    "tar -C d2 -xf arch.tar",
    "dd if=a of=dd1",
    "truncate -s0 a",
    "install -m 644 a i1",
    "md5sum a",
    "md5sum -c sums",
    "strings a",
    "od -c a",
    "file a",
    "jq . j.json",
    "jq --rawfile v a -n $v",
    "cmp a b",
    "mktemp -p . x.XXXX",
    "chmod 600 a",
    "base64 a",
    "tac a",
    "nl a",
    "comm a b",
    "paste a b",
    "stat a",
    // Spellings: abbreviations, clusters, glued and permuted values.
    "sort --outp=o4 a",
    "sort -nro o5 a",
    "sort a b --out o6",
    "sed -in p a",
    "sed -ni p a",
    "sed --in-pl=.x p a",
    "tee -a t3",
    "cp --target-dir=d a",
    "cp --target-directory d2 a b",
    "uniq -c a u2",
    "grep --recur x d",
    "du --files0=list",
    "tar --create --file=o7.tar a",
    "tar -c -f o8.tar -C d x",
    "tar xf arch.tar -C d2",
    "tar --extract --file arch.tar --directory=d",
    "dd of=dd2 if=a",
    "install -Dm644 a i/j/k",
    "mv -t d a",
    "ln -sf a l3",
    "touch -r a -d yesterday t4",
    "truncate --size=0 b",
    "mkdir --par g/h",
    // Local files through URLs.
    "curl -s file://@DIR@/a -o c5",
    "curl -sT a file://@DIR@/up",
    "shuf -o sh1 a",
    "shuf -e a b",
    "split -l1 a",
    "split --filter=cat a",
    "join a b",
];

/// What a traced call did to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Did {
    Read,
    Write,
    Run,
}

fn fixture(dir: &Path) {
    let files: &[(&str, &[u8])] = &[
        ("a", b"a\n"),
        ("b", b"b\n"),
        ("d/x", b"x\n"),
        ("d/.hidden", b"h\n"),
        ("d2/x", b"y\n"),
        ("list", b"a\0b\0"),
        ("j.json", b"{}\n"),
        ("sums", b"60b725f10c9c85c70d97880dfe8191b3  a\n"),
    ];
    for (name, content) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("fixture directory");
        std::fs::write(path, content).expect("fixture file");
    }
    let status = Command::new("tar").args(["-cf", "arch.tar", "-C", "d", "x"]).current_dir(dir).status();
    assert!(status.is_ok_and(|s| s.success()), "fixture archive");
}

/// The paths (relative to the scratch directory) a traced run touched, from strace's log.
fn touched(log: &str, dir: &Path) -> Vec<(String, Did)> {
    let mut out = Vec::new();
    // Where the program has moved to (`mkdir -p` walks with chdir), relative to the scratch dir.
    let mut cwds: std::collections::HashMap<String, PathBuf> = std::collections::HashMap::new();
    let mut directories: std::collections::HashMap<(String, String), PathBuf> =
        std::collections::HashMap::new();
    for line in log.lines() {
        let Some((pid, call)) = line.split_once(' ').map(|(p, c)| (p.to_string(), c.trim_start())) else {
            continue;
        };
        // A child starts where its parent was; strace names children only by pid, so a pid not
        // seen yet starts in the scratch directory, which is where every traced command starts.
        let cwd = cwds.entry(pid.clone()).or_default();
        let name = call.split('(').next().unwrap_or_default();
        let paths: Vec<&str> = call.split('"').skip(1).step_by(2).collect();
        if name == "chdir" {
            if let (Some(p), true) = (paths.first(), call.ends_with("= 0")) {
                *cwd = match Path::new(p).strip_prefix(dir) {
                    Ok(rest) => rest.to_path_buf(),
                    Err(_) if p.starts_with('/') => PathBuf::from("<elsewhere>"),
                    Err(_) => normal(&cwd.join(p)),
                };
            }
            continue;
        }
        if name == "fchdir" {
            let fd = call.trim_start_matches("fchdir(").split(')').next().unwrap_or_default();
            if let Some(to) = directories.get(&(pid.clone(), fd.to_string())) {
                *cwd = to.clone();
            }
            // Opening the working directory to come back to it later reads nothing.
            out.retain(|(p, did): &(String, Did)| !(p == "." && *did == Did::Read));
            continue;
        }
        if name == "openat" {
            if let (Some(p), Some(fd)) = (paths.first(), call.rsplit("= ").next()) {
                let at = if p.starts_with('/') { PathBuf::from(p) } else { normal(&cwd.join(p)) };
                directories.insert((pid.clone(), fd.trim().to_string()), at);
            }
        }
        let did = match name {
            "execve" => Did::Run,
            "openat" | "open"
                if call.contains("O_WRONLY") || call.contains("O_RDWR") || call.contains("O_CREAT") =>
            {
                Did::Write
            }
            "openat" | "open" => Did::Read,
            "creat" | "unlink" | "unlinkat" | "mkdir" | "mkdirat" | "rename" | "renameat" | "renameat2"
            | "symlink" | "symlinkat" | "link" | "linkat" => Did::Write,
            _ => continue,
        };
        // Paths relative to another directory's descriptor belong to a walk of a tree.
        let relative_to_fd = name.ends_with("at") && !call.contains("AT_FDCWD");
        let targets: Vec<&str> = match name {
            // The link's target is not changed, only the new name is written.
            "symlink" | "symlinkat" | "link" | "linkat" => paths.last().into_iter().copied().collect(),
            "execve" => paths.first().into_iter().copied().collect(),
            _ => paths,
        };
        for p in targets {
            let local = match Path::new(p).strip_prefix(dir) {
                Ok(rest) => rest.to_string_lossy().into_owned(),
                Err(_) if p.starts_with('/') => continue,
                Err(_) => normal(&cwd.join(p)).to_string_lossy().into_owned(),
            };
            let local = if local.is_empty() { ".".to_string() } else { local };
            if relative_to_fd {
                out.push((format!("<tree>/{local}"), did));
            } else {
                out.push((local, did));
            }
        }
    }
    out
}

/// `path` without `.` components (and `.` itself when nothing is left).
fn normal(path: &Path) -> PathBuf {
    let out: PathBuf = path.components().filter(|c| !matches!(c, std::path::Component::CurDir)).collect();
    if out.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        out
    }
}

/// Whether `path` is `item` or below it.
fn within(path: &str, item: &str) -> bool {
    let item = item.trim_start_matches("./").trim_end_matches('/');
    item == "." || path == item || path.starts_with(&format!("{item}/"))
}

#[test]
fn every_file_a_traced_command_touches_is_one_its_reading_names() {
    let strace_ok =
        Command::new("strace").arg("-V").stdout(Stdio::null()).status().is_ok_and(|s| s.success());
    if !strace_ok {
        eprintln!("traced: strace not installed, skipped");
        return;
    }
    let root = std::env::temp_dir().join(format!("portcullis-grammar-traced-{}", std::process::id()));
    let (mut events, mut misses) = (0, Vec::new());
    // The control: the trace must see the writes it is meant to check.
    let mut control = false;
    for (n, line) in COMMANDS.iter().enumerate() {
        let dir: PathBuf = root.join(n.to_string());
        // `@DIR@` stands for the scratch directory (for `file://` URLs, which must be absolute).
        let here = dir.to_string_lossy().into_owned();
        let words: Vec<String> = line.split(' ').map(|w| w.replace("@DIR@", &here)).collect();
        let (program, args) = words.split_first().expect("a program");
        let mut reading = read(program, args).unwrap_or_else(|e| panic!("{line}: not read: {e:?}"));
        for item in reading.items.iter_mut() {
            if let Some(rest) = item.text.strip_prefix(here.as_str()) {
                item.text = rest.trim_start_matches('/');
            }
        }
        std::fs::create_dir_all(&dir).expect("scratch directory");
        fixture(&dir);
        let log = dir.join("..").join(format!("{n}.strace"));
        let status = Command::new("strace")
            .args(["-f", "-qq", "-e", "trace=openat,open,creat,unlink,unlinkat,rename,renameat,renameat2,mkdir,mkdirat,execve,symlink,symlinkat,link,linkat,chdir,fchdir", "-o"])
            .arg(&log)
            .arg(program)
            .args(args)
            .current_dir(&dir)
            .env("TMPDIR", &dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        assert!(status.is_ok(), "{line}: strace did not run");
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let mut renamed_onto_written: HashSet<String> = HashSet::new();
        for l in text.lines().filter(|l| l.contains("rename")) {
            let paths: Vec<&str> = l.split('"').skip(1).step_by(2).collect();
            if let [from, to] = paths[..] {
                let to = to.trim_start_matches("./");
                if reading.items.iter().any(|i| i.role == Role::Writes && within(to, i.text)) {
                    renamed_onto_written.insert(from.trim_start_matches("./").to_string());
                }
            }
        }
        for (index, (path, did)) in touched(&text, &dir).into_iter().enumerate() {
            events += 1;
            control |= *line == "sort -o out a" && path == "out" && did == Did::Write;
            if did == Did::Run && index == 0 {
                continue; // the program itself
            }
            let tree_walk = path.starts_with("<tree>/");
            // A walker opens the working directory to come back to it (find): names, no content.
            let walker = reading.items.iter().any(|i| i.role == Role::ReadsTree);
            if did == Did::Read && path == "." && walker {
                continue;
            }
            let allowed: &[Role] = match did {
                Did::Read => &[
                    Role::Reads,
                    Role::ReadsTree,
                    Role::NamesFiles,
                    Role::Executes,
                    Role::Writes,
                    Role::Script,
                    // Opened to change into it.
                    Role::Chdir,
                ],
                Did::Write => &[Role::Writes],
                Did::Run => &[Role::Executes],
            };
            let covered = reading.items.iter().any(|i| {
                allowed.contains(&i.role)
                    && (within(&path, i.text)
                        || (tree_walk && matches!(i.role, Role::ReadsTree | Role::Writes))
                        || (did == Did::Run && Path::new(&path).file_name().is_some_and(|f| f == i.text)))
            }) || renamed_onto_written.contains(&path)
                // `mkdir -p` creates (and enters) the directories on the way to what it makes.
                // (`install -D` too).
                || (reading.items.iter().any(|i| matches!(i.option, Some("parents" | "D")) && i.role == Role::Flag)
                    && reading.items.iter().any(|i| i.role == Role::Writes && within(i.text, &path)))
                // `sed -iSUFFIX` writes FILE+SUFFIX beside every file it edits.
                || reading.items.iter().any(|s| s.option == Some("in-place") && s.role == Role::Writes
                    && reading.items.iter().any(|f| f.option.is_none() && f.role == Role::Writes
                        && path == format!("{}{}", f.text, s.text)))
                // What a name list (`--files0-from`, `md5sum -c`) names is read through it.
                || (did == Did::Read && reading.items.iter().any(|i| i.role == Role::NamesFiles));
            if !covered {
                misses.push(format!("{line}: {did:?} {path} not in {:?}", reading.items));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    eprintln!(
        "traced: {} commands, {events} file events, {} not named by the reading",
        COMMANDS.len(),
        misses.len()
    );
    assert!(control, "the trace did not see sort -o write its output");
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}
