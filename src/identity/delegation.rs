//! Delegated agents: an authenticated agent mints a credential for a child that can only do less.
//!
//! A [`Grant`] records the child's narrowing (deny and ask rules, a profile, an upstream
//! allowlist) and every ancestor's, from the configured root down. Nothing about the child's
//! authority is frozen at minting: a call is decided with the root's *current* engine narrowed by
//! each grant of the chain in turn (see [`crate::gate::Guard`]), so a reload that narrows the root
//! narrows every descendant, and a root the reload removes takes its descendants with it.
//!
//! The store lives for the process (in [`crate::runtime::Shared`]), not per config generation: a
//! reload does not log children out. It keeps only SHA-256 digests of the tokens, is bounded in
//! all and per root agent, and drops expired grants as it goes. Revoking a grant revokes its
//! descendants: a child never outlives its parent (its expiry is within its parent's, too).
//!
//! Nor does it outlive the credential its root minted it under: a child's expiry is within every
//! ancestor's credential's (a JWT's `exp`), and each grant remembers the [`Provenance`] of its
//! root's credential, which the door holds against the current identities on every lookup
//! ([`super::Identities::authenticate_with`]): a rotated static token or a signing key the
//! provider dropped takes every grant minted under it with it ([`Delegations::withdraw`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

mod request;

use super::{Agent, AuthError, Credential, Provenance};
use crate::config::agents::DelegationSettings;
use crate::rules::kinds::ToolKinds;
use crate::rules::{Layered, Profile};
use request::compile_rules;
pub use request::{MintError, MintRequest};

/// Every delegated token starts with this, so the door knows where to look it up.
pub const TOKEN_PREFIX: &str = "pcd_";
/// The largest minting request read.
pub const MAX_BODY: usize = 16 * 1024;
/// Live grants in all.
const MAX_GRANTS: usize = 4096;
/// Live grants under one configured agent, so one agent cannot fill the store for the others.
const MAX_PER_ROOT: usize = 256;
/// Rules one grant may add.
const MAX_RULES: usize = 64;
/// How often a lookup sweeps expired grants (minting always does).
const PURGE_EVERY: Duration = Duration::from_secs(10);

/// A live delegation.
#[derive(Debug)]
pub struct Grant {
    pub id: Arc<str>,
    /// The child, as it authenticates.
    pub agent: Agent,
    /// The ids of the grants above this one, nearest first (empty: a configured agent's child).
    pub ancestors: Vec<Arc<str>>,
    /// Every narrowing from the root's down, this grant's last.
    pub chain: Arc<[Arc<Layered>]>,
    /// The upstreams the child may call (the intersection down the chain); `None`: any.
    pub upstreams: Option<Arc<[Arc<str>]>>,
    pub expires: SystemTime,
    digest: [u8; 32],
}

impl Grant {
    /// Whether the grant allows calls to `upstream`.
    pub fn reaches(&self, upstream: &str) -> bool {
        self.upstreams.as_ref().is_none_or(|u| u.iter().any(|a| &**a == upstream))
    }

    /// The profile it decides under, given its root's current one.
    pub fn profile(&self, root: Profile) -> Profile {
        self.chain.iter().filter_map(|l| l.profile).fold(root, Profile::min)
    }
}

/// What the proxy knows at minting time: the current policy.
pub struct Minting<'a> {
    pub settings: DelegationSettings,
    /// The root agent's current profile (its configured one, else standard).
    pub root_profile: Profile,
    pub kinds: &'a ToolKinds,
    /// Whether an upstream is configured.
    pub upstream: &'a dyn Fn(&str) -> bool,
}

/// A freshly minted credential. The token is shown once and never stored.
#[derive(Debug)]
pub struct Minted {
    pub id: Arc<str>,
    pub token: String,
    pub agent: Arc<str>,
    pub expires: SystemTime,
}

/// The live grants, shared by every worker and kept across reloads.
#[derive(Debug)]
pub struct Delegations {
    table: Mutex<Table>,
    capacity: usize,
    per_root: usize,
}

