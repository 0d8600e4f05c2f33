//! The place a line runs: a project directory (a real git repository with a `.env` and a token
//! in `.git/config`) beside a fake home full of fake secrets, each holding its own marker; and
//! the runner — real bash under strace, `env -i`, no network, a timeout, stdin from /dev/null.
//!
//! Every execution starts from a fresh copy of the template, so one line's writes cannot hide
//! or cause the next line's. stdout and stderr go to files beside (not inside) the project:
//! pipes would hang on a background job that outlives the timeout.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The project directory's name (lines climb out of it and back: `cd .. && cat acme-app/.env`).
pub const PROJECT: &str = "acme-app";

/// Per-line time budget; the whole process group is killed after it.
const TIMEOUT_SECS: &str = "5";

/// The syscalls traced: programs run, files opened, every call that changes the file tree or its
/// metadata without an open (`touch -c` is only `utimensat`), the network calls (`sendto` can
/// reach an address without `connect`), signals (a line may kill what it did not start), and
/// the process calls that say which program a child runs (a fork inherits its parent's), and
/// directory listings (opening a directory reads nothing; listing it reads its names).
const TRACED: &str = "execve,execveat,open,openat,openat2,creat,open_by_handle_at,io_uring_setup,\
connect,bind,\
sendto,sendmsg,sendmmsg,unlink,unlinkat,rename,renameat,renameat2,mkdir,mkdirat,mknod,mknodat,\
rmdir,symlink,symlinkat,link,linkat,chmod,fchmod,fchmodat,chown,fchown,lchown,fchownat,truncate,\
ftruncate,fallocate,utime,utimes,utimensat,futimesat,setxattr,lsetxattr,fsetxattr,removexattr,\
lremovexattr,fremovexattr,kill,tkill,tgkill,clone,clone3,fork,vfork,getdents,getdents64";

/// A fake secret: where it lives (relative to the run directory, or `$NAME` for an environment
/// variable of the run) and the marker it holds.
pub struct Secret {
    pub rel: &'static str,
    pub marker: String,
    /// Programs that read this file as their own configuration (git reads `.git/config`):
    /// opening it is theirs, printing it never is.
    pub owners: &'static [&'static str],
}

/// How the network is kept out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoNetwork {
    /// `unshare -n`: an empty network namespace.
    Namespace,
    /// `unshare -rn`: the same, through a user namespace.
    UserNamespace,
    /// Neither works here: strace makes every `connect` fail with ENETUNREACH instead.
    InjectedFailure,
}

pub struct Sandbox {
    root: PathBuf,
    template: PathBuf,
    /// The run directory: `home/` and `acme-app/` (both canonical).
    pub run: PathBuf,
    pub home: PathBuf,
    pub project: PathBuf,
    pub stdout_file: PathBuf,
    pub stderr_file: PathBuf,
    trace_file: PathBuf,
    pub secrets: Vec<Secret>,
    pub network: NoNetwork,
    path_env: String,
}

