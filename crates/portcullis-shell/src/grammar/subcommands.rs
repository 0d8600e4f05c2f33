//! The global options of programs driven by a subcommand (cargo, docker, kubectl, npm, pnpm,
//! yarn, go, gh, pip), read by each program's own rules, to place the subcommand
//! (`cargo +nightly publish` → `publish`, `kubectl -n x delete` → `delete`). Only the global
//! options listed are understood; any other option before the subcommand leaves it unplaced.

use super::getopt;
use super::spec::{f, o, v, Grammar, Longs, Order, Parsed};
use super::{Item, Reading, Role, Unread};

use Role::{Chdir, Connects, Executes, Inert, Reads, Writes};

fn placed(_: &mut Parsed<'_>) -> Result<(), Unread> {
    Ok(())
}

/// Options end at the subcommand; long names are exact (clap, cobra, optparse-with-care).
const fn globals(options: &'static [super::spec::Opt]) -> Grammar {
    Grammar { options, longs: Longs::Exact, order: Order::Posix, digits: false, operands: placed }
}

/// cargo (after rustup's `+toolchain`): `--config` takes `KEY=VALUE` or a file, and either can
/// set `build.rustc-wrapper` or a runner.
const CARGO: Grammar = globals(&[
    f("V", "version"),
    f("", "list"),
    v("", "explain", Inert),
    f("v", "verbose"),
    f("q", "quiet"),
    v("", "color", Inert),
    v("C", "", Chdir),
    f("", "locked"),
    f("", "offline"),
    f("", "frozen"),
    v("", "config", Executes),
    v("Z", "", Inert),
    f("h", "help"),
]);

/// docker: the client configuration names credential helpers (programs); `-H` is the daemon.
const DOCKER: Grammar = globals(&[
    v("", "config", Executes),
    v("c", "context", Inert),
    o("D", "debug", Inert),
    v("H", "host", Connects),
    v("l", "log-level", Inert),
    o("", "tls", Inert),
    v("", "tlscacert", Reads),
    v("", "tlscert", Reads),
    v("", "tlskey", Reads),
    o("", "tlsverify", Inert),
    o("v", "version", Inert),
]);

/// kubectl: a kubeconfig can name `exec` credential plugins, so it is run, not read.
const KUBECTL: Grammar = globals(&[
    v("", "as", Inert),
    v("", "as-group", Inert),
    v("", "as-uid", Inert),
    v("", "cache-dir", Writes),
    v("", "certificate-authority", Reads),
    v("", "client-certificate", Reads),
    v("", "client-key", Reads),
    v("", "cluster", Inert),
    v("", "context", Inert),
    o("", "disable-compression", Inert),
    o("", "insecure-skip-tls-verify", Inert),
    v("", "kubeconfig", Executes),
    o("", "match-server-version", Inert),
    v("n", "namespace", Inert),
    v("", "request-timeout", Inert),
    v("s", "server", Connects),
    v("", "tls-server-name", Inert),
    v("", "token", Inert),
    v("", "user", Inert),
    v("v", "v", Inert),
    o("", "warnings-as-errors", Inert),
]);

/// npm takes any `--key=value` as configuration (`--script-shell`, `--node-options` run code),
/// so only these are understood before the command.
const NPM: Grammar = globals(&[
    f("g", "global"),
    v("", "prefix", Chdir),
    v("w", "workspace", Inert),
    f("", "workspaces"),
    f("s", "silent"),
    f("q", "quiet"),
    v("", "loglevel", Inert),
    f("d", ""),
    f("", "json"),
    f("v", "version"),
    f("h", "help"),
]);

const PNPM: Grammar = globals(&[
    v("C", "dir", Chdir),
    v("", "filter", Inert),
    f("r", "recursive"),
    f("w", "workspace-root"),
    f("s", "silent"),
    f("v", "version"),
    f("h", "help"),
]);

const YARN: Grammar = globals(&[v("", "cwd", Chdir), f("s", "silent"), f("v", "version"), f("h", "help")]);

/// pip: `--python` runs another interpreter; `--log` is written.
const PIP: Grammar = globals(&[
    f("", "isolated"),
    f("v", "verbose"),
    f("q", "quiet"),
    v("", "log", Writes),
    v("", "proxy", Connects),
    v("", "retries", Inert),
    v("", "timeout", Inert),
    v("", "cert", Reads),
    v("", "client-cert", Reads),
    v("", "cache-dir", Writes),
    f("", "no-cache-dir"),
    f("", "disable-pip-version-check"),
    f("", "no-color"),
    f("", "no-input"),
    v("", "python", Executes),
    f("", "require-virtualenv"),
    f("", "no-python-version-warning"),
    f("V", "version"),
    f("h", "help"),
]);

