//! Red team, round 7: the headless ask reviewer (`serve --ask-reviewer`) and the workspace scope
//! tiers, both built last round and never attacked, against real peers (the Python SDK servers,
//! the real `portcullis hook` binary with Claude Code envelopes) and a model double that speaks
//! the Chat Completions wire format on 127.0.0.1. A test that fails today is an open finding,
//! marked `#[ignore]` with its severity so the suite stays green; the others are attacks that
//! held and stay as regression tests.

mod reviewer;
mod reviewer_fence;
mod reviewer_hook;
mod tiers;
