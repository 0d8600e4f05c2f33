//! `portcullis pin`: lists each upstream's tools through the proxy's own clients and writes the
//! lock file of their definitions (the `pins:` section, [`crate::config::pins`], reads it).

pub mod cli;
