//! Red team, round 10: the places issue 29's performance pass made the proxy skip work or decide
//! from a shortcut — an answer held only where a configured rule reads it
//! (`Guard::holds_answers`), the egress pre-filter (`egress::quiet`), `canonical_json` written
//! without a sorted copy, the fast paths for callers without a session — attacked with real SDK
//! clients and servers on 127.0.0.1. A test that fails today is an open finding, marked
//! `#[ignore]` with its id and severity so the suite stays green; the others are attacks that held
//! and stay as regression tests.

mod canonical;
mod egress_pad;
mod egress_split;
mod egress_tail;
mod email;
mod harness;
mod iban;
mod stray;
mod tasks;
