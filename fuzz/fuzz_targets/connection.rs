//! The connection state machine under a sequence of commands, daemon packets (raw and
//! well-formed), timer ticks and EOF, against a model. Input encoding and invariants:
//! `libvirt_remote_testkit::fuzz::connection`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use libvirt_remote_testkit::fuzz::connection;

fuzz_target!(|data: &[u8]| connection::check(data));