/// Programs whose subcommand must be the first word (`go`, `gh`).
const NONE: Grammar = globals(&[]);

/// The subcommand of `program`, after its global options, with their items.
pub(crate) fn place<'a>(program: &str, args: &'a [String]) -> Option<Reading<'a>> {
    let (grammar, from) = match program {
        "cargo" => (&CARGO, usize::from(args.first().is_some_and(|a| a.starts_with('+')))),
        "docker" => (&DOCKER, 0),
        "kubectl" => (&KUBECTL, 0),
        "npm" => (&NPM, 0),
        "pnpm" => (&PNPM, 0),
        "yarn" => (&YARN, 0),
        "pip" | "pip3" => (&PIP, 0),
        "python" | "python3" => return python_m_pip(args),
        "go" | "gh" => (&NONE, 0),
        _ => return None,
    };
    let parsed = getopt::split(grammar, args, from).ok()?;
    let mut items: Vec<Item<'a>> = Vec::new();
    if from == 1 {
        items.push(Item { text: &args[0], role: Inert, option: Some("+toolchain") });
    }
    // The subcommand is the first operand: the word whose text is that very slice.
    let sub = parsed.operands.first().map(|&i| parsed.items[i].text);
    let at = sub.and_then(|s| args.iter().position(|a| std::ptr::eq(a.as_str(), s))).unwrap_or(args.len());
    items.extend(parsed.items.into_iter().filter(|i| i.option.is_some()));
    // `--` before any subcommand: what follows is not a subcommand the program would run.
    if items.iter().any(|i| i.option == Some("--")) {
        return None;
    }
    Some(Reading::placed(args, at, items))
}

/// `python3 -m pip …` is pip.
fn python_m_pip(args: &[String]) -> Option<Reading<'_>> {
    match args {
        [m, pip, rest @ ..] if m == "-m" && pip == "pip" => {
            let mut reading = place("pip", rest)?;
            reading.items.insert(0, Item { text: pip, role: Executes, option: Some("m") });
            reading.subcommand_at = reading.subcommand_at.map(|at| at + 2);
            Some(reading)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};

    use super::super::spec::Arity;
    use super::{Grammar, CARGO, DOCKER, KUBECTL, PIP};

    /// Every global option listed, spelled long and short with a value when it takes one, before
    /// a harmless subcommand, is known to the installed program (its own "unknown option"
    /// diagnostic does not appear). Run in a scratch directory.
    #[test]
    fn the_installed_programs_know_every_global_option_the_tables_list() {
        let programs: [(&str, &Grammar, &[&str], &str); 4] = [
            ("cargo", &CARGO, &["version"], "unexpected argument"),
            ("pip", &PIP, &["help"], "no such option"),
            ("kubectl", &KUBECTL, &["version", "--client"], "unknown"),
            ("docker", &DOCKER, &["--version"], "unknown"),
        ];
        let dir = std::env::temp_dir().join(format!("portcullis-grammar-globals-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        let (mut checked, mut unknown, mut skipped) = (0, Vec::new(), Vec::new());
        for (program, grammar, probe, refusal) in programs {
            let present =
                Command::new(program).args(probe).stdout(Stdio::null()).stderr(Stdio::null()).status();
            if !present.is_ok_and(|s| s.success()) {
                skipped.push(program);
                continue;
            }
            // The control: a made-up option must be seen as unknown, or the check proves nothing.
            let control =
                Command::new(program).arg("--portcullis-frob").args(probe).current_dir(&dir).output();
            let err = control.map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).unwrap_or_default();
            assert!(err.lines().any(|l| l.contains(refusal)), "{program}: control not refused: {err}");
            for opt in grammar.options {
                let value: &[&str] = match (opt.long, opt.arity) {
                    ("color", _) => &["auto"],
                    ("log-level", _) => &["info"],
                    (_, Arity::Required(_)) => &["1"],
                    _ => &[],
                };
                let spellings = [
                    (!opt.long.is_empty()).then(|| format!("--{}", opt.long)),
                    opt.short.map(|c| format!("-{c}")),
                ];
                for word in spellings.into_iter().flatten() {
                    checked += 1;
                    let out = Command::new(program)
                        .arg(&word)
                        .args(value)
                        .args(probe)
                        .current_dir(&dir)
                        .stdin(Stdio::null())
                        .output();
                    let err =
                        out.map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).unwrap_or_default();
                    if err.lines().any(|l| l.contains(refusal) && l.contains(word.trim_start_matches('-'))) {
                        unknown.push(format!("{program} {word}: {err}"));
                    }
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        eprintln!(
            "global options: {checked} spellings checked, {} unknown, skipped {skipped:?}",
            unknown.len()
        );
        assert!(unknown.is_empty(), "{}", unknown.join("\n"));
    }
}