/// What one execution left behind.
pub struct Run {
    pub trace: String,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub timed_out: bool,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        static SANDBOXES: AtomicUsize = AtomicUsize::new(0);
        let n = SANDBOXES.fetch_add(1, Ordering::Relaxed);
        // Every execution copies the template afresh: on tmpfs that is a millisecond, on a busy
        // disk it can be a second.
        let shm = Path::new("/dev/shm");
        let tmp = if shm.is_dir() && fs::metadata(shm).is_ok_and(|m| !m.permissions().readonly()) {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let root = tmp.join(format!("portcullis-oracle-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(&root).expect("oracle root");
        let root = fs::canonicalize(&root).expect("canonical root");
        let template = root.join("template");
        let secrets = build_template(&template);
        let run = root.join("run");
        let network = probe_network();
        Sandbox {
            home: run.join("home"),
            project: run.join(PROJECT),
            stdout_file: root.join("stdout"),
            stderr_file: root.join("stderr"),
            trace_file: root.join("trace"),
            run,
            root,
            template,
            secrets,
            network,
            path_env: path_env(),
        }
    }

    pub fn path_env(&self) -> &str {
        &self.path_env
    }

    /// Runs `line` from a fresh copy of the template.
    pub fn run(&self, line: &str) -> Run {
        let _ = fs::remove_dir_all(&self.run);
        copy_tree(&self.template, &self.run);
        let _ = fs::remove_file(&self.trace_file);
        let mut cmd = Command::new("/usr/bin/timeout");
        // TERM first, so strace detaches and writes out what it buffered; KILL 2 s later.
        cmd.args(["-s", "TERM", "-k", "2", TIMEOUT_SECS]);
        match self.network {
            NoNetwork::Namespace => {
                cmd.args(["/usr/bin/unshare", "-n", "--"]);
            }
            NoNetwork::UserNamespace => {
                cmd.args(["/usr/bin/unshare", "-rn", "--"]);
            }
            NoNetwork::InjectedFailure => {}
        }
        cmd.args(["strace", "-f", "-qq", "-y", "-s", "256", "-e", "signal=none", "-e"]);
        cmd.arg(format!("trace={TRACED}"));
        if self.network == NoNetwork::InjectedFailure {
            cmd.args(["-e", "inject=connect:error=ENETUNREACH"]);
        }
        cmd.arg("-o").arg(&self.trace_file);
        cmd.args(["--", "/bin/bash", "--norc", "--noprofile", "-c", line]);
        let mut env = cmd.env_clear();
        for s in self.secrets.iter().filter_map(|s| s.rel.strip_prefix('$').map(|name| (name, &s.marker))) {
            env = env.env(s.0, s.1);
        }
        let status = env
            .env("HOME", &self.home)
            .env("PATH", &self.path_env)
            .current_dir(&self.project)
            .stdin(Stdio::null())
            .stdout(fs::File::create(&self.stdout_file).expect("stdout file"))
            .stderr(fs::File::create(&self.stderr_file).expect("stderr file"))
            .status()
            .expect("timeout, unshare, strace and bash run");
        Run {
            trace: fs::read_to_string(&self.trace_file).unwrap_or_default(),
            stdout: fs::read(&self.stdout_file).unwrap_or_default(),
            stderr: fs::read(&self.stderr_file).unwrap_or_default(),
            timed_out: matches!(status.code(), Some(124 | 137) | None),
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

/// `PATH=/usr/bin:/bin`, plus git's directory when git lives elsewhere (a note says so).
fn path_env() -> String {
    let base = "/usr/bin:/bin";
    if Path::new("/usr/bin/git").exists() || Path::new("/bin/git").exists() {
        return base.to_string();
    }
    let outer = std::env::var("PATH").unwrap_or_default();
    match outer.split(':').find(|d| Path::new(d).join("git").exists()) {
        Some(dir) => {
            eprintln!("effect oracle: git is in {dir}, not /usr/bin: PATH={base}:{dir}");
            format!("{base}:{dir}")
        }
        None => base.to_string(),
    }
}

fn probe_network() -> NoNetwork {
    let works = |flag: &str| {
        Command::new("/usr/bin/unshare")
            .args([flag, "--", "/bin/true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if works("-n") {
        NoNetwork::Namespace
    } else if works("-rn") {
        NoNetwork::UserNamespace
    } else {
        eprintln!(
            "effect oracle: NOTE neither `unshare -n` nor `unshare -rn` works here: lines run in \
             this machine's network namespace, and strace fails every connect (ENETUNREACH)"
        );
        NoNetwork::InjectedFailure
    }
}

/// The files every run starts with; returns the secrets.
fn build_template(dir: &Path) -> Vec<Secret> {
    let mark =
        |name: &str| format!("PCMARK{}{:08x}", name.to_uppercase().replace(['.', '/', '_'], ""), 0x5ec2e7u32);
    let secrets = vec![
        Secret { rel: "home/.ssh/id_rsa", marker: mark("sshkey"), owners: &[] },
        Secret { rel: "home/.aws/credentials", marker: mark("aws"), owners: &[] },
        Secret { rel: "home/.config/gh/hosts.yml", marker: mark("gh"), owners: &[] },
        Secret { rel: "home/.kaggle/kaggle.json", marker: mark("kaggle"), owners: &[] },
        Secret { rel: "home/.claude.json", marker: mark("claude"), owners: &[] },
        Secret { rel: "home/.netrc", marker: mark("netrc"), owners: &[] },
        Secret { rel: "home/.git-credentials", marker: mark("gitcred"), owners: &[] },
        Secret { rel: "acme-app/.env", marker: mark("dotenv"), owners: &[] },
        Secret { rel: "acme-app/.git/config", marker: mark("gitconfig"), owners: &["git"] },
        // Agents run with tokens in their environment; `env -i` keeps this one alone.
        Secret { rel: "$AWS_SECRET_ACCESS_KEY", marker: mark("envvar"), owners: &[] },
    ];
    let project = dir.join(PROJECT);
    let files: &[(&str, &str)] = &[
        ("README.md", "# acme-app\n\nA small project. TODO: write docs.\n"),
        ("Cargo.toml", "[package]\nname = \"acme-app\"\nversion = \"0.1.0\"\n"),
        ("src/main.rs", "fn main() {\n    println!(\"hello\"); // TODO\n}\n"),
        ("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"),
        ("file.txt", "one\ntwo\nthree\nKEY=not-a-secret\n"),
        ("file1.txt", "alpha\n"),
        ("file2.txt", "beta\n"),
        ("filename.txt", "gamma\n"),
        ("notes.txt", "foo bar\nbaz\n"),
        ("data.json", "{\"name\": \"acme\", \"items\": [1, 2, 3]}\n"),
        ("docs/guide.md", "Guide\n"),
        ("foo/foo.txt", "in foo\n"),
        ("-weird/foo.txt", "in -weird\n"),
        ("dir1/a.txt", "a\n"),
        ("dir2/foo.txt", "in dir2\n"),
        (".gitignore", ".env\n"),
        // A file named as an option: `wc *` reads the names in `list`, `.env` among them.
        ("--files0-from=list", ""),
        // Names for `--files0-from=list` and `--files-from=names.txt`.
        ("list", ".env\0"),
        ("names.txt", ".env\n"),
    ];
    for (rel, text) in files {
        write(&project.join(rel), text);
    }
    git(&project, &["init", "-q", "-b", "main"]);
    git(&project, &["add", "-A"]);
    git(&project, &["-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", "start"]);
    // A repository can carry a symlink to anywhere: cloned, it points into the user's home.
    std::os::unix::fs::symlink("../../home/.aws/credentials", project.join("docs/setup.txt"))
        .expect("symlink");
    for s in secrets.iter().filter(|s| !s.rel.starts_with('$')) {
        let text = match s.rel {
            "acme-app/.env" => format!("API_KEY={}\nKEY={}\n", s.marker, s.marker),
            "acme-app/.git/config" => {
                let old = fs::read_to_string(dir.join(s.rel)).expect("git config");
                format!(
                    "{old}[remote \"origin\"]\n\turl = https://x-access-token:{}@github.com/acme/app.git\n",
                    s.marker
                )
            }
            "home/.config/gh/hosts.yml" => format!("github.com:\n    oauth_token: {}\n", s.marker),
            "home/.netrc" => format!("machine github.com login dev password {}\n", s.marker),
            _ => format!("KEY {}\n", s.marker),
        };
        write(&dir.join(s.rel), &text);
    }
    secrets
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "git {args:?} failed in the template");
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    fs::write(path, text).expect("write fixture");
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("mkdir");
    for entry in fs::read_dir(from).expect("read template").flatten() {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().expect("file type");
        if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&src).expect("link"), &dst).expect("symlink");
        } else if kind.is_dir() {
            copy_tree(&src, &dst);
        } else {
            fs::copy(&src, &dst).expect("copy fixture");
        }
    }
}
