//! The side-by-side harnesses: [`compare`] (calls and transfers, the `compare` binary) and
//! [`scale`] (thousands of domains, bulk stats, connect latency, event fan-in, growth: the
//! `scale` binary). The criterion benchmarks live in `benches/`.

pub mod compare;
pub mod scale;
