//! Credentials the agent never holds: results show it a sentinel, and an argument carrying the
//! sentinel gets the real value only on its way to a destination the operator allowed.
//!
//! The order is the point. A result is masked first, before any detector, checker, audit line
//! or agent sees it ([`mask`]). An argument is judged with its sentinel in it: a sentinel bound
//! for a destination its secret may not reach, or the real value anywhere (the agent learned it
//! some other way), is refused by the gate before Layer 1 ([`Held::refusal`](crate::secrets::Held::refusal)). Only after
//! every check allowed the sentinel-bearing call does the transport swap the value in, as the
//! last step before forwarding ([`unmask`]).

pub mod encodings;
pub mod forward;
pub mod held;
pub mod mask;
pub mod unmask;

pub use held::Held;

/// What the agent sees in a secret's place: `portcullis:secret:{name}`.
pub const SENTINEL_PREFIX: &str = "portcullis:secret:";
