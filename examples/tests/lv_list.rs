//! `lv list` prints an aligned table: names are padded to their column, so every row's state
//! starts where the header's does.

use std::process::Command;

use testbed::libvirtd::Libvirtd;

#[test]
fn lv_list_columns_line_up() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_lv"))
        .args(["-c", &d.test_uri(), "--timeout", "30", "list"])
        .output()
        .expect("run lv list");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let header = lines.first().expect("a header line");
    let col = header.find("State").expect("a State column");
    // Like virsh, lv ends a command's output with an empty line.
    let (footer, rows) = lines[2..].split_last().expect("rows and a footer");
    assert_eq!(*footer, "", "no empty last line (virsh's footer):\n{text}");
    assert!(!rows.is_empty(), "the test driver has a domain:\n{text}");
    for row in rows {
        // The test driver's domain `test` is running.
        assert_eq!(
            row.get(col..),
            Some("running"),
            "state not under its header:\n{text}"
        );
    }
}
