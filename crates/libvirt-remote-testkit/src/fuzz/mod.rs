//! The checks behind the cargo-fuzz targets in `fuzz/` (a separate workspace that needs
//! libFuzzer): each target is a few lines calling one of these, and the testkit's
//! `fuzz_corpus` test replays every checked-in input through the same code under stable
//! `cargo test`.
//!
//! * [`frame`]: `wire::frame` on arbitrary bytes (`frame_decode`);
//! * [`xdr`]: every typed procedure's `Args`/`Ret`, errors, events and shared types on one
//!   packet each (`xdr_decode`);
//! * [`connection`]: the connection state machine under a sequence of operations, against a
//!   model, event subscriptions included (`connection`);
//! * `handshake` (default feature `sasl`): the opening handshake with SASL against an
//!   arbitrary daemon, and the TLS accept byte (`handshake`);
//! * [`corpus`]: seed inputs built from the captures, and packing (the `corpus` example
//!   writes them).
//!
//! A fuzz binary passes a [`Meter`] (its counting allocator) to check that decoding allocates
//! in proportion to its input; the replay runs without.

pub mod connection;
pub mod corpus;
pub mod frame;
#[cfg(feature = "sasl")]
pub mod handshake;
pub mod xdr;

pub use xdr::Meter;
