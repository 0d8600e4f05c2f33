//! The policy as the command line assembles it: the main config (or the embedded default), then
//! `--permission-config` files (scope cli), the managed file `PORTCULLIS_MANAGED_CONFIG` names
//! (scope managed) and, when asked, Claude Code's own rules ([`super::claude_import`]) — every
//! problem reported at once, every warning printed. Given a workspace, the user and workspace
//! tiers ([`super::tiers`]) are laid under the operator's layers.

use std::path::{Path, PathBuf};

use super::{read_file, Config, ConfigError, DEFAULT_YAML};
use crate::rules::Scope;

/// An extra permissions file and its scope (`--permission-config`, the managed file).
#[derive(Debug, Clone)]
pub struct Layer {
    pub scope: Scope,
    pub name: String,
    pub text: String,
}

impl Layer {
    pub fn read(scope: Scope, path: &Path) -> Result<Layer, ConfigError> {
        read_file(path).map(|(name, text)| Layer { scope, name, text })
    }
}

/// Where a policy is assembled from, beyond the main config file.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sources<'a> {
    /// `--permission-config` files (scope cli).
    pub extra: &'a [PathBuf],
    /// The project whose Claude Code rules are imported.
    pub claude: Option<&'a Path>,
    /// The workspace whose tiers apply (the hook's `cwd`, `--workspace`).
    pub workspace: Option<&'a Path>,
}

/// Loads the layered policy; `claude`: the project whose Claude Code rules are imported.
pub fn load(path: Option<&PathBuf>, extra: &[PathBuf], claude: Option<&Path>) -> Result<Config, String> {
    load_from(path, Sources { extra, claude, workspace: None })
}

/// Loads the layered policy from `path` and `sources`.
pub fn load_from(path: Option<&PathBuf>, sources: Sources<'_>) -> Result<Config, String> {
    let Sources { extra, claude, workspace } = sources;
    let (text, name) = match path {
        Some(p) => (
            std::fs::read_to_string(p).map_err(|e| format!("reading {}: {e}", p.display()))?,
            p.display().to_string(),
        ),
        None => (DEFAULT_YAML.to_owned(), "embedded config/portcullis.yaml".to_owned()),
    };
    let mut layers = Vec::new();
    for p in extra {
        layers.push(Layer::read(Scope::Cli, p).map_err(|e| e.to_string())?);
    }
    if let Some(m) = std::env::var_os("PORTCULLIS_MANAGED_CONFIG") {
        layers.push(Layer::read(Scope::Managed, Path::new(&m)).map_err(|e| e.to_string())?);
    }
    if let Some(project) = claude {
        let (imported, lost) = super::claude_import::layers(project, home().as_deref());
        for note in lost {
            eprintln!("portcullis: warning: claude permissions: {note}");
        }
        layers.extend(imported);
    }
    if let Some(dir) = workspace {
        let files = super::tiers::Files::new(Some(super::tiers::workspace_at(dir)?));
        let tiers = files.load()?;
        for note in &tiers.notes {
            eprintln!("portcullis: warning: {note}");
        }
        layers.extend(tiers.layers);
    }
    let config = Config::parse_layered(&text, &name, &layers).map_err(|e| e.to_string())?;
    for w in &config.warnings {
        eprintln!("portcullis: warning: {}: {}", w.path, w.message);
    }
    Ok(config)
}

pub use super::home::home;
