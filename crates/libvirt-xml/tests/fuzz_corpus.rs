//! Replays the `xml_parse` fuzz corpus (`fuzz/corpus/xml_parse`) through the fuzz target's check.

#[test]
fn xml_parse_corpus_replays() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/xml_parse");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("corpus directory") {
        let path = entry.expect("entry").path();
        let data = std::fs::read(&path).expect("read");
        let r = std::panic::catch_unwind(|| libvirt_xml::fuzzing::check(&data));
        assert!(r.is_ok(), "{} fails the check", path.display());
        n += 1;
    }
    assert!(n >= 20, "only {n} corpus files");
}
