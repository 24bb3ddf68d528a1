//! `lv` answers like virsh: each read-only command runs through `lv` and through `virsh`
//! against the same private libvirtd — its test driver (`test:///default` over the daemon's
//! socket) and its session qemu driver — and the outputs must match after whitespace
//! normalisation (runs of whitespace become one space), and then byte for byte. Mutating
//! commands run through `lv` and their effect is checked with `virsh`.
//!
//! Deliberate differences, normalised away here and listed in `lv --help`:
//! - `version`: the first two lines name lv, not the C library;
//! - `dominfo` on the test driver: `CPU time` is the wall clock there, so it moves between
//!   the two runs (the line is dropped from both);
//! - `qemu-monitor-command`: QEMU numbers each reply's `id` (`libvirt-N`);
//! - `event --list`: lv also knows the event types added after libvirt 9.0;
//! - failures: both must fail; lv's messages add libvirt's reason where virsh has none.
//!
//! virsh runs with `LC_ALL=C` and `TZ=UTC` (lv prints snapshot times in UTC).

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use libvirt_rpc::client::{Client, ConnectOptions};
use testbed::libvirtd::Libvirtd;

fn lv(uri: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lv"))
        .args(["-c", uri, "--timeout", "60"])
        .args(args)
        .env_remove("LIBVIRT_DEFAULT_URI")
        .output()
        .expect("run lv")
}

fn virsh_cmd(uri: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new("virsh");
    cmd.args(["-c", uri])
        .args(args)
        .env_remove("LIBVIRT_DEFAULT_URI")
        .env("LC_ALL", "C")
        .env("TZ", "UTC");
    cmd
}

