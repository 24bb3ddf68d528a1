//! One packet → the XDR type its header names (every typed procedure's Args/Ret, errors,
//! events, shared types). Invariants: see `harness/xdr.rs`; here also that each decode
//! allocates in proportion to its input.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../harness/xdr.rs"]
mod harness;
mod peak_alloc;

#[global_allocator]
static ALLOC: peak_alloc::PeakAlloc = peak_alloc::PeakAlloc;

fuzz_target!(
    init: {
        harness::METER.set(peak_alloc::peak_during).expect("set once");
    },
    |data: &[u8]| harness::check(data)
);
