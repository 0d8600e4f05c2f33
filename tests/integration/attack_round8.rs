//! Red team, round 8: the surfaces issue 28 added — "allow always" writing the operator's rule
//! file, the decision tap and `portcullis explain`, approvals listed at a terminal — attacked
//! against the real binary, the Python SDK server and real sockets on 127.0.0.1. A test that
//! fails today is an open finding, marked `#[ignore]` with its severity so the suite stays green;
//! the others are attacks that held and stay as regression tests.

mod always_flows;
mod always_race;
mod always_secret;
mod always_wider;
mod codex_workdir;
mod harness;
mod slack;
mod tap;
mod terminal;
