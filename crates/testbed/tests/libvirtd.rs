//! Tests of the private libvirtd: lifecycle, isolation, fault controls and clean teardown.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use testbed::libvirtd::{Libvirtd, LibvirtdError};

/// Pids of any user's processes whose cmdline or environ mentions `dir`.
fn processes_in(dir: &Path) -> Vec<(u32, String)> {
    let needle = format!("{}/", dir.display()).into_bytes();
    let mut found = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let cmdline = fs::read(e.path().join("cmdline")).unwrap_or_default();
        let environ = fs::read(e.path().join("environ")).unwrap_or_default();
        if [&cmdline, &environ]
            .iter()
            .any(|b| b.windows(needle.len()).any(|w| w == needle))
        {
            found.push((pid, String::from_utf8_lossy(&cmdline).replace('\0', " ")));
        }
    }
    found
}

/// Field `name` of /proc/PID/status.
fn proc_status(pid: u32, name: &str) -> Option<String> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .map(|v| v.trim().to_string())
}

#[test]
fn start_and_stop() {
    let t = Instant::now();
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let started = t.elapsed();

    assert!(d.socket_path().starts_with(d.dir()));
    assert_eq!(
        d.uri(),
        format!("qemu+unix:///session?socket={}", d.socket_path().display())
    );
    assert_eq!(
        fs::read_to_string(format!("/proc/{}/comm", d.pid()))
            .unwrap()
            .trim(),
        "libvirtd"
    );
    // The daemon runs as the test user; we (root in CI) still talk to it through the socket.
    let uid = proc_status(d.pid(), "Uid:").unwrap();
    assert_eq!(
        uid.split_whitespace().next().unwrap(),
        d.user().uid.to_string()
    );

    let t = Instant::now();
    let version = d.virsh(&["version"]).unwrap();
    eprintln!("first qemu-driver call took {:?}", t.elapsed());
    assert!(version.contains("Running hypervisor: QEMU"), "{version}");
    let pools = d.virsh(&["pool-list", "--name"]).unwrap();
    assert!(pools.lines().any(|l| l.trim() == d.pool_name()), "{pools}");
    assert!(d.pool_path().is_dir());

    let (dir, pid) = (d.dir().to_path_buf(), d.pid());
    let t = Instant::now();
    drop(d);
    eprintln!("libvirtd start {started:?}, stop {:?}", t.elapsed());
    assert!(!dir.exists());
    assert!(
        !Path::new(&format!("/proc/{pid}/cmdline")).exists()
            || proc_status(pid, "State:").is_some_and(|s| s.starts_with('Z'))
    );
}

#[test]
fn two_daemons_in_parallel() {
    let a = std::thread::spawn(Libvirtd::start_or_skip);
    let b = std::thread::spawn(Libvirtd::start_or_skip);
    let (Some(a), Some(b)) = (a.join().unwrap(), b.join().unwrap()) else {
        return;
    };
    assert_ne!(a.socket_path(), b.socket_path());
    assert_ne!(a.pid(), b.pid());
    a.virsh(&["vol-create-as", a.pool_name(), "only-in-a.raw", "1M"])
        .unwrap();
    let vols = |d: &Libvirtd| d.virsh(&["vol-list", d.pool_name()]).unwrap();
    assert!(vols(&a).contains("only-in-a.raw"));
    assert!(!vols(&b).contains("only-in-a.raw"));
}

#[test]
fn freeze_and_thaw() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    d.freeze().unwrap();
    assert!(proc_status(d.pid(), "State:").unwrap().starts_with('T'));
    let err = d
        .virsh_with(&d.uri(), Duration::from_secs(2), &["pool-list"])
        .unwrap_err();
    assert!(matches!(err, LibvirtdError::Timeout { .. }), "{err}");
    d.thaw().unwrap();
    d.virsh(&["pool-list"]).unwrap();
}

#[test]
fn kill_and_restart() {
    let Some(mut d) = Libvirtd::start_or_skip() else {
        return;
    };
    let old = d.pid();
    d.kill().unwrap();
    assert!(!d.is_running());
    assert!(matches!(d.freeze(), Err(LibvirtdError::NotRunning)));
    let t = Instant::now();
    let err = d.virsh(&["pool-list"]).unwrap_err();
    assert!(matches!(err, LibvirtdError::Virsh { .. }), "{err}");
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "a dead socket must fail fast"
    );

    let t = Instant::now();
    d.restart().unwrap();
    eprintln!("restart after kill took {:?}", t.elapsed());
    assert!(d.is_running());
    assert_ne!(d.pid(), old);
    let pools = d.virsh(&["pool-list", "--name"]).unwrap();
    assert!(pools.contains(d.pool_name()), "{pools}");

    // A graceful restart of a frozen daemon works too.
    d.freeze().unwrap();
    d.restart().unwrap();
    d.virsh(&["pool-list"]).unwrap();
}

