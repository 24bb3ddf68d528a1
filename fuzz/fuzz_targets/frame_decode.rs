//! Bytes → `frame::decode`, repeatedly. Invariants: see `harness/frame.rs`; here also that the
//! whole check allocates in proportion to the input (never per a length word).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../harness/frame.rs"]
mod harness;
mod peak_alloc;

#[global_allocator]
static ALLOC: peak_alloc::PeakAlloc = peak_alloc::PeakAlloc;

fuzz_target!(|data: &[u8]| {
    let peak = peak_alloc::peak_during(&mut || harness::check(data));
    let bound = 64 * data.len() + 64 * 1024;
    assert!(
        peak <= bound,
        "{peak} heap bytes live for a {}-byte input",
        data.len()
    );
});
