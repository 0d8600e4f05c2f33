//! Secrets read from the environment, kept out of logs: their `Debug` says `[redacted]`.

use crate::config::EnvName;

/// A secret value. `Debug` never shows it; there is no `Display`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The value, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Why a secret could not be read; names the variable, never a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("the variable {var} (upstream {upstream}) is not set")]
    Unset { upstream: String, var: String },
    #[error("the variable {var} (upstream {upstream}) is empty")]
    Empty { upstream: String, var: String },
    #[error("the variable {var} (upstream {upstream}) holds characters a header cannot carry")]
    NotHeader { upstream: String, var: String },
}

/// Reads `var` for `upstream`: set, non-empty, and printable ASCII without spaces at either end
/// (it is sent in a header).
pub fn read(upstream: &str, var: &EnvName) -> Result<Secret, SecretError> {
    let (upstream, name) = (upstream.to_owned(), var.as_str().to_owned());
    let value = std::env::var(var.as_str())
        .map_err(|_| SecretError::Unset { upstream: upstream.clone(), var: name.clone() })?;
    if value.is_empty() {
        return Err(SecretError::Empty { upstream, var: name });
    }
    if value.trim() != value || !value.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Err(SecretError::NotHeader { upstream, var: name });
    }
    Ok(Secret(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_never_shows_in_debug() {
        let s = Secret("hunter2".into());
        assert_eq!(format!("{s:?}"), "[redacted]");
        assert_eq!(format!("{:?}", Some(s.clone())), "Some([redacted])");
    }

    #[test]
    fn unset_and_unusable_variables_are_named_not_shown() {
        let var = EnvName::parse("PORTCULLIS_UNIT_SECRET_UNSET_7d1f").unwrap();
        let e = read("fs", &var).unwrap_err();
        assert!(e.to_string().contains("PORTCULLIS_UNIT_SECRET_UNSET_7d1f"), "{e}");
        std::env::set_var("PORTCULLIS_UNIT_SECRET_BAD_7d1f", "line\nbreak");
        let e = read("fs", &EnvName::parse("PORTCULLIS_UNIT_SECRET_BAD_7d1f").unwrap()).unwrap_err();
        assert!(matches!(e, SecretError::NotHeader { .. }) && !e.to_string().contains("break"), "{e}");
    }
}