#[test]
fn volumes_round_trip() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    d.virsh(&["vol-create-as", d.pool_name(), "x.raw", "1M"])
        .unwrap();
    assert!(d.pool_path().join("x.raw").exists());
    let data: Vec<u8> = (0..1024 * 1024)
        .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let src = tempfile::NamedTempFile::new().unwrap();
    fs::write(src.path(), &data).unwrap();
    let out = tempfile::tempdir().unwrap();
    let dst = out.path().join("x.out");
    let (src, dst_s) = (src.path().to_str().unwrap(), dst.to_str().unwrap());
    d.virsh(&["vol-upload", "--pool", d.pool_name(), "x.raw", src])
        .unwrap();
    d.virsh(&["vol-download", "--pool", d.pool_name(), "x.raw", dst_s])
        .unwrap();
    assert!(fs::read(&dst).unwrap() == data);
}

#[test]
fn test_driver_through_same_socket() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let list = d
        .virsh_with(
            &d.test_uri(),
            Duration::from_secs(30),
            &["list", "--all", "--name"],
        )
        .unwrap();
    assert!(list.lines().any(|l| l.trim() == "test"), "{list}");
}

#[test]
fn domain_lifecycle_and_drop_leaves_nothing() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let xml = tempfile::NamedTempFile::new().unwrap();
    fs::write(xml.path(), d.minimal_domain_xml("tb-dom")).unwrap();
    let xml_path = xml.path().to_str().unwrap();
    let t = Instant::now();
    d.virsh(&["define", xml_path]).unwrap();
    d.virsh(&["start", "tb-dom"]).unwrap();
    eprintln!("define+start ({}) took {:?}", d.domain_type(), t.elapsed());
    let info = d.virsh(&["dominfo", "tb-dom"]).unwrap();
    assert!(info.contains("running"), "{info}");
    let dumped = d.virsh(&["dumpxml", "tb-dom"]).unwrap();
    assert!(
        dumped.contains(&format!("type='{}'", d.domain_type())),
        "{dumped}"
    );

    // Leave the domain running: drop must take qemu (and virtlogd) down with the daemon.
    let dir = d.dir().to_path_buf();
    let before = processes_in(&dir);
    assert!(
        before.iter().any(|(_, c)| c.contains("qemu-system")),
        "{before:?}"
    );
    drop(d);
    let after = processes_in(&dir);
    assert!(after.is_empty(), "left behind: {after:?}");
    assert!(!dir.exists());
}

#[test]
fn domain_destroy_and_undefine() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let xml = tempfile::NamedTempFile::new().unwrap();
    fs::write(xml.path(), d.minimal_domain_xml("tb-<&>")).unwrap();
    d.virsh(&["define", xml.path().to_str().unwrap()]).unwrap();
    d.virsh(&["start", "tb-<&>"]).unwrap();
    d.virsh(&["destroy", "tb-<&>"]).unwrap();
    d.virsh(&["undefine", "tb-<&>"]).unwrap();
    let list = d.virsh(&["list", "--all", "--name"]).unwrap();
    assert!(list.trim().is_empty(), "{list}");
}

#[test]
fn config_is_written_and_bad_config_fails_with_log() {
    let Some(d) = Libvirtd::builder()
        .keepalive_interval(2)
        .keepalive_count(3)
        .start_or_skip()
    else {
        return;
    };
    let conf = fs::read_to_string(d.dir().join("config/libvirt/libvirtd.conf")).unwrap();
    assert!(conf.contains("keepalive_interval = 2") && conf.contains("keepalive_count = 3"));
    drop(d);

    if !testbed::required() && Libvirtd::start_or_skip().is_none() {
        return;
    }
    let err = Libvirtd::builder()
        .config_line("this is = = not valid")
        .start()
        .unwrap_err();
    let LibvirtdError::Exited { ref log_tail, .. } = err else {
        panic!("{err}")
    };
    assert!(log_tail.contains("libvirtd.conf"), "{err}");
}
