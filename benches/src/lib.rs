//! The side-by-side harness behind the `compare` binary ([`compare`]). The criterion
//! benchmarks live in `benches/`.

pub mod compare;
