//! The connection state machine under an `arbitrary` sequence of commands, daemon packets
//! (raw and well-formed), timer ticks and EOF. Invariants: see `harness/connection.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../harness/connection.rs"]
mod harness;

fuzz_target!(|data: &[u8]| harness::check(data));
