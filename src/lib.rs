//! # portcullis — a guardrail proxy for AI agents' tool calls
//!
//! Agents call tools over MCP (Streamable HTTP or stdio) and plain HTTP. portcullis sits in that
//! path and decides, per call, before the tool runs and before its result reaches the agent.
//!
//! ```text
//! agent ──▶ rescue ─▶ telemetry ─▶ concurrency ─▶ route ─▶ body limit ─▶ pre gate ─▶ post gate ─▶ upstream ──▶ tool server
//!                                                                         │             │
//!                                                    refuse: isError ◀────┘             └──▶ hold watched result, inspect, release
//! ```
//!
//! - [`mcp`] understands the protocol: JSON-RPC envelopes borrowed from the request bytes (so
//!   unknown fields pass byte-for-byte), the two protocol eras and their routing headers, SSE
//!   framing.
//! - [`gate`] holds the two interception points as decisions every transport shares: one door
//!   for every call ([`gate::pre::judge`]), [`gate::pre::decide`] for a payload and
//!   [`gate::post::inspect`] for a response. The transports — the HTTP layers in [`proxy`], the
//!   stdio relay in [`stdio`], the [`hook`] — only turn those decisions into messages, in the
//!   words of [`says`].
//! - [`runtime`] builds what every transport shares (metrics, audit, guard, approvals, sessions)
//!   once from a config, with a typed start error; [`app`] assembles the tower stack over it in one
//!   place and starts the listeners; [`admin`] serves metrics and health; [`config`] parses strict
//!   YAML into validated types and imports nothing else of the crate ([`layers`] names the layers).
//! - [`demo`] is the main job on the embedded default: a sample tool server, the proxy in front
//!   of it, and a scripted agent session through it.

#![forbid(unsafe_code)]
// clippy.toml disallows blocking sleeps and environment writes outside tests; tests set the
// variables a config names, and a few sleep in threads that are not runtime workers.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod admin;
pub mod app;
pub mod approval;
pub mod audit;
pub mod authority;
pub mod call;
pub mod check;
pub use portcullis_checker as checker;
pub mod config;
pub mod connect;
pub mod decision;
pub mod demo;
pub mod eval;
pub mod explain;
pub mod flows;
pub mod gate;
pub mod guardrails;
pub mod heap;
pub mod hook;
pub mod identity;
pub mod inert;
pub mod intent;
pub mod limits;
pub mod oauth;
pub use portcullis_mcp as mcp;
pub mod proxy;
pub mod readiness;
pub mod reload;
pub use portcullis_rules as rules;
pub mod layers;
pub mod outcome;
pub mod pins;
mod read_mostly;
pub mod runtime;
pub mod sandbox;
pub mod says;
pub mod secrets;
pub mod session;
pub mod state;
pub use portcullis_shell as shell;
pub mod stdio;
pub mod telemetry;
pub mod tooldefs;
pub mod upstream;
