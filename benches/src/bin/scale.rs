//! `scale`: thousands of domains, bulk stats, connect latency, event fan-in and growth — `lv`
//! and our library side by side with virsh and the C library. The harness is
//! `benches::scale`; `scale --help` lists the options.

fn main() -> std::process::ExitCode {
    benches::scale::main()
}
