//! What is wrong with a config: each [`Problem`] with its path, collected by [`Problems`] while
//! compiling (with the typed readers every section shares) and reported at once as a
//! [`ConfigError`].

use std::fmt;
use std::time::Duration;

use super::{raw, units};

/// One thing wrong with a config, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

/// Every problem found in a config.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    pub source_name: String,
    pub problems: Vec<Problem>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}: {} problem(s)", self.source_name, self.problems.len())?;
        for p in &self.problems {
            writeln!(f, "  - {}: {}", p.path, p.message)?;
        }
        Ok(())
    }
}

/// Problems and warnings collected while compiling.
#[derive(Debug, Default)]
pub(crate) struct Problems {
    pub problems: Vec<Problem>,
    pub warnings: Vec<Problem>,
}

impl Problems {
    /// A duration with a unit, or `default` (and a problem) when it is missing a unit or wrong.
    pub fn duration(&mut self, path: &str, v: Option<raw::Scalar>, default: Duration) -> Duration {
        match v {
            None => default,
            Some(raw::Scalar::Int(n)) => {
                self.add(path, format!("duration {n} needs a unit (ms, s, m or h)"));
                default
            }
            Some(raw::Scalar::Text(s)) => units::duration(&s).unwrap_or_else(|e| {
                self.add(path, e);
                default
            }),
        }
    }

    /// A size in bytes (a number, or text with a unit), or `default` and a problem.
    pub fn size(&mut self, path: &str, v: Option<raw::Scalar>, default: usize) -> usize {
        match v {
            None => default,
            Some(raw::Scalar::Int(n)) => n as usize,
            Some(raw::Scalar::Text(s)) => units::size(&s).map(|n| n as usize).unwrap_or_else(|e| {
                self.add(path, e);
                default
            }),
        }
    }

    /// Records a problem; serde's "unknown field" messages gain the key probably meant.
    pub fn add(&mut self, path: impl Into<String>, message: impl Into<String>) {
        let message = super::suggest::annotate(&message.into());
        self.problems.push(Problem { path: path.into(), message });
    }

    pub fn warn(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.warnings.push(Problem { path: path.into(), message: message.into() });
    }
}

/// Shows an error with its whole chain of causes, `: `-separated (as `anyhow`'s `{:#}` does).
pub struct Chain<'a>(pub &'a dyn std::error::Error);

impl std::fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(s) = source {
            write!(f, ": {s}")?;
            source = s.source();
        }
        Ok(())
    }
}
