//! The opening handshake with SASL against an `arbitrary` daemon, and the TLS accept byte.
//! Invariants: see `harness/handshake.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../harness/handshake.rs"]
mod harness;

fuzz_target!(|data: &[u8]| harness::check(data));
