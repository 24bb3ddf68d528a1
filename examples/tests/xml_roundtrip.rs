//! `xml_roundtrip`'s contract: one line per path (`PATH ok` / `PATH error: …`), the
//! re-serialized documents in `DIR/<i>.xml` by position, and the summary line; paths from
//! `--list` and as arguments.

use std::process::Command;

#[test]
fn prints_a_line_per_path_writes_by_position_and_sums_up() {
    let tmp = tempfile::tempdir().unwrap();
    let seeds = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/corpus/xml_parse");
    let good = format!("{seeds}/domain-kvm.xml");
    let unknown = format!("{seeds}/domain-unknown.xml");
    let bad = tmp.path().join("bad.xml");
    std::fs::write(&bad, "<domain><name>x</nam></domain>").unwrap();
    let list = tmp.path().join("list");
    std::fs::write(&list, format!("{good}\n{}\n", bad.display())).unwrap();
    let out_dir = tmp.path().join("out");
    let out = Command::new(env!("CARGO_BIN_EXE_xml_roundtrip"))
        .arg("--out")
        .arg(&out_dir)
        .arg("--list")
        .arg(&list)
        .arg(&unknown)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], format!("{good} ok"), "{text}");
    assert!(
        lines[1].starts_with(&format!(
            "{} error: domain/name: malformed XML",
            bad.display()
        )),
        "{text}"
    );
    assert_eq!(lines[2], format!("{unknown} ok"), "{text}");
    // domain-kvm.xml: <vendor:extension/>; domain-unknown.xml: future=, <newthing a='b'><x/>,
    // <shiny/>.
    assert_eq!(lines[3], "files 3, parsed 2, errors 1, untyped 6", "{text}");
    assert!(
        !out.status.success(),
        "an error makes the exit status non-zero"
    );
    // By position: 0 and 2 written, 1 (the error) not.
    let written = std::fs::read_to_string(out_dir.join("0.xml")).unwrap();
    assert!(written.contains("<name>web-1</name>"), "{written}");
    assert!(out_dir.join("2.xml").exists() && !out_dir.join("1.xml").exists());
}
