//! `portcullis hook`: Claude Code's `PreToolUse` / `PostToolUse` hook protocol, so that the
//! agent's built-in tools (Bash, Read, Edit, Write, WebFetch, …), which never pass a proxy, are
//! decided by the same policy, checker and audit as its MCP tools.
//!
//! ```text
//! Claude Code ──stdin: envelope──▶ portcullis hook pre|post ──stdout: answer──▶ Claude Code
//!                                     │ standalone: Guard from --config, in this process
//!                                     └ --proxy: POST /hook/{pre|post} on the admin listener
//! ```
//!
//! - [`envelope`] reads the input, [`map`] turns it into a [`crate::call::ToolCall`] (built-in
//!   tools as shell, file and fetch kinds; paths absolute against `cwd`; [`search`] makes `Glob`
//!   and `Grep` the glob of what they read), [`decide`] asks the
//!   [`crate::gate::Guard`], [`answer`] writes Claude Code's JSON.
//! - [`standalone`] decides in-process and builds only what the call needs; [`client`] hands the
//!   envelope to a running proxy, whose [`serve`] decides it with the proxy's shared state.
//! - Both decide with the tiers of the call's workspace (its `cwd`): [`workspace`] keeps the
//!   proxy's guard per workspace, re-read when a tier file changes.
//! - [`install`] merges the hooks block into `settings.json`; [`cli`] is the command line.
//!
//! - [`codex`] speaks Codex CLI's dialect of the same protocol (`--codex`): [`patch`] reads its
//!   `apply_patch` envelope, [`workdir`] places its shell commands, [`codex_answer`] writes its
//!   answers, [`codex_install`] its hooks.json.
//!
//! What it can and cannot guard is in docs/claude-code.md and docs/clients/codex.md.

pub mod answer;
pub mod cli;
pub mod client;
pub mod codex;
pub mod codex_answer;
pub mod codex_install;
pub mod decide;
pub mod envelope;
pub mod install;
pub mod map;
pub mod one;
pub mod patch;
pub mod prompt;
pub mod search;
pub mod serve;
mod shape;
pub mod standalone;
pub mod workdir;
pub mod workspace;