#[derive(Debug)]
struct Table {
    grants: HashMap<Arc<str>, Arc<Grant>>,
    by_digest: HashMap<[u8; 32], Arc<str>>,
    /// By the child's agent id (unique among live grants).
    by_agent: HashMap<Arc<str>, Arc<str>>,
    swept: SystemTime,
}

impl Default for Delegations {
    fn default() -> Self {
        Delegations::with_capacity(MAX_GRANTS, MAX_PER_ROOT)
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn random<const N: usize>() -> Result<[u8; N], MintError> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).map_err(|_| MintError::Random)?;
    Ok(b)
}

fn label_ok(s: &str) -> bool {
    (1..=32).contains(&s.len())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

impl Table {
    fn remove(&mut self, id: &str) {
        if let Some(g) = self.grants.remove(id) {
            self.by_digest.remove(&g.digest);
            self.by_agent.remove(&g.agent.id);
        }
    }

    /// Removes every grant `doomed` picks.
    fn remove_where(&mut self, doomed: impl Fn(&Grant) -> bool) -> usize {
        let ids: Vec<Arc<str>> = self.grants.values().filter(|g| doomed(g)).map(|g| g.id.clone()).collect();
        for id in &ids {
            self.remove(id);
        }
        ids.len()
    }

    fn purge(&mut self, now: SystemTime) {
        self.remove_where(|g| g.expires <= now);
        self.swept = now;
    }

    fn live_agent(&self, agent_id: &str, now: SystemTime) -> Option<&Arc<Grant>> {
        self.by_agent.get(agent_id).and_then(|id| self.grants.get(id)).filter(|g| g.expires > now)
    }
}

impl Delegations {
    /// A store holding at most `capacity` live grants, `per_root` under one configured agent.
    pub fn with_capacity(capacity: usize, per_root: usize) -> Delegations {
        Delegations {
            table: Mutex::new(Table {
                grants: HashMap::new(),
                by_digest: HashMap::new(),
                by_agent: HashMap::new(),
                swept: UNIX_EPOCH,
            }),
            capacity,
            per_root,
        }
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        // The table is consistent between statements; a panic elsewhere leaves it usable.
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Live grants.
    pub fn len(&self) -> usize {
        self.table().grants.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The agent a delegated token (`pcd_…`) stands for, while its grant lives.
    pub fn authenticate(&self, token: &str, now: SystemTime) -> Result<Agent, AuthError> {
        // Remembered per worker thread once accepted ([`super::seen`]); the grant is looked up
        // and its expiry checked on every call.
        let (d, remembered) = super::seen::digest(token);
        let mut t = self.table();
        if now.duration_since(t.swept).unwrap_or_default() >= PURGE_EVERY {
            t.purge(now);
        }
        let Some(id) = t.by_digest.get(&d).cloned() else {
            return Err(AuthError::Invalid("the delegated credential is unknown or was revoked"));
        };
        let Some(g) = t.grants.get(&id).cloned() else {
            return Err(AuthError::Invalid("the delegated credential is unknown or was revoked"));
        };
        if g.expires <= now {
            t.remove(&id);
            return Err(AuthError::Invalid("the delegated credential has expired"));
        }
        if !remembered {
            super::seen::keep(token, &d);
        }
        Ok(g.agent.clone())
    }

    /// Drops every grant minted under a credential with this provenance (its token was rotated,
    /// or its signing key left the key set). Returns how many went.
    pub fn withdraw(&self, provenance: &Provenance) -> usize {
        let n = self.table().remove_where(|g| g.agent.credential.provenance == *provenance);
        if n > 0 {
            tracing::info!(
                revoked = n,
                "delegations withdrawn: the credential they were minted under is gone"
            );
        }
        n
    }

    /// The live grant behind a delegated agent's id.
    pub fn grant_of(&self, agent_id: &str, now: SystemTime) -> Option<Arc<Grant>> {
        self.table().live_agent(agent_id, now).cloned()
    }

    /// Mints a credential for a child of `parent` (a configured agent or a delegated one).
    pub fn mint(
        &self,
        parent: &Agent,
        req: MintRequest,
        m: &Minting<'_>,
        now: SystemTime,
    ) -> Result<Minted, MintError> {
        // What can be judged from the request alone, before the table is locked.
        if let Some(n) = req.name.as_deref().filter(|n| !label_ok(n)) {
            return Err(MintError::BadRequest(format!(
                "name {n:?}: use 1 to 32 letters, digits, '.', '_' or '-'"
            )));
        }
        let profile = match req.profile.as_deref() {
            None => None,
            Some(p) => Some(Profile::parse(p).ok_or_else(|| {
                MintError::BadRequest(format!("profile {p:?} is not one of readonly, standard, privileged"))
            })?),
        };
        let ttl = match req.ttl.as_deref() {
            None => None,
            Some(t) => match crate::config::units::duration(t) {
                Ok(d) if d.is_zero() => {
                    return Err(MintError::BadRequest("ttl must be longer than zero".into()))
                }
                Ok(d) => Some(d),
                Err(e) => return Err(MintError::BadRequest(format!("ttl: {e}"))),
            },
        };
        if let Some(t) = ttl.filter(|t| *t > m.settings.max_ttl) {
            return Err(MintError::Forbidden(format!(
                "ttl {t:?} is longer than delegation.max_ttl ({:?})",
                m.settings.max_ttl
            )));
        }
        let requested = match req.upstreams {
            None => None,
            Some(list) => {
                if list.len() > 64 {
                    return Err(MintError::BadRequest("at most 64 upstreams".into()));
                }
                if let Some(u) = list.iter().find(|u| !(m.upstream)(u)) {
                    return Err(MintError::BadRequest(format!("upstream {u:?} is not configured")));
                }
                let mut list: Vec<Arc<str>> = list.into_iter().map(Arc::from).collect();
                list.sort();
                list.dedup();
                Some(list)
            }
        };
        let rules = compile_rules(req.deny, req.ask, m.kinds)?;
        let id: Arc<str> = hex(&random::<8>()?).into();
        let token = {
            use base64::Engine;
            let secret = random::<32>()?;
            format!("{TOKEN_PREFIX}{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret))
        };
        let label = req.name.unwrap_or_else(|| id.to_string());
        let child_id: Arc<str> = format!("{}>{label}", parent.id).into();

        let mut t = self.table();
        t.purge(now);
        let (ancestors, chain, inherited, grant_expires) = if parent.delegated_by.is_empty() {
            (Vec::new(), Vec::new(), None, None)
        } else {
            let g = t.live_agent(&parent.id, now).ok_or(MintError::ParentGone)?;
            let mut ancestors = Vec::with_capacity(g.ancestors.len() + 1);
            ancestors.push(g.id.clone());
            ancestors.extend(g.ancestors.iter().cloned());
            (ancestors, g.chain.to_vec(), g.upstreams.clone(), Some(g.expires))
        };
        // The parent's own credential bounds the child: a JWT's `exp`, a grant's expiry (which
        // is within every ancestor's, so the whole chain's bound is the nearest one).
        let parent_expires = match (grant_expires, parent.credential.expires) {
            (Some(g), Some(c)) => Some(g.min(c)),
            (g, c) => g.or(c),
        };
        let depth = chain.len() + 1;
        if depth > m.settings.max_depth as usize {
            return Err(MintError::Forbidden(format!(
                "delegation.max_depth is {}: {} cannot delegate further",
                m.settings.max_depth, parent.id
            )));
        }
        let parent_profile = chain.iter().filter_map(|l| l.profile).fold(m.root_profile, Profile::min);
        if let Some(p) = profile.filter(|p| *p > parent_profile) {
            return Err(MintError::Forbidden(format!(
                "profile {} is wider than {}'s ({}); a delegation can only narrow",
                p.as_str(),
                parent.id,
                parent_profile.as_str()
            )));
        }
        let upstreams: Option<Arc<[Arc<str>]>> = match (requested, inherited) {
            (None, inherited) => inherited,
            (Some(req), None) => Some(req.into()),
            (Some(req), Some(allowed)) => {
                if let Some(u) = req.iter().find(|u| !allowed.contains(u)) {
                    return Err(MintError::Forbidden(format!(
                        "upstream {u} is outside {}'s upstreams ({}); a delegation can only narrow",
                        parent.id,
                        allowed.join(", ")
                    )));
                }
                Some(req.into())
            }
        };
        let remaining = parent_expires.map(|e| e.duration_since(now).unwrap_or_default());
        if remaining.is_some_and(|r| r.is_zero()) {
            return Err(MintError::Forbidden(format!(
                "{}'s own credential has expired: a child never outlives its parent",
                parent.id
            )));
        }
        let ttl = match (ttl, remaining) {
            (Some(t), Some(r)) if t > r => {
                return Err(MintError::Forbidden(format!(
                    "ttl {t:?} outlives {}'s own credential, which expires in {}s",
                    parent.id,
                    r.as_secs()
                )))
            }
            (Some(t), _) => t,
            (None, Some(r)) => r.min(m.settings.max_ttl),
            (None, None) => m.settings.max_ttl,
        };
        if t.by_agent.contains_key(&child_id) {
            return Err(MintError::Conflict(format!(
                "a live delegation is already known as {child_id}: pick another name, or revoke it first"
            )));
        }
        if t.grants.len() >= self.capacity
            || t.grants.values().filter(|g| g.agent.name == parent.name).count() >= self.per_root
        {
            return Err(MintError::Full(format!(
                "too many live delegations (at most {} in all, {} under one configured agent): revoke some \
                 or wait for them to expire",
                self.capacity, self.per_root
            )));
        }
        let mut chain = chain;
        chain.push(Arc::new(Layered { rules, posture: None, profile }));
        let mut delegated_by = Vec::with_capacity(parent.delegated_by.len() + 1);
        delegated_by.push(parent.id.clone());
        delegated_by.extend(parent.delegated_by.iter().cloned());
        let expires = now + ttl;
        let grant = Arc::new(Grant {
            id: id.clone(),
            agent: Agent {
                name: parent.name.clone(),
                id: child_id.clone(),
                delegated_by,
                // The root's provenance travels down the chain; the expiry is this grant's own.
                credential: Credential {
                    expires: Some(expires),
                    provenance: parent.credential.provenance.clone(),
                },
            },
            ancestors,
            chain: chain.into(),
            upstreams,
            expires,
            digest: digest(&token),
        });
        t.by_digest.insert(grant.digest, id.clone());
        t.by_agent.insert(child_id.clone(), id.clone());
        t.grants.insert(id.clone(), grant);
        Ok(Minted { id, token, agent: child_id, expires })
    }

    /// Revokes grant `id` and every grant below it, if `requester` is one of its ancestors (the
    /// configured root, or a delegated agent above it). Returns how many grants went.
    pub fn revoke(&self, requester: &Agent, id: &str, now: SystemTime) -> Result<usize, MintError> {
        let mut t = self.table();
        let not_found = || MintError::NotFound(id.to_owned());
        let g = t.grants.get(id).cloned().ok_or_else(not_found)?;
        let allowed = if requester.delegated_by.is_empty() {
            g.agent.name == requester.name
        } else {
            t.live_agent(&requester.id, now).is_some_and(|r| g.ancestors.contains(&r.id))
        };
        if !allowed {
            return Err(not_found());
        }
        let root: Arc<str> = g.id.clone();
        Ok(t.remove_where(|d| d.id == root || d.ancestors.contains(&root)))
    }

    /// Drops every grant whose configured root `configured` no longer names (after a reload).
    pub fn retain_roots(&self, configured: impl Fn(&str) -> bool) -> usize {
        self.table().remove_where(|g| !configured(&g.agent.name))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `2026-01-02T03:04:05Z`.
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

#[cfg(test)]
mod tests;
