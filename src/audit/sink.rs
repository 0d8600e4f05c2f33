//! Where audit lines go: stdout, or a file rotated by size.

use std::fs::{File, OpenOptions};
use std::io::Write;

use std::path::PathBuf;

use crate::config::audit::Destination;

pub struct Writer {
    target: Destination,
    file: Option<File>,
    size: u64,
    max_size: u64,
    keep: u32,
}

impl Writer {
    pub fn open(target: &Destination, max_size: u64, keep: u32) -> std::io::Result<Writer> {
        let (file, size) = match target {
            Destination::File(p) => {
                let f = OpenOptions::new().create(true).append(true).open(p)?;
                let size = f.metadata()?.len();
                (Some(f), size)
            }
            _ => (None, 0),
        };
        Ok(Writer { target: target.clone(), file, size, max_size, keep })
    }

    pub fn write(&mut self, line: &str) -> std::io::Result<()> {
        let n = line.len() as u64 + 1;
        match (&self.target, self.file.as_mut()) {
            (Destination::File(path), Some(_)) => {
                if self.size > 0 && self.size + n > self.max_size {
                    self.rotate(path.clone())?;
                }
                let f = self.file.as_mut().expect("open");
                writeln!(f, "{line}")?;
                self.size += n;
                Ok(())
            }
            (Destination::Stderr, _) => writeln!(std::io::stderr().lock(), "{line}"),
            _ => {
                let mut out = std::io::stdout().lock();
                writeln!(out, "{line}")?;
                out.flush()
            }
        }
    }

    /// `F.keep-1` → `F.keep`, …, `F` → `F.1`, then a fresh `F`.
    fn rotate(&mut self, path: PathBuf) -> std::io::Result<()> {
        self.file = None;
        let name = |i: u32| {
            let mut p = path.clone().into_os_string();
            p.push(format!(".{i}"));
            PathBuf::from(p)
        };
        if self.keep == 0 {
            std::fs::remove_file(&path)?;
        } else {
            for i in (1..self.keep).rev() {
                if name(i).exists() {
                    std::fs::rename(name(i), name(i + 1))?;
                }
            }
            std::fs::rename(&path, name(1))?;
        }
        self.file = Some(OpenOptions::new().create(true).append(true).open(&path)?);
        self.size = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_rotates_by_size_and_keeps_only_so_many() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let mut w = Writer::open(&Destination::File(path.clone()), 100, 2).unwrap();
        for i in 0..20 {
            w.write(&format!("{{\"line\":\"{i:03}\",\"pad\":\"{}\"}}", "x".repeat(20))).unwrap();
        }
        let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap_or_default();
        let rotated = |i: u32| dir.path().join(format!("audit.jsonl.{i}"));
        assert!(read(&path).len() <= 100 && !read(&path).is_empty());
        assert!(read(&rotated(1)).len() <= 100 && !read(&rotated(1)).is_empty());
        assert!(rotated(2).exists() && !rotated(3).exists(), "keep: 2");
        assert!(read(&path).contains("\"line\":\"019\""), "the newest line is in the live file");
        for f in [path.clone(), rotated(1), rotated(2)] {
            assert!(
                read(&f).lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()),
                "whole lines only"
            );
        }
    }
}
