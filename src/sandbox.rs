//! Sandbox first: a posture that allows nearly everything (`auto`, `yolo`) is for a machine that
//! can be thrown away. Asked for while running as root outside a sandbox, the proxy refuses to
//! start and says why and how — one wrong line of policy there would be root's.
//!
//! A sandbox says so with `PORTCULLIS_SANDBOX=1` or `IS_SANDBOX=1` (the marker containers and
//! agent sandboxes set); nothing is detected by guessing.

use crate::config::Config;
use crate::rules::Posture;

/// The variables that mark a sandbox (either, set to `1`).
pub const MARKERS: [&str; 2] = ["PORTCULLIS_SANDBOX", "IS_SANDBOX"];

/// Why `config` may not run here, or `None` when it may.
pub fn refusal(config: &Config) -> Option<String> {
    let marked = MARKERS.iter().any(|v| std::env::var_os(v).is_some_and(|x| x == "1"));
    let root = rustix::process::geteuid().is_root();
    refused(root, marked, postures(config))
}

/// Every posture the config asks for: the config's, and each agent's, with where it is set.
fn postures(config: &Config) -> Vec<(String, Posture)> {
    let mut out = vec![("posture".to_owned(), config.policy.engine.posture())];
    for (name, spec) in &config.policy.identity.agents {
        out.push((format!("agents.{name}.posture"), spec.engine.posture()));
    }
    out
}

fn refused(root: bool, marked: bool, postures: Vec<(String, Posture)>) -> Option<String> {
    if !root || marked {
        return None;
    }
    let open: Vec<String> = postures
        .into_iter()
        .filter(|(_, p)| matches!(p, Posture::Auto | Posture::Yolo))
        .map(|(at, p)| format!("{at}: {}", name(p)))
        .collect();
    if open.is_empty() {
        return None;
    }
    Some(format!(
        "refusing to start: {} allows nearly every call, and this process runs as root outside a \
         sandbox. Run it as an unprivileged user, or inside a container or VM you can throw away \
         and set PORTCULLIS_SANDBOX=1 (or IS_SANDBOX=1) there, or choose posture strict or trusted",
        open.join(", ")
    ))
}

fn name(p: Posture) -> &'static str {
    match p {
        Posture::Strict => "strict",
        Posture::Trusted => "trusted",
        Posture::Auto => "auto",
        Posture::Yolo => "yolo",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(p: Posture) -> Vec<(String, Posture)> {
        vec![("posture".into(), Posture::Strict), ("agents.dev.posture".into(), p)]
    }

    #[test]
    fn an_allow_all_posture_as_root_outside_a_sandbox_is_refused_and_nothing_else_is() {
        for (root, marked, posture, refused_) in [
            (true, false, Posture::Yolo, true),
            (true, false, Posture::Auto, true),
            (true, false, Posture::Trusted, false),
            (true, false, Posture::Strict, false),
            (true, true, Posture::Yolo, false),
            (false, false, Posture::Yolo, false),
        ] {
            let why = refused(root, marked, at(posture));
            assert_eq!(why.is_some(), refused_, "root {root}, marked {marked}, {posture:?}: {why:?}");
            if let Some(why) = why {
                assert!(why.contains("agents.dev.posture: "), "names where it is set: {why}");
                assert!(why.contains("PORTCULLIS_SANDBOX=1"), "says how: {why}");
            }
        }
    }
}
