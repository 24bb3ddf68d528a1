//! libvirt's own test suite: every document its schemas accept parses, lands wholly in typed
//! fields, and round-trips to an equal tree.

use std::path::PathBuf;

use libvirt_xml::{AnyDocument, ParseOptions};

fn corpus() -> Option<(PathBuf, Vec<String>)> {
    let dir = std::env::var_os("LIBVIRT_SOURCE_DIR")?;
    let list = std::env::var_os("LIBVIRT_XML_CORPUS")?;
    let files = std::fs::read_to_string(list)
        .ok()?
        .lines()
        .map(str::to_owned)
        .collect();
    Some((PathBuf::from(dir), files))
}

#[test]
fn corpus_round_trips() {
    let Some((dir, files)) = corpus() else {
        assert!(
            std::env::var_os("LIBVIRT_XML_CORPUS_REQUIRED").is_none(),
            "LIBVIRT_SOURCE_DIR / LIBVIRT_XML_CORPUS not set (scripts/test sets them)"
        );
        eprintln!(
            "skipped: LIBVIRT_SOURCE_DIR / LIBVIRT_XML_CORPUS not set (scripts/libvirt-source)"
        );
        return;
    };
    let (mut parsed, mut untyped_files, mut equal) = (0, 0, 0);
    let mut failures = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(dir.join(f)).expect("read");
        match AnyDocument::from_xml_with(&text, &ParseOptions::default()) {
            Err(e) => failures.push(format!("{f}: parse: {e}")),
            Ok(p) => {
                parsed += 1;
                if p.untyped > 0 {
                    untyped_files += 1;
                    failures.push(format!("{f}: {} untyped", p.untyped));
                }
                let out = p.document.to_xml();
                match libvirt_xml::fuzzing::same_tree(&text, &out) {
                    Ok(()) => equal += 1,
                    Err(e) => failures.push(format!("{f}: round trip: {e}")),
                }
            }
        }
    }
    eprintln!(
        "files {}, parsed {parsed}, with untyped {untyped_files}, round-trip equal {equal}",
        files.len()
    );
    for f in failures.iter().take(60) {
        eprintln!("{f}");
    }
    assert!(failures.is_empty(), "{} failures", failures.len());
}
