//! `lv` answers like virsh: each read-only command runs through `lv` and through `virsh`
//! against the same private libvirtd — its test driver (`test:///default` over the daemon's
//! socket) and its session qemu driver — and the outputs must match after whitespace
//! normalisation (runs of whitespace become one space), and then byte for byte. Mutating
//! commands run through `lv` and their effect is checked with `virsh`.
//!
//! A third test boots the real egress guest (qemu-ga inside) under TCG for the guest-agent
//! commands (`qemu-agent-command`, `domifaddr --source agent`).
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

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::virsh::{
    lv, lv_ok, norm, same, same_with, text, virsh, virsh_cmd, virsh_ok, without_lines,
};
use libvirt_remote::client::{Client, ConnectOptions};
use testbed::libvirtd::Libvirtd;

/// `domstats` output with the numbers that move between two runs cut to `N`: every numeric
/// value except states, reasons, counts, current and maximum figures. (A running guest's
/// times and byte counters move; for a shut-off domain, libvirt 9.0's qemu driver reports
/// the daemon's own CPU times under `cpu.*`.) Names, paths, strings, the keys and their
/// order stay as they are.
fn stats_fix(s: &str) -> String {
    let stable = [".count", ".current", ".maximum", ".state", ".reason"];
    s.lines()
        .map(
            |l| match l.strip_prefix("  ").and_then(|kv| kv.split_once('=')) {
                Some((k, v))
                    if v.parse::<f64>().is_ok() && !stable.iter().any(|e| k.ends_with(e)) =>
                {
                    format!("  {k}=N")
                }
                _ => l.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

/// `lv domstats` prints what `virsh domstats` prints ([`stats_fix`] aside), with each
/// group, the list filters, named domains (twice: both list it twice) and `--raw`.
fn domstats_commands(uri: &str, dom: &str) {
    for args in [
        &["domstats"][..],
        &["domstats", "--state"],
        &["domstats", "--cpu-total"],
        &["domstats", "--balloon"],
        &["domstats", "--vcpu"],
        &["domstats", "--interface"],
        &["domstats", "--block"],
        &[
            "domstats",
            "--state",
            "--cpu-total",
            "--balloon",
            "--vcpu",
            "--interface",
            "--block",
        ],
        &["domstats", "--list-active"],
        &["domstats", "--list-inactive"],
        &["domstats", "--list-active", "--list-inactive", "--state"],
        &["domstats", dom],
        &["domstats", "--state", dom, dom],
        &["domstats", "--raw", "--vcpu", dom],
        &["-q", "domstats", "--state"],
    ] {
        same_with(uri, args, stats_fix);
    }
    // An unknown domain: both fail.
    assert!(!same_with(uri, &["domstats", "no-such-domain"], stats_fix));
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
        &["list", "--all", "--uuid"],
        &["list", "--all", "--uuid", "--name"],
        &["list", "--inactive"],
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
    domstats_commands(uri, dom);
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

/// The lines of a `virsh event` / `lv event` output that are not probes of [`events_of`]
/// (its metadata-change events), after checking that its `events received: N` footer counts
/// the event lines.
fn without_probes(out: &str) -> String {
    let events = out.lines().filter(|l| l.starts_with("event '")).count();
    let footer = format!("events received: {events}");
    assert!(out.lines().any(|l| l == footer), "no `{footer}` in:\n{out}");
    out.lines()
        .filter(|l| !l.starts_with("event 'metadata-change'") && !l.starts_with("events received:"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Start `lv event ARGS` and `virsh event ARGS` (through virsh's shell, after an `echo`, so
/// we know when it reaches the command), wait until both listen, run `trigger`, and return
/// both outputs, without the probes and event counts ([`without_probes`]).
///
/// lv says when it listens; virsh does not, so metadata changes of `dom` are made until
/// virsh prints one (a fixed pause was not enough on a loaded machine: virsh missed the
/// trigger's first event). Both wait `WINDOW` seconds for events: long enough for all of
/// that on a loaded machine (the window is not what is tested).
fn events_of(uri: &str, dom: &str, args: &[&str], trigger: impl FnOnce()) -> (String, String) {
    const WINDOW: &str = "10";
    let mut ours = Command::new(env!("CARGO_BIN_EXE_lv"))
        .args(["-c", uri, "event"])
        .args(args)
        .args(["--timeout", WINDOW])
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
        writeln!(
            stdin,
            "echo listening\nevent {} --timeout {WINDOW}",
            args.join(" ")
        )
        .unwrap();
    }
    // virsh's lines, as they come.
    let (tx, rx) = std::sync::mpsc::channel();
    let out = BufReader::new(theirs.stdout.take().unwrap());
    let reader = std::thread::spawn(move || {
        for l in out.lines() {
            if tx.send(l.unwrap()).is_err() {
                return;
            }
        }
    });
    let mut seen = Vec::new();
    while seen.last().is_none_or(|l: &String| l.trim() != "listening") {
        seen.push(rx.recv().expect("virsh ended early"));
    }
    let probe_seen = |l: &String| l.starts_with("event 'metadata-change'");
    let t = std::time::Instant::now();
    for i in 0.. {
        assert!(i < 60, "virsh printed no probe event:\n{}", seen.join("\n"));
        virsh_ok(
            uri,
            &[
                "metadata",
                dom,
                "--uri",
                "http://lv.example/probe",
                "--key",
                "probe",
                "--set",
                &format!("<probe n='{i}'/>"),
            ],
        );
        let got = rx.recv_timeout(Duration::from_millis(500));
        if let Ok(l) = got {
            let probe = probe_seen(&l);
            seen.push(l);
            if probe {
                eprintln!(
                    "virsh listened {:?} after its echo ({} probes)",
                    t.elapsed(),
                    i + 1
                );
                break;
            }
        }
    }
    trigger();
    let ours = ours.wait_with_output().unwrap();
    seen.extend(rx);
    reader.join().unwrap();
    theirs.wait().unwrap();
    // virsh's shell echoes its prompt and the command line.
    let rest = seen
        .iter()
        .skip_while(|l| l.trim() != "listening")
        .skip(1)
        .filter(|l| !l.starts_with("virsh #"))
        .cloned()
        .collect::<Vec<_>>()
        .join("\n");
    (without_probes(&text(&ours)), without_probes(&rest))
}

/// `lv event --all` and `virsh event --all` print the same lines while lv suspends and
/// resumes the running domain `dom`.
fn suspend_resume_events_match(uri: &str, dom: &str) {
    let (ours, theirs) = events_of(uri, dom, &["--all", "--loop"], || {
        lv_ok(uri, &["suspend", dom]);
        lv_ok(uri, &["resume", dom]);
    });
    assert_eq!(
        norm(&ours),
        norm(&theirs),
        "lv event:\n{ours}\nvirsh event:\n{theirs}"
    );
    let paused = format!("event 'lifecycle' for domain '{dom}': Suspended Paused");
    assert!(ours.contains(&paused), "{ours}");
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
    // The test driver has no QEMU monitor or agent: both refuse.
    assert!(!same(
        &uri,
        &[
            "qemu-monitor-command",
            "test",
            r#"{"execute":"query-status"}"#
        ]
    ));
    assert!(!same(
        &uri,
        &["qemu-agent-command", "test", r#"{"execute":"guest-ping"}"#]
    ));
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
    suspend_resume_events_match(&uri, "test");

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

    // A defined (inactive) network: the session daemon's network driver keeps its
    // definition; starting one would need root.
    let net_xml = tmp.path().join("net.xml");
    std::fs::write(
        &net_xml,
        "<network><name>lvnet</name><bridge name='lvbr0'/>\
         <ip address='192.168.250.1' netmask='255.255.255.0'/></network>",
    )
    .unwrap();
    virsh_ok(&uri, &["net-define", net_xml.to_str().unwrap()]);

    // More domains, named so that virsh's order (running by id, then by name, ASCII case
    // folded) differs from byte order: `list` must print them as virsh does.
    let others = ["lvB", "lva", "LVc", "_x", "Z9", "9z"];
    for name in others {
        let path = tmp.path().join(format!("{name}.xml"));
        std::fs::write(&path, d.minimal_domain_xml(name)).unwrap();
        virsh_ok(&uri, &["define", path.to_str().unwrap()]);
    }

    // Shut off, then running.
    read_only_commands(&uri, "lvq", pool, "q.raw", Some("lvnet"), true);
    assert_eq!(lv_ok(&uri, &["start", "lvq"]), "Domain 'lvq' started\n\n");
    assert_eq!(
        virsh_ok(&uri, &["domstate", "--reason", "lvq"]),
        "running (booted)"
    );
    read_only_commands(&uri, "lvq", pool, "q.raw", Some("lvnet"), true);
    virsh_ok(&uri, &["net-undefine", "lvnet"]);

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
    // An empty array (no iothreads), plain and pretty.
    let empty = r#"{"execute":"query-iothreads"}"#;
    assert!(same_with(
        &uri,
        &["qemu-monitor-command", "lvq", empty],
        ids
    ));
    assert!(same_with(
        &uri,
        &["qemu-monitor-command", "lvq", "--pretty", empty],
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

    // event: the same lines for a suspend and a resume of a QEMU domain.
    suspend_resume_events_match(&uri, "lvq");
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
    for name in others {
        lv_ok(&uri, &["undefine", name]);
    }
}

/// Prints the guest's serial console (file `.0`) and qemu's log of domain `.2` when the test
/// panics.
struct Dump<'a>(&'a std::path::Path, &'a Libvirtd, &'a str);

impl Drop for Dump<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "---- serial console ----\n{}\n---- qemu log ----\n{}",
                std::fs::read_to_string(self.0).unwrap_or_default(),
                self.1.domain_log(self.2)
            );
        }
    }
}

/// The real egress guest (scripts/build-guest-image: qemu-ga in a busybox initramfs) booted
/// once under TCG (`type='qemu'`: nested `/dev/kvm` here cannot boot a real kernel) with an
/// agent channel: `qemu-agent-command` (`guest-ping`, `guest-info`,
/// `guest-get-osinfo`, `guest-get-host-name`, plain and `--pretty`, and a command the agent
/// does not know) and `domifaddr --source agent` through lv and virsh on the same session
/// daemon, and `Domain::qemu_agent_command` through the handle API against virsh's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lv_agent_commands_match_virsh_on_a_real_guest() {
    use libvirt_remote::Connect;
    use libvirt_remote::proto::procs::qemu::agent_timeout;
    use testbed::guest;

    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let Some(image) = tokio::task::spawn_blocking(guest::image_or_skip)
        .await
        .unwrap()
    else {
        return;
    };
    let uri = d.uri();
    // The disk, the agent socket and the serial log in a short dir the daemon's user owns
    // (libvirt's own session socket paths under the testbed's dirs are too long).
    let dir = guest::shared_dir("lv-agent-").unwrap();
    let disk = dir.path().join("disk.img");
    std::fs::copy(&image.path, &disk).unwrap();
    d.user().own(&disk).unwrap();
    let serial = dir.path().join("serial.log");
    let name = "lv-agent";
    let xml = format!(
        "<domain type='qemu'><name>{name}</name><memory unit='MiB'>256</memory><vcpu>1</vcpu>\
         <os><type arch='x86_64'>hvm</type><boot dev='hd'/></os><features><acpi/></features>\
         <devices>\
         <disk type='file' device='disk'><driver name='qemu' type='raw'/>\
         <source file='{disk}'/><target dev='vda' bus='virtio'/></disk>\
         <interface type='user'><model type='virtio'/></interface>\
         <channel type='unix'><source mode='bind' path='{sock}'/>\
         <target type='virtio' name='org.qemu.guest_agent.0'/></channel>\
         <serial type='file'><source path='{serial}'/><target port='0'/></serial>\
         </devices></domain>",
        disk = disk.display(),
        sock = dir.path().join("agent.sock").display(),
        serial = serial.display(),
    );
    let conn = Connect::open(&uri).await.unwrap();
    let dom = conn.define_domain_xml(&xml).await.unwrap();
    dom.create().await.unwrap();
    let _dump = Dump(&serial, &d, name);

    // The agent answers once the guest's init has started qemu-ga (after DHCP).
    let ping = r#"{"execute":"guest-ping"}"#;
    let started = std::time::Instant::now();
    let pong = loop {
        match dom.qemu_agent_command(ping, 5, Default::default()).await {
            Ok(reply) => break reply,
            Err(e) if started.elapsed() < Duration::from_secs(240) => {
                assert!(e.remote().is_some(), "{e}");
                assert!(dom.is_active().await.unwrap(), "the guest stopped: {e}");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => panic!("no agent answer within 240 s: {e}"),
        }
    };
    eprintln!("agent answered {:.1?} after start", started.elapsed());
    assert_eq!(pong.as_deref(), Some(r#"{"return":{}}"#));

    let commands = [
        ping,
        r#"{"execute":"guest-info"}"#,
        r#"{"execute":"guest-get-osinfo"}"#,
        r#"{"execute":"guest-get-host-name"}"#,
    ];
    let blocking_uri = uri.clone();
    let outputs = tokio::task::spawn_blocking(move || {
        let uri = blocking_uri;
        let mut outputs = Vec::new();
        for cmd in commands {
            assert!(same(&uri, &["qemu-agent-command", name, cmd]), "{cmd}");
            assert!(same(&uri, &["qemu-agent-command", name, "--pretty", cmd]));
            assert!(same(
                &uri,
                &["qemu-agent-command", "--timeout", "10", name, cmd]
            ));
            outputs.push(virsh_ok(&uri, &["qemu-agent-command", name, cmd]));
        }
        // A command the agent does not know: both fail.
        assert!(!same(
            &uri,
            &[
                "qemu-agent-command",
                name,
                r#"{"execute":"no-such-command"}"#
            ]
        ));
        // The agent's view of the interfaces: 10.0.2.15 from qemu's user-network DHCP.
        assert!(same(&uri, &["domifaddr", name, "--source", "agent"]));
        assert!(same(
            &uri,
            &["domifaddr", name, "--source", "agent", "--full"]
        ));
        let addrs = lv_ok(&uri, &["domifaddr", "--source", "agent", name]);
        assert!(addrs.contains(" 10.0.2.15/24"), "{addrs}");
        outputs
    })
    .await
    .unwrap();
    // The handle method answers what virsh printed.
    for (cmd, theirs) in commands.iter().zip(&outputs) {
        let ours = dom
            .qemu_agent_command(cmd, agent_timeout::DEFAULT, Default::default())
            .await
            .unwrap();
        assert_eq!(ours.as_deref(), Some(theirs.as_str()), "{cmd}");
    }
    let info = &outputs[1];
    assert!(info.contains(r#""name":"guest-get-osinfo""#), "{info}");
    assert!(outputs[3].contains("egress-guest"), "{}", outputs[3]);

    dom.destroy().await.unwrap();
    dom.undefine().await.unwrap();
}
