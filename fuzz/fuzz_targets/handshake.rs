//! The opening handshake with SASL against an arbitrary daemon, and the TLS accept byte.
//! Input format and invariants: `libvirt_remote_testkit::fuzz::handshake`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use libvirt_remote_testkit::fuzz::handshake;

fuzz_target!(|data: &[u8]| handshake::check(data));