fn virsh(uri: &str, args: &[&str]) -> Output {
    virsh_cmd(uri, args).output().expect("run virsh")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs of whitespace as one space, ends trimmed.
fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Run `args` through both; both succeed with the same normalised output (after `fix`), or
/// both fail. Returns whether they succeeded.
fn same_with(uri: &str, args: &[&str], fix: impl Fn(&str) -> String) -> bool {
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

fn same(uri: &str, args: &[&str]) -> bool {
    same_with(uri, args, str::to_string)
}

/// `lv ARGS` succeeds; its stdout.
fn lv_ok(uri: &str, args: &[&str]) -> String {
    let o = lv(uri, args);
    assert!(
        o.status.success(),
        "lv {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    text(&o)
}

/// `virsh ARGS` succeeds; its stdout, trimmed.
fn virsh_ok(uri: &str, args: &[&str]) -> String {
    let o = virsh(uri, args);
    assert!(
        o.status.success(),
        "virsh {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    text(&o).trim().to_string()
}

fn without_lines(prefix: &'static str) -> impl Fn(&str) -> String {
    move |s: &str| {
        s.lines()
            .filter(|l| !l.starts_with(prefix))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The commands both drivers answer; `dom`, `pool`, `vol`, `net` name objects that exist.
/// `live_pool`: the pool is a directory on the host's disk, whose allocation other processes
/// change between the two runs (its `Allocation`/`Available` lines are dropped).
fn read_only_commands(
    uri: &str,
    dom: &str,
    pool: &str,
    vol: &str,
    net: Option<&str>,
    live_pool: bool,
) {
    let pool_fix = |s: &str| {
        s.lines()
            .filter(|l| {
                !(live_pool && (l.starts_with("Allocation:") || l.starts_with("Available:")))
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    same_with(uri, &["pool-info", pool], pool_fix);
    same_with(uri, &["pool-info", "--bytes", pool], pool_fix);
    for args in [
        &["list"][..],
        &["list", "--all"],
        &["list", "--all", "--name"],
        &["domstate", dom],
        &["domstate", "--reason", dom],
        &["domstate", "no-such-domain"],
        &["dumpxml", dom],
        &["dumpxml", "--inactive", dom],
        &["domifaddr", dom],
        &["snapshot-list", dom],
        &["pool-list"],
        &["pool-list", "--all"],
        &["pool-info", "no-such-pool"],
        &["vol-list", pool],
        &["vol-list", "--pool", pool],
        &["vol-list", "--details", pool],
        &["vol-info", "--pool", pool, vol],
        &["vol-info", "--bytes", vol, "--pool", pool],
        &["net-list"],
        &["net-list", "--all"],
        &["nodeinfo"],
        &["hostname"],
        &["capabilities"],
        &["iface-list"],
        &["iface-list", "--all"],
        &["nodedev-list"],
        &["nodedev-list", "--all"],
        &["secret-list"],
        &["nwfilter-list"],
    ] {
        same(uri, args);
    }
    same_with(uri, &["dominfo", dom], without_lines("CPU time:"));
    if let Some(net) = net {
        same(uri, &["net-info", net]);
        same(uri, &["net-dumpxml", net]);
        same(uri, &["net-dumpxml", "--inactive", net]);
    }
    // version: all but the two lines naming the client library.
    let drop_library = |s: &str| {
        s.lines()
            .filter(|l| {
                !l.starts_with("Compiled against library:") && !l.starts_with("Using library:")
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(same_with(uri, &["version"], drop_library));
    assert!(same_with(uri, &["version", "--daemon"], drop_library));
    // event --list: virsh 9.0's names are lv's first ones.
    let ours = lv_ok(uri, &["event", "--list"]);
    let theirs = virsh_ok(uri, &["event", "--list"]);
    assert!(
        norm(&ours).starts_with(&norm(&theirs)),
        "lv event --list:\n{ours}\nvirsh:\n{theirs}"
    );
}

/// Start `lv event ARGS` and `virsh event ARGS` (through virsh's shell, after an `echo`, so
/// we know when it reaches the command), wait until both listen, run `trigger`, and return
/// both outputs.
fn events_of(uri: &str, args: &[&str], trigger: impl FnOnce()) -> (String, String) {
    let mut ours = Command::new(env!("CARGO_BIN_EXE_lv"))
        .args(["-c", uri, "event"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(ours.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "waiting for events");
    let mut theirs = virsh_cmd(uri, &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let mut stdin = theirs.stdin.take().unwrap();
        writeln!(stdin, "echo listening\nevent {}", args.join(" ")).unwrap();
    }
    let mut out = BufReader::new(theirs.stdout.take().unwrap());
    let mut line = String::new();
    while line.trim() != "listening" {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "virsh ended early");
    }
    // virsh registers its callbacks right after the echo; give it a moment.
    std::thread::sleep(Duration::from_millis(500));
    trigger();
    let ours = ours.wait_with_output().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    theirs.wait().unwrap();
    // virsh's shell echoes its prompt and the command line.
    let rest = without_lines("virsh #")(&rest);
    (text(&ours), rest)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lv_matches_virsh_on_the_test_driver() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let uri = d.test_uri();
    // The test driver's state lives as long as one connection to it does: hold one, so
    // what lv changes is what virsh sees.
    let hold = Client::connect(&uri, ConnectOptions::default())
        .await
        .unwrap();
    let pool = "default-pool";

    // The test driver has no ConnectListAll* for secrets and filters: lv falls back to the
    // older calls as virsh does, and fails with virsh's words when those fail too.
    for cmd in ["secret-list", "nwfilter-list"] {
        let (ours, theirs) = (lv(&uri, &[cmd]), virsh(&uri, &[cmd]));
        assert_eq!(ours.status.success(), theirs.status.success(), "{cmd}");
        assert_eq!(
            String::from_utf8_lossy(&ours.stderr).trim(),
            String::from_utf8_lossy(&theirs.stderr).trim(),
            "{cmd}"
        );
    }

    // The URI as virsh takes it: -c, --connect, or $LIBVIRT_DEFAULT_URI.
    let by_env = Command::new(env!("CARGO_BIN_EXE_lv"))
        .args(["list", "--all"])
        .env("LIBVIRT_DEFAULT_URI", &uri)
        .output()
        .unwrap();
    assert!(by_env.status.success());
    assert_eq!(
        norm(&text(&by_env)),
        norm(&virsh_ok(&uri, &["list", "--all"]))
    );
    let long = Command::new(env!("CARGO_BIN_EXE_lv"))
        .args(["--connect", &uri, "domstate", "test"])
        .output()
        .unwrap();
    assert_eq!(text(&long), "running\n\n");

    // Mutating commands through lv, checked through virsh.
    assert_eq!(
        lv_ok(&uri, &["vol-create-as", pool, "lv1.img", "10M"]),
        "Vol lv1.img created\n\n"
    );
    lv_ok(
        &uri,
        &[
            "vol-create-as",
            pool,
            "lv2.img",
            "1G",
            "--allocation",
            "0",
            "--format",
            "raw",
        ],
    );
    assert_eq!(
        virsh_ok(&uri, &["vol-info", "--bytes", "--pool", pool, "lv2.img"])
            .lines()
            .nth(2),
        Some("Capacity:       1073741824 bytes")
    );
    assert!(virsh_ok(&uri, &["vol-list", pool]).contains("lv1.img"));
    assert_eq!(
        lv_ok(&uri, &["snapshot-create-as", "test", "snap1", "first"]),
        "Domain snapshot snap1 created\n"
    );
    assert!(virsh_ok(&uri, &["snapshot-list", "test"]).contains("snap1"));

    read_only_commands(&uri, "test", pool, "lv1.img", Some("default"), false);
    same_with(&uri, &["dominfo", "1"], without_lines("CPU time:"));
    // virsh -q: no header, no footer, no confirmations.
    for args in [
        &["-q", "list", "--all"][..],
        &["-q", "pool-list"],
        &["-q", "vol-list", pool],
        &["-q", "domstate", "test"],
        &["-q", "snapshot-list", "test"],
    ] {
        same(&uri, args);
    }
    assert_eq!(lv_ok(&uri, &["-q", "suspend", "test"]), "");
    assert_eq!(virsh_ok(&uri, &["domstate", "test"]), "paused");
    assert_eq!(lv_ok(&uri, &["-q", "resume", "test"]), "");
    // virsh -r: reads work, changes are refused by the daemon.
    same(&uri, &["-r", "list", "--all"]);
    assert!(!same(&uri, &["-r", "suspend", "test"]));
    assert_eq!(virsh_ok(&uri, &["domstate", "test"]), "running");
    same(&uri, &["domstate", "6695eb01-f6a4-8304-79aa-97f2502e193f"]);
    same(&uri, &["vol-info", "/default-pool/lv1.img"]);

    // The lifecycle verbs, each checked with virsh.
    let state = |want: &str| assert_eq!(virsh_ok(&uri, &["domstate", "test"]), want);
    assert_eq!(
        lv_ok(&uri, &["suspend", "test"]),
        "Domain 'test' suspended\n\n"
    );
    state("paused");
    assert_eq!(
        lv_ok(&uri, &["resume", "test"]),
        "Domain 'test' resumed\n\n"
    );
    state("running");
    // snap1 was taken running: reverting a paused domain to it runs it again.
    lv_ok(&uri, &["suspend", "test"]);
    state("paused");
    assert_eq!(
        lv_ok(&uri, &["snapshot-revert", "test", "snap1"]),
        "Domain snapshot snap1 reverted\n\n"
    );
    state("running");
    assert_eq!(
        lv_ok(&uri, &["reboot", "test"]),
        "Domain 'test' is being rebooted\n\n"
    );
    assert_eq!(
        lv_ok(&uri, &["shutdown", "test"]),
        "Domain 'test' is being shutdown\n\n"
    );
    state("shut off");
    assert_eq!(
        virsh_ok(&uri, &["domstate", "--reason", "test"]),
        "shut off (shutdown)"
    );
    assert_eq!(lv_ok(&uri, &["start", "test"]), "Domain 'test' started\n\n");
    state("running");
    assert_eq!(
        lv_ok(&uri, &["destroy", "test"]),
        "Domain 'test' destroyed\n\n"
    );
    assert_eq!(
        virsh_ok(&uri, &["domstate", "--reason", "test"]),
        "shut off (destroyed)"
    );
    // Inactive: the commands again, now with a shut-off domain.
    same(&uri, &["list", "--all"]);
    same(&uri, &["list", "--inactive"]);
    same_with(&uri, &["dominfo", "test"], without_lines("CPU time:"));
    assert!(!lv(&uri, &["start", "no-such-domain"]).status.success());

    // event: the same lines for a suspend and a resume.
    lv_ok(&uri, &["start", "test"]);
    let (ours, theirs) = events_of(&uri, &["--all", "--loop", "--timeout", "3"], || {
        lv_ok(&uri, &["suspend", "test"]);
        lv_ok(&uri, &["resume", "test"]);
    });
    assert_eq!(
        norm(&ours),
        norm(&theirs),
        "lv event:\n{ours}\nvirsh event:\n{theirs}"
    );
    assert!(
        ours.contains("event 'lifecycle' for domain 'test': Suspended Paused"),
        "{ours}"
    );

    assert_eq!(
        lv_ok(&uri, &["vol-delete", "--pool", pool, "lv1.img"]),
        "Vol lv1.img deleted\n\n"
    );
    assert!(!virsh_ok(&uri, &["vol-list", pool]).contains("lv1.img"));
    assert_eq!(
        lv_ok(&uri, &["undefine", "test"]),
        "Domain 'test' has been undefined\n\n"
    );
    // Still running, now transient; destroying it removes it.
    assert!(virsh_ok(&uri, &["dominfo", "test"]).contains("Persistent:     no"));
    lv_ok(&uri, &["destroy", "test"]);
    assert!(!virsh(&uri, &["domstate", "test"]).status.success());
    hold.close();
}

#[test]
fn lv_matches_virsh_on_the_session_qemu_driver() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let uri = d.uri();
    let pool = d.pool_name();
    let tmp = tempfile::tempdir().unwrap();
    let xml = tmp.path().join("dom.xml");
    std::fs::write(&xml, d.minimal_domain_xml("lvq")).unwrap();
    let xml = xml.to_str().unwrap();

    assert_eq!(
        lv_ok(&uri, &["define", xml]),
        format!("Domain 'lvq' defined from {xml}\n\n")
    );
    assert_eq!(virsh_ok(&uri, &["domstate", "lvq"]), "shut off");
    lv_ok(&uri, &["vol-create-as", pool, "q.raw", "1M"]);
    assert!(virsh_ok(&uri, &["vol-list", pool]).contains("q.raw"));

    // Shut off, then running.
    read_only_commands(&uri, "lvq", pool, "q.raw", None, true);
    assert_eq!(lv_ok(&uri, &["start", "lvq"]), "Domain 'lvq' started\n\n");
    assert_eq!(
        virsh_ok(&uri, &["domstate", "--reason", "lvq"]),
        "running (booted)"
    );
    read_only_commands(&uri, "lvq", pool, "q.raw", None, true);

    // The monitor: QMP (plain and pretty) and HMP, QEMU's reply ids aside.
    let ids = |s: &str| {
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find("\"libvirt-") {
            out.push_str(&rest[..i]);
            out.push_str("\"libvirt-N");
            rest = rest[i + 9..].trim_start_matches(|c: char| c.is_ascii_digit());
        }
        out + rest
    };
    let qmp = r#"{"execute":"query-status"}"#;
    assert!(same_with(&uri, &["qemu-monitor-command", "lvq", qmp], ids));
    assert!(same_with(
        &uri,
        &["qemu-monitor-command", "lvq", "--pretty", qmp],
        ids
    ));
    assert!(same(
        &uri,
        &["qemu-monitor-command", "lvq", "--hmp", "info", "status"]
    ));
    assert!(lv_ok(&uri, &["qemu-monitor-command", "lvq", qmp]).contains(r#""status":"running""#));
    // No guest agent configured: both refuse.
    assert!(!same(
        &uri,
        &["qemu-agent-command", "lvq", r#"{"execute":"guest-ping"}"#]
    ));

    lv_ok(&uri, &["suspend", "lvq"]);
    assert_eq!(
        virsh_ok(&uri, &["domstate", "--reason", "lvq"]),
        "paused (user)"
    );
    same(&uri, &["list"]);
    same(&uri, &["dominfo", "lvq"]);
    lv_ok(&uri, &["resume", "lvq"]);
    assert_eq!(virsh_ok(&uri, &["domstate", "lvq"]), "running");
    lv_ok(&uri, &["destroy", "lvq"]);
    assert_eq!(
        virsh_ok(&uri, &["domstate", "--reason", "lvq"]),
        "shut off (destroyed)"
    );

    // vol-upload / vol-download through lv, checked with virsh's download.
    let src = tmp.path().join("src");
    let data: Vec<u8> = (0..(1u32 << 20)).map(|i| (i % 251) as u8).collect();
    std::fs::write(&src, &data).unwrap();
    let src_s = src.to_str().unwrap();
    assert_eq!(
        lv_ok(&uri, &["vol-upload", "q.raw", src_s, "--pool", pool]),
        "\n"
    );
    let back = tmp.path().join("back");
    virsh_ok(
        &uri,
        &[
            "vol-download",
            "--pool",
            pool,
            "q.raw",
            back.to_str().unwrap(),
        ],
    );
    assert!(
        std::fs::read(&back).unwrap() == data,
        "virsh reads back what lv uploaded"
    );
    let ours = tmp.path().join("ours");
    lv_ok(
        &uri,
        &[
            "vol-download",
            "--pool",
            pool,
            "q.raw",
            ours.to_str().unwrap(),
        ],
    );
    assert!(std::fs::read(&ours).unwrap() == data);

    assert_eq!(
        lv_ok(&uri, &["vol-delete", "q.raw", "--pool", pool]),
        "Vol q.raw deleted\n\n"
    );
    assert!(!virsh_ok(&uri, &["vol-list", pool]).contains("q.raw"));
    lv_ok(&uri, &["undefine", "lvq"]);
    assert!(!virsh(&uri, &["domstate", "lvq"]).status.success());
}
