//! Policy reload: the rules (the config file, `--permission-config` files, the managed file) and
//! the rubrics directory are re-read when any of them changes, without a restart.
//!
//! The files are polled — a content digest each interval — rather than watched through inotify:
//! editors replace files by rename, configs live on bind mounts and in ConfigMaps (symlink swaps),
//! and a digest of a few small files a second costs nothing. A change that does not parse or
//! validate keeps the last good policy, and the log says why; listeners, upstreams and limits are
//! read at start only.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::runtime::Shared;

/// Loads the whole configuration again, from the same sources as at start.
pub type Loader = Box<dyn Fn() -> Result<Config, String> + Send + Sync>;

/// Why a policy change was not applied (the last good policy stays).
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// The files did not read, parse or validate: every problem, as the loader reported them.
    #[error("{0}")]
    Load(String),
    #[error("the checker cannot be built")]
    Checker(#[source] crate::checker::openai::ClientError),
    #[error("agent identities cannot be set up")]
    Identity(#[source] crate::identity::IdentityError),
}

/// What a reload watches and how it loads.
pub struct Reload {
    /// Files whose change triggers a reload (the rubrics directory is added from the config).
    pub files: Vec<PathBuf>,
    pub load: Loader,
    pub interval: Duration,
}

/// One digest over every watched file (and every rubric file): missing files count too.
fn fingerprint(files: &[PathBuf], rubrics: Option<&Path>) -> [u8; 32] {
    let mut h = Sha256::new();
    let mut add = |p: &Path| {
        h.update(p.as_os_str().as_encoded_bytes());
        match std::fs::read(p) {
            Ok(bytes) => {
                h.update(b"\x01");
                h.update(Sha256::digest(&bytes));
            }
            Err(_) => h.update(b"\x00"),
        }
    };
    for f in files {
        add(f);
    }
    if let Some(dir) = rubrics {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|d| {
                d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "md")).collect()
            })
            .unwrap_or_default();
        entries.sort();
        for e in &entries {
            add(e);
        }
    }
    h.finalize().into()
}

fn rubrics_dir(shared: &Shared, config: Option<&Config>) -> Option<PathBuf> {
    match config {
        Some(c) => c.policy.guardrails.as_ref().and_then(|g| g.rubrics_dir.clone()),
        None => shared.guard.load().rubrics_dir().map(Path::to_path_buf),
    }
}

/// Polls until `stop` resolves, swapping in each new good policy.
pub async fn run(shared: Arc<Shared>, reload: Reload, stop: impl std::future::Future<Output = ()>) {
    let mut rubrics = rubrics_dir(&shared, None);
    let mut seen = fingerprint(&reload.files, rubrics.as_deref());
    let poll = async {
        loop {
            tokio::time::sleep(reload.interval).await;
            let now = fingerprint(&reload.files, rubrics.as_deref());
            if now == seen {
                continue;
            }
            seen = now;
            match (reload.load)().map_err(ReloadError::Load).and_then(|c| {
                if let Some(why) = crate::sandbox::refusal(&c) {
                    return Err(ReloadError::Load(why));
                }
                let guard = shared.guard.load().reload(&c.policy).map_err(ReloadError::Checker)?;
                let ids =
                    crate::identity::Identities::build(&c.policy.identity, Some(&shared.identities.load()))
                        .map_err(ReloadError::Identity)?;
                Ok((c, guard, ids))
            }) {
                Ok((config, guard, ids)) => {
                    rubrics = rubrics_dir(&shared, Some(&config));
                    // The rubrics directory may have moved: fingerprint what is watched now.
                    seen = fingerprint(&reload.files, rubrics.as_deref());
                    // Credentials first: an agent the new config removed is refused at the door
                    // before its old policy could be swapped back in under it.
                    shared.identities.store(Arc::new(ids));
                    crate::runtime::share_verdicts(&guard, &shared.store);
                    guard.export_rules();
                    shared.guard.store(Arc::new(guard));
                    // A configured agent removed takes every credential it delegated with it.
                    let agents = &config.policy.identity.agents;
                    shared.delegations.retain_roots(|root| agents.contains_key(root));
                    tracing::info!(
                        rules = config.policy.engine.rules().len(),
                        agents = config.policy.identity.agents.len(),
                        guardrails = config.policy.guardrails.as_ref().map_or(0, |g| g.rules.0.len()),
                        "policy reloaded"
                    );
                }
                Err(e) => {
                    tracing::error!(error = %crate::runtime::Chain(&e), "policy change not applied; keeping the last good policy")
                }
            }
        }
    };
    tokio::select! {
        () = poll => {}
        () = stop => {}
    }
}
