//! The object-API example programs (inventory, lifecycle, event watch, error handling: the
//! test driver; volume transfer: the session driver's directory pool) run against a private
//! libvirtd; their output is checked line by line.

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};

use libvirt_remote::prelude::*;
use testbed::libvirtd::Libvirtd;

fn run(bin: &str, args: &[&str]) -> String {
    run_cmd(Command::new(bin).args(args))
}

/// Runs `cmd`, which must succeed; its stdout.
fn run_cmd(cmd: &mut Command) -> String {
    let out: Output = cmd.output().expect("run the example");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn inventory_lists_the_test_driver_objects() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let text = run(env!("CARGO_BIN_EXE_inventory"), &[&d.test_uri()]);
    assert!(text.starts_with("host "), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("domain test ") && l.contains("running")),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("pool default-pool ")),
        "{text}"
    );
    assert!(text.contains("network default active"), "{text}");

    // Without a URI: `Connect::open_default()` reads $LIBVIRT_DEFAULT_URI, as libvirt does.
    let by_env = run_cmd(
        Command::new(env!("CARGO_BIN_EXE_inventory")).env("LIBVIRT_DEFAULT_URI", d.test_uri()),
    );
    assert_eq!(by_env, text);
}

/// The blocking API prints what the async one prints, line for line, on the same daemon.
#[test]
fn inventory_blocking_prints_what_inventory_prints() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let uri = d.test_uri();
    let async_text = run(env!("CARGO_BIN_EXE_inventory"), &[&uri]);
    let blocking_text = run(env!("CARGO_BIN_EXE_inventory_blocking"), &[&uri]);
    assert!(async_text.contains("\ndomain test "), "{async_text}");
    assert_eq!(blocking_text, async_text);
}

/// A blocking call inside an async runtime is refused with a message that says so.
#[test]
fn blocking_inside_a_runtime_is_refused() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let uri = d.test_uri();
    let panic = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            std::panic::catch_unwind(|| libvirt_remote::blocking::Connect::open(&uri).map(drop))
        })
    })
    .join()
    .unwrap()
    .expect_err("refused");
    let msg = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("inside an async runtime"), "{msg}");
}

#[test]
fn lifecycle_walks_through_every_state() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let text = run(env!("CARGO_BIN_EXE_lifecycle"), &[&d.test_uri(), "ex-life"]);
    let steps: Vec<(&str, &str)> = text
        .lines()
        .map(|l| {
            l.split_once(' ')
                .map_or((l, ""), |(step, st)| (step, st.trim()))
        })
        .collect();
    assert_eq!(
        steps,
        [
            ("defined", "shut off"),
            ("started", "running"),
            ("paused", "paused"),
            ("resumed", "running"),
            ("stopped", "shut off"),
            ("undefined", ""),
        ],
        "{text}"
    );
}

#[test]
fn errors_are_told_apart_by_predicate() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let text = run(env!("CARGO_BIN_EXE_errors"), &[&d.test_uri()]);
    let kinds: Vec<&str> = text
        .lines()
        .map(|l| l.split(':').next().unwrap_or(""))
        .collect();
    assert_eq!(
        kinds,
        ["not found", "unreachable", "connection dead"],
        "{text}"
    );
}

#[tokio::test]
async fn event_watch_prints_the_lifecycle_events_it_sees() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_event_watch"))
        .args([&d.test_uri(), "2"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start event_watch");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "ready");
    let conn = Connect::open(&d.test_uri()).await.unwrap();
    let dom = conn.lookup_domain_by_name("test").await.unwrap();
    dom.suspend().await.unwrap();
    dom.resume().await.unwrap();
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    assert!(child.wait().unwrap().success());
    // VIR_DOMAIN_EVENT_SUSPENDED = 3, VIR_DOMAIN_EVENT_RESUMED = 4, printed by their names,
    // and their details (0 in both: PAUSED, UNPAUSED) by theirs.
    assert_eq!(
        rest,
        [
            "test event Suspended detail Paused",
            "test event Resumed detail Unpaused"
        ],
        "{rest:?}"
    );
}

#[test]
fn transfer_round_trips_a_volume_with_matching_digests() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let scratch = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_transfer"))
        .args([&d.uri(), d.pool_name()])
        .env("TMPDIR", scratch.path())
        .output()
        .expect("run transfer");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<(&str, &str)> = text
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap_or((l, "")))
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    let size = 100u64 << 20;
    assert_eq!(lines[0].0, format!("sent {size} bytes sha256"), "{text}");
    assert_eq!(lines[1].0, format!("read {size} bytes sha256"), "{text}");
    assert_eq!(lines[0].1.len(), 64, "{text}");
    assert_eq!(lines[0].1, lines[1].1, "{text}");
    // The scratch files are gone, and so is the volume.
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
    assert!(!d.pool_path().join("transfer.raw").exists());
}
