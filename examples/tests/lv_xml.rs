//! `lv`'s XML-reading commands answer like virsh: `domiflist`, `domblklist`, `snapshot-info`
//! (read through libvirt-xml's typed model) and `vol-dumpxml`, `pool-dumpxml`,
//! `nodedev-dumpxml`, `domcapabilities`, each run through `lv` and `virsh` against the same
//! private libvirtd (its test driver and its session qemu driver), compared byte for byte
//! (see `common/virsh.rs`).

mod common;

use common::virsh::{lv_ok, same, virsh, virsh_ok};
use libvirt_remote::client::{Client, ConnectOptions};
use libvirt_xml::{Disk, DiskDriverType, Domain, Interface};
use testbed::libvirtd::Libvirtd;

/// These node devices, dumped by both.
fn nodedevs_match<'a>(uri: &str, names: impl IntoIterator<Item = &'a str>) {
    for name in names {
        assert!(
            same(uri, &["nodedev-dumpxml", name]),
            "nodedev-dumpxml {name}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn xml_commands_match_virsh_on_the_test_driver() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let uri = d.test_uri();
    // The test driver's state lives as long as a connection to it does.
    let hold = Client::connect(&uri, ConnectOptions::default())
        .await
        .unwrap();
    let pool = "default-pool";
    lv_ok(
        &uri,
        &["vol-create-as", pool, "x.img", "10M", "--format", "raw"],
    );
    // A chain of snapshots: s1 ← s2 (current), s1 ← s3.
    for (name, parent) in [("s1", None), ("s2", Some("s1")), ("s3", Some("s1"))] {
        if let Some(p) = parent {
            virsh_ok(&uri, &["snapshot-revert", "test", p]);
        }
        lv_ok(&uri, &["snapshot-create-as", "test", name, "desc"]);
    }
    virsh_ok(&uri, &["snapshot-current", "test", "s2"]);
    for args in [
        &["domiflist", "test"][..],
        &["domiflist", "--inactive", "test"],
        &["domiflist", "--domain", "test"],
        &["domblklist", "test"],
        &["domblklist", "--details", "test"],
        &["domblklist", "--inactive", "test"],
        &["vol-dumpxml", "--pool", pool, "x.img"],
        &["vol-dumpxml", "/default-pool/x.img"],
        &["pool-dumpxml", pool],
        &["pool-dumpxml", "--pool", pool],
        &["snapshot-info", "test", "s1"],
        &["snapshot-info", "test", "s2"],
        &["snapshot-info", "test", "s3"],
        &["snapshot-info", "--current", "test"],
        &["snapshot-info", "test", "--snapshotname", "s1"],
        &["-q", "domiflist", "test"],
        &["-q", "domblklist", "test"],
    ] {
        assert!(same(&uri, args), "{args:?} failed");
    }
    // Both refuse the same things.
    for args in [
        &["domiflist", "no-such-domain"][..],
        &["domblklist", "no-such-domain"],
        &["vol-dumpxml", "--pool", pool, "no-such.img"],
        &["pool-dumpxml", "no-such-pool"],
        &["nodedev-dumpxml", "no-such-device"],
        &["snapshot-info", "test", "no-such-snapshot"],
        &["snapshot-info", "test"],
        &["snapshot-info", "test", "s1", "--current"],
        // The test driver has no domain capabilities, and no inactive pool XML.
        &["domcapabilities"],
        &["pool-dumpxml", "--inactive", pool],
    ] {
        assert!(!same(&uri, args), "{args:?} succeeded");
    }
    // The test driver's devices (it refuses the listing call virsh makes).
    nodedevs_match(
        &uri,
        ["computer", "scsi_host1", "scsi_host2", "scsi_host11"],
    );
    hold.close();
}

#[test]
fn xml_commands_match_virsh_on_the_session_qemu_driver() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let uri = d.uri();
    let pool = d.pool_name();
    lv_ok(
        &uri,
        &["vol-create-as", pool, "a.qcow2", "16M", "--format", "qcow2"],
    );
    lv_ok(&uri, &["vol-create-as", pool, "b.raw", "1M"]);
    let path = virsh_ok(&uri, &["vol-path", "--pool", pool, "b.raw"]);
    // The guest, built with libvirt-xml: disks of three kinds and two NICs.
    let mut dom = Domain::new(d.domain_type().parse().unwrap(), "lvx")
        .with_memory_mib(64)
        .with_vcpus(1)
        .with_disk(Disk::volume(pool, "a.qcow2", "vda").with_format(DiskDriverType::Qcow2))
        .with_disk(Disk::file(path.as_str(), "vdb").with_format(DiskDriverType::Raw))
        .with_interface(Interface::user().with_mac("52:54:00:12:34:56"))
        .with_interface(Interface::user().with_model("e1000"));
    // An empty CD-ROM: no source.
    let mut cd = Disk::file("", "sda").cdrom();
    cd.source = None;
    dom = dom.with_disk(cd);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("lvx.xml");
    std::fs::write(&file, dom.to_xml()).unwrap();
    lv_ok(&uri, &["define", file.to_str().unwrap()]);

    let commands: &[&[&str]] = &[
        &["domiflist", "lvx"],
        &["domiflist", "--inactive", "lvx"],
        &["domblklist", "lvx"],
        &["domblklist", "--details", "lvx"],
        &["domblklist", "--inactive", "--details", "lvx"],
        &["vol-dumpxml", "--pool", pool, "a.qcow2"],
        &["vol-dumpxml", &path],
        &["pool-dumpxml", pool],
        &["pool-dumpxml", "--inactive", pool],
        &["domcapabilities"],
        &["domcapabilities", "--virttype", "qemu"],
        &["domcapabilities", "--arch", "x86_64", "--virttype", "qemu"],
    ];
    // Shut off, then running (the live XML adds targets, aliases and addresses).
    for args in commands {
        assert!(same(&uri, args), "{args:?} failed");
    }
    lv_ok(&uri, &["start", "lvx"]);
    for args in commands {
        assert!(same(&uri, args), "{args:?} failed on a running domain");
    }
    assert!(!same(&uri, &["domcapabilities", "--virttype", "xen"]));
    // The host's devices, as the session daemon lists them (if it can).
    let listed = virsh(&uri, &["nodedev-list"]);
    nodedevs_match(
        &uri,
        String::from_utf8_lossy(&listed.stdout)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .take(20),
    );
    lv_ok(&uri, &["destroy", "lvx"]);
    lv_ok(&uri, &["undefine", "lvx"]);
}
