//! "Why was it refused?": the admin listener's `GET /decisions/{id}` (one decision, as its audit
//! lines recorded it) and `GET /decisions/stream` (the live tap, server-sent events), and the
//! words `portcullis explain` prints for a decision ([`render`]).
//!
//! Nothing here decides: the gate records each decision once ([`crate::gate::pre::judge::decided`]),
//! with its id, the policy version and — for a refusal or an ask — why; this module reads what
//! [`crate::audit`] kept.

pub mod fetch;
pub mod render;
mod routes;
mod stream;

pub use routes::route;
