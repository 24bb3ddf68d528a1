//! Running `lv` and `virsh` side by side against one daemon, and comparing what they print
//! (`lv_virsh.rs`, `lv_xml.rs`).

use std::process::{Command, Output};

/// `lv -c URI --timeout 60 ARGS`.
pub fn lv(uri: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lv"))
        .args(["-c", uri, "--timeout", "60"])
        .args(args)
        .env_remove("LIBVIRT_DEFAULT_URI")
        .output()
        .expect("run lv")
}

/// `virsh -c URI ARGS` in the C locale and UTC, not yet run.
pub fn virsh_cmd(uri: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new("virsh");
    cmd.args(["-c", uri])
        .args(args)
        .env_remove("LIBVIRT_DEFAULT_URI")
        .env("LC_ALL", "C")
        .env("TZ", "UTC");
    cmd
}

/// `virsh -c URI ARGS`, run.
pub fn virsh(uri: &str, args: &[&str]) -> Output {
    virsh_cmd(uri, args).output().expect("run virsh")
}

/// A run's stdout.
pub fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs of whitespace as one space, ends trimmed.
pub fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Run `args` through both; both succeed with the same normalised output (after `fix`), or
/// both fail. Returns whether they succeeded.
pub fn same_with(uri: &str, args: &[&str], fix: impl Fn(&str) -> String) -> bool {
    let ours = lv(uri, args);
    let theirs = virsh(uri, args);
    assert_eq!(
        ours.status.success(),
        theirs.status.success(),
        "lv {args:?}: exit {} vs virsh's {}\nlv stderr: {}\nvirsh stderr: {}",
        ours.status,
        theirs.status,
        String::from_utf8_lossy(&ours.stderr),
        String::from_utf8_lossy(&theirs.stderr),
    );
    if ours.status.success() {
        let (a, b) = (fix(&text(&ours)), fix(&text(&theirs)));
        assert_eq!(
            norm(&a),
            norm(&b),
            "lv {args:?} differs from virsh\n--- lv:\n{a}\n--- virsh:\n{b}"
        );
        // Not only after normalisation: byte for byte.
        assert_eq!(a, b, "lv {args:?}: the same words, other whitespace");
    }
    ours.status.success()
}

pub fn same(uri: &str, args: &[&str]) -> bool {
    same_with(uri, args, str::to_string)
}

/// `lv ARGS` succeeds; its stdout.
pub fn lv_ok(uri: &str, args: &[&str]) -> String {
    let o = lv(uri, args);
    assert!(
        o.status.success(),
        "lv {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    text(&o)
}

/// `virsh ARGS` succeeds; its stdout, trimmed.
pub fn virsh_ok(uri: &str, args: &[&str]) -> String {
    let o = virsh(uri, args);
    assert!(
        o.status.success(),
        "virsh {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    text(&o).trim().to_string()
}

pub fn without_lines(prefix: &'static str) -> impl Fn(&str) -> String {
    move |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with(prefix))
            .collect::<Vec<_>>()
            .join("\n")
    }
}
