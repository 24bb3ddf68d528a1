//! `compare`: `lv` side by side with virsh and the C library on one private libvirtd. The
//! harness is `benches::compare`; `compare --help` lists the options.

fn main() -> std::process::ExitCode {
    benches::compare::main()
}
