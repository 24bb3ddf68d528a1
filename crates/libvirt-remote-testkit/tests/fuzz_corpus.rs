//! Replays every checked-in fuzz input (`fuzz/corpus/<target>/*` and
//! `fuzz/regressions/<target>/*`) through the checks the cargo-fuzz targets run, so stable
//! `cargo test` exercises the corpus and guards fixed bugs (see `fuzz/README.md`).
//!
//! The hand-built seeds are Rust values (`fuzz::connection::seeds`, `fuzz::handshake::seeds`);
//! `cargo test -p libvirt-remote-testkit --test fuzz_corpus -- --ignored write_connection_seeds`
//! (or `write_handshake_seeds`) rewrites their files.

use std::path::{Path, PathBuf};

#[cfg(feature = "sasl")]
use libvirt_remote_testkit::fuzz::handshake;
use libvirt_remote_testkit::fuzz::{connection, frame, xdr};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `fuzz/<dir>/<target>/`, sorted by name.
fn files(dir: &str, target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(fuzz_dir().join(dir).join(target)) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries.map(|e| e.expect("readable dir").path()).collect();
    paths.sort();
    paths
        .into_iter()
        .filter(|p| p.is_file())
        .map(|p| {
            let data = std::fs::read(&p).expect("readable input");
            (p, data)
        })
        .collect()
}

fn is_open_bug(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("open-"))
}

/// Replay `fuzz/corpus/<target>/*` and the fixed `fuzz/regressions/<target>/*` through
/// `check`; `open-*` regressions are reported bugs that must still fail (rename one to
/// `fixed-*` once the core is fixed: it then has to pass like the rest).
fn replay(target: &str, min: usize, check: fn(&[u8]), strict: fn(bool)) {
    let corpus = files("corpus", target);
    assert!(
        corpus.len() >= min,
        "{target}: {} inputs, expected at least {min}",
        corpus.len()
    );
    for (path, data) in corpus.iter().chain(&files("regressions", target)) {
        // Printed before the run so a failure names its input.
        println!("{target}: {}", path.display());
        if is_open_bug(path) {
            strict(true);
            let r = std::panic::catch_unwind(|| check(data));
            strict(false);
            assert!(
                r.is_err(),
                "{} passes now: rename it to fixed-*",
                path.display()
            );
        } else {
            check(data);
        }
    }
}

fn no_strict(_: bool) {}

#[test]
fn frame_decode_corpus() {
    replay("frame_decode", 50, frame::check, no_strict);
}

#[test]
fn xdr_decode_corpus() {
    replay("xdr_decode", 50, xdr::check, no_strict);
}

#[test]
fn connection_corpus() {
    // Also the harness's own bookkeeping against full scans (the fuzz target skips that).
    connection::set_thorough(true);
    replay("connection", 10, connection::check, connection::set_strict);
}

#[cfg(feature = "sasl")]
#[test]
fn handshake_corpus() {
    replay("handshake", 8, handshake::check, no_strict);
}

#[test]
fn xdr_checks_every_typed_procedure() {
    use libvirt_remote::proto::procs;
    let mut table: Vec<_> = procs::TABLES
        .iter()
        .chain(procs::OTHER_TABLES)
        .flat_map(|t| t.iter())
        .copied()
        .collect();
    table.sort_by_key(|p| (p.program, p.number));
    assert_eq!(xdr::procedures(), table);
}

// ---- hand-built connection seeds -------------------------------------------------------

fn seed_path(name: &str) -> PathBuf {
    fuzz_dir()
        .join("corpus/connection")
        .join(format!("seed-{name}"))
}

#[test]
fn connection_seeds_pass_and_match_their_files() {
    connection::set_thorough(true);
    for seed in connection::seeds::seeds() {
        let bytes = connection::encode(&seed.setup, &seed.ops);
        assert_eq!(
            connection::decode(&bytes),
            (seed.setup.clone(), seed.ops.clone()),
            "{}: encode/decode",
            seed.name
        );
        connection::run(&seed.setup, &seed.ops);
        let path = seed_path(seed.name);
        let file = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (run write_connection_seeds)", path.display()));
        assert_eq!(
            file, bytes,
            "{}: file differs (run write_connection_seeds)",
            seed.name
        );
    }
}

#[test]
#[ignore = "rewrites fuzz/corpus/connection/seed-*"]
fn write_connection_seeds() {
    std::fs::create_dir_all(fuzz_dir().join("corpus/connection")).expect("corpus dir");
    for seed in connection::seeds::seeds() {
        std::fs::write(
            seed_path(seed.name),
            connection::encode(&seed.setup, &seed.ops),
        )
        .expect("write seed");
    }
}

// ---- hand-built handshake seeds --------------------------------------------------------

#[cfg(feature = "sasl")]
#[test]
fn handshake_seeds_pass_and_match_their_files() {
    let dir = fuzz_dir().join("corpus/handshake");
    for (name, input) in handshake::seeds() {
        handshake::run(&input);
        let bytes = handshake::encode(&input);
        assert_eq!(
            handshake::parse(&bytes),
            input,
            "{name}: encoding round trip"
        );
        let file = std::fs::read(dir.join(format!("seed-{name}"))).unwrap_or_default();
        assert!(
            file == bytes,
            "fuzz/corpus/handshake/seed-{name} is stale: run write_handshake_seeds"
        );
    }
}

#[cfg(feature = "sasl")]
#[test]
#[ignore = "rewrites fuzz/corpus/handshake/seed-*"]
fn write_handshake_seeds() {
    let dir = fuzz_dir().join("corpus/handshake");
    std::fs::create_dir_all(&dir).expect("corpus dir");
    for (name, input) in handshake::seeds() {
        std::fs::write(dir.join(format!("seed-{name}")), handshake::encode(&input))
            .expect("write seed");
    }
}
