//! The checked-in model (`crates/libvirt-xml/src/generated`) is exactly what the generator
//! writes from libvirt 9.0's schemas (`scripts/libvirt-source` fetches them; `scripts/test`
//! sets `LIBVIRT_SOURCE_DIR`).

use std::path::PathBuf;
use std::process::Command;

#[test]
fn generated_code_is_reproducible() {
    let Some(src) = std::env::var_os("LIBVIRT_SOURCE_DIR") else {
        assert!(
            std::env::var_os("LIBVIRT_XML_CORPUS_REQUIRED").is_none(),
            "LIBVIRT_SOURCE_DIR not set (scripts/test sets it)"
        );
        eprintln!("skipped: LIBVIRT_SOURCE_DIR not set (scripts/libvirt-source)");
        return;
    };
    let schemas = PathBuf::from(src).join("src/conf/schemas");
    let generated = concat!(env!("CARGO_MANIFEST_DIR"), "/../libvirt-xml/src/generated");
    let out = Command::new(env!("CARGO_BIN_EXE_libvirt-xml-gen"))
        .arg("--check")
        .arg(&schemas)
        .arg(generated)
        .output()
        .expect("run the generator");
    assert!(
        out.status.success(),
        "generated code differs from the generator's output (rerun: cargo run -p libvirt-xml-gen -- {} {generated}):\n{}{}",
        schemas.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
