//! The object API (methods generated from the procedure tables) against a private libvirtd
//! 9.0: its `test:///default` driver and its session (QEMU) driver. Each answer is checked for
//! sense; flags are passed as `Default::default()` (0 whatever their type).
#![cfg(feature = "client")]

use libvirt_remote::prelude::*;
use libvirt_remote::proto::typed_params::STRING_OKAY;
use libvirt_remote::proto::types::TypedParamValue;
use testbed::libvirtd::Libvirtd;

fn test_domain_xml(name: &str) -> String {
    format!(
        "<domain type='test'><name>{name}</name><memory unit='KiB'>65536</memory>\
         <vcpu>1</vcpu><os><type arch='i686'>hvm</type></os></domain>"
    )
}

#[tokio::test]
async fn generated_methods_answer_on_the_test_driver() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let conn = Connect::open(&d.test_uri()).await.expect("connect");

    // Connection-level facts.
    assert!(!conn.hostname().await.unwrap().is_empty());
    assert!(conn.lib_version().await.unwrap() >= LibvirtVersion::new(9, 0, 0));
    assert_eq!(conn.driver_type().await.unwrap(), "TEST");
    assert!(conn.uri().await.unwrap().starts_with("test"));
    assert!(
        conn.capabilities()
            .await
            .unwrap()
            .contains("<capabilities>")
    );
    assert!(conn.is_secure().await.unwrap());
    let node = conn.node_info().await.unwrap();
    assert!(node.memory > 0 && node.cpus > 0, "{node:?}");
    assert!(conn.num_of_domains().await.unwrap() >= 1);

    // The driver's default domain, through a list and a lookup.
    let doms = conn.list_all_domains(Default::default()).await.unwrap();
    assert!(doms.iter().any(|d| d.name() == "test"), "{doms:?}");
    let dom = conn.lookup_domain_by_name("test").await.unwrap();
    assert_eq!(dom.name(), "test");
    assert!(dom.id().is_some(), "running: it has an id");
    assert!(dom.is_active().await.unwrap());
    assert!(dom.is_persistent().await.unwrap());
    let info = dom.info().await.unwrap();
    assert!(info.max_mem > 0 && info.nr_virt_cpu > 0, "{info:?}");
    let xml = dom.xml_desc(Default::default()).await.unwrap();
    assert!(xml.contains("<name>test</name>"), "{xml}");
    assert_eq!(dom.os_type().await.unwrap(), "linux");
    assert!(dom.max_memory().await.unwrap() > 0);
    let by_uuid = conn.lookup_domain_by_uuid(dom.uuid()).await.unwrap();
    assert_eq!(by_uuid.name(), "test");

    // A typed-parameter getter goes out with VIR_TYPED_PARAM_STRING_OKAY: the string
    // parameters the daemon drops without it are there.
    let blkio = dom.blkio_parameters(Default::default()).await.unwrap();
    assert!(
        blkio
            .iter()
            .any(|p| matches!(p.value, TypedParamValue::String(_))),
        "no string parameter (STRING_OKAY = {STRING_OKAY} not sent?): {blkio:?}"
    );
    assert!(blkio.len() >= 6, "{blkio:?}");

    // Lifecycle of a domain this test defines.
    let h1 = conn
        .define_domain_xml(&test_domain_xml("handles-h1"))
        .await
        .unwrap();
    assert_eq!(h1.name(), "handles-h1");
    assert!(!h1.is_active().await.unwrap());
    h1.create().await.unwrap();
    assert!(h1.is_active().await.unwrap());
    h1.suspend().await.unwrap();
    assert_eq!(
        h1.state(Default::default()).await.unwrap().state,
        DomainState::PAUSED,
        "paused"
    );
    h1.resume().await.unwrap();
    assert_eq!(
        h1.state(Default::default()).await.unwrap().state,
        DomainState::RUNNING,
        "running"
    );

    // Snapshots: handles returned and listed.
    let snap = h1
        .snapshot_create_xml(
            "<domainsnapshot><name>s1</name></domainsnapshot>",
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(snap.name(), "s1");
    assert_eq!(snap.domain().name(), "handles-h1");
    assert!(
        snap.xml_desc(Default::default())
            .await
            .unwrap()
            .contains("<name>s1</name>")
    );
    let snaps = h1.list_all_snapshots(Default::default()).await.unwrap();
    assert_eq!(snaps.len(), 1);
    assert!(snaps[0].is_current(Default::default()).await.unwrap());
    snaps[0].delete(Default::default()).await.unwrap();

    h1.destroy().await.unwrap();
    h1.undefine().await.unwrap();
    let gone = conn.lookup_domain_by_name("handles-h1").await.unwrap_err();
    assert!(gone.is_not_found(), "{gone}");

    // Storage: pool, volumes, a volume created and deleted.
    let pools = conn
        .list_all_storage_pools(Default::default())
        .await
        .unwrap();
    let pool = pools
        .iter()
        .find(|p| p.name() == "default-pool")
        .expect("the test driver's pool")
        .clone();
    assert!(pool.is_active().await.unwrap());
    assert!(pool.info().await.unwrap().capacity > 0);
    let vol = pool
        .create_volume_xml(
            "<volume><name>handles.img</name><capacity unit='KiB'>64</capacity></volume>",
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(vol.name(), "handles.img");
    assert_eq!(vol.pool_name(), "default-pool");
    assert_eq!(vol.info().await.unwrap().capacity, 64 * 1024);
    assert!(vol.path().await.unwrap().ends_with("handles.img"));
    assert_eq!(vol.pool().await.unwrap().name(), "default-pool");
    let vols = pool.list_all_volumes(Default::default()).await.unwrap();
    assert!(vols.iter().any(|v| v.name() == "handles.img"), "{vols:?}");
    let again = pool.lookup_volume_by_name("handles.img").await.unwrap();
    assert_eq!(again.key(), vol.key());
    vol.delete(Default::default()).await.unwrap();

    // Networks, interfaces, node devices.
    let net = conn.lookup_network_by_name("default").await.unwrap();
    assert!(net.is_active().await.unwrap());
    assert!(!net.bridge_name().await.unwrap().is_empty());
    assert!(
        net.xml_desc(Default::default())
            .await
            .unwrap()
            .contains("<name>default</name>")
    );
    let ifaces = conn.list_all_interfaces(Default::default()).await.unwrap();
    assert!(!ifaces.is_empty());
    let iface = conn
        .lookup_interface_by_name(&ifaces[0].name())
        .await
        .unwrap();
    assert_eq!(iface.mac(), ifaces[0].mac());
    let devs = conn
        .list_all_node_devices(Default::default())
        .await
        .unwrap();
    let dev = devs.first().expect("the test driver has node devices");
    assert!(
        dev.xml_desc(Default::default())
            .await
            .unwrap()
            .contains("<device>")
    );

    // A refusal is a typed error with libvirt's code.
    let err = conn
        .lookup_domain_by_name("no-such-domain")
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    assert!(err.remote().is_some());
}

#[tokio::test]
async fn generated_methods_answer_on_the_session_driver() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let conn = Connect::open(&d.uri()).await.expect("connect");
    assert_eq!(conn.driver_type().await.unwrap(), "QEMU");
    assert!(conn.uri().await.unwrap().starts_with("qemu:///session"));
    assert!(conn.lib_version().await.unwrap() >= LibvirtVersion::new(9, 0, 0));
    let xml = "<domain type='qemu'><name>handles-q1</name><memory unit='MiB'>64</memory>\
               <os><type arch='x86_64'>hvm</type></os></domain>";
    let dom = conn.define_domain_xml(xml).await.unwrap();
    assert!(!dom.is_active().await.unwrap());
    assert!(dom.id().is_none());
    let listed = conn.list_all_domains(Default::default()).await.unwrap();
    assert!(listed.iter().any(|d| d.name() == "handles-q1"));
    assert!(
        dom.xml_desc(Default::default())
            .await
            .unwrap()
            .contains("<name>handles-q1</name>")
    );
    assert!(!dom.autostart().await.unwrap());
    assert!(
        conn.domain_capabilities(None, None, None, Some("qemu"), Default::default())
            .await
            .unwrap()
            .contains("<domainCapabilities>")
    );
    dom.undefine().await.unwrap();
    let gone = dom.xml_desc(Default::default()).await.unwrap_err();
    assert!(gone.is_not_found(), "{gone}");

    // Node memory (KSM) parameters: the getter takes `TypedParameterFlags` and the method
    // adds STRING_OKAY; the setter's flags are reserved: with 0 the daemon goes on to write
    // the value (an unprivileged daemon then fails on sysfs, not on the flags), with
    // STRING_OKAY it refuses the flags.
    let ksm = conn
        .node_memory_parameters(Default::default())
        .await
        .unwrap();
    let pages = ksm
        .iter()
        .find(|p| p.field == "shm_pages_to_scan")
        .unwrap_or_else(|| panic!("{ksm:?}"))
        .clone();
    let unsupported = |r: &Result<(), Error>| {
        r.as_ref()
            .is_err_and(|e| e.to_string().contains("unsupported flags (0x4)"))
    };
    let zero = conn
        .node_set_memory_parameters(vec![pages.clone()], 0)
        .await;
    assert!(!unsupported(&zero), "{zero:?}");
    let refused = conn
        .node_set_memory_parameters(vec![pages], STRING_OKAY)
        .await;
    assert!(unsupported(&refused), "{refused:?}");
}

/// A handle from one connection used on another: allowed, and documented so (the daemon
/// resolves the identity on the connection that carries the call). On a second connection to
/// the same driver it names the same object; on a connection to another driver it names none.
#[tokio::test]
async fn a_handle_rebound_to_another_connection_names_the_object_there() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let a = Connect::open(&d.test_uri()).await.unwrap();
    let b = Connect::open(&d.test_uri()).await.unwrap();
    let session = Connect::open(&d.uri()).await.unwrap();
    assert!(!a.same_connection(&b));
    assert!(a.same_connection(&a.clone()));

    let dom_a = a.lookup_domain_by_name("test").await.unwrap();
    assert!(dom_a.connect().same_connection(&a));
    let dom_b = b.bind(dom_a.wire().clone());
    assert!(dom_b.connect().same_connection(&b));
    assert_eq!(
        dom_b.xml_desc(Default::default()).await.unwrap(),
        dom_a.xml_desc(Default::default()).await.unwrap()
    );
    // Closing `a` stops `dom_a`, not the rebound handle.
    a.close();
    let dead = dom_a.info().await.unwrap_err();
    assert!(dead.is_connection_dead(), "{dead}");
    assert!(dom_b.is_active().await.unwrap());

    let elsewhere = session.bind(dom_b.into_wire());
    let err = elsewhere.info().await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
}

/// The stream methods on the handles: a volume written with `vol.upload`, cloned (the source
/// passed as its handle) and read back with `vol.download` (session driver, the daemon's directory pool), the test driver's screenshot
/// with its MIME type, and a console opened on a running TCG guest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_methods_on_the_handles() {
    use futures::StreamExt;
    use libvirt_remote::client::{DownloadOptions, UploadOptions};
    use libvirt_remote::conn::StreamItem;
    use tokio::io::AsyncWriteExt;

    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let conn = Connect::open(&d.uri()).await.expect("connect");
    let pool = conn
        .lookup_storage_pool_by_name(d.pool_name())
        .await
        .unwrap();
    let vol = pool
        .create_volume_xml(
            "<volume><name>handles-up.raw</name><capacity unit='bytes'>1048576</capacity>\
             <target><format type='raw'/></target></volume>",
            Default::default(),
        )
        .await
        .unwrap();
    let data: Vec<u8> = (0..1_048_576u32).map(|i| (i % 251) as u8).collect();
    let mut seen = Vec::new();
    let up = vol.upload(UploadOptions::new()).await.unwrap();
    let progress = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = progress.clone();
    let mut w = up
        .with_total(data.len() as u64)
        .with_progress(move |p| log.lock().unwrap().push((p.done, p.total)))
        .into_writer();
    w.write_all(&data).await.unwrap();
    w.shutdown().await.unwrap();
    let last = *progress.lock().unwrap().last().expect("progress reported");
    assert_eq!(last, (data.len() as u64, Some(data.len() as u64)));

    // An object argument is its handle: the clone's source is `&vol`.
    let copy = pool
        .create_volume_xml_from(
            "<volume><name>handles-copy.raw</name><capacity unit='bytes'>1048576</capacity>\
             <target><format type='raw'/></target></volume>",
            &vol,
            Default::default(),
        )
        .await
        .unwrap();
    let mut dl = copy.download(DownloadOptions::new()).await.unwrap();
    while let Some(item) = dl.next().await {
        match item.unwrap() {
            StreamItem::Data(b) => seen.extend_from_slice(&b),
            StreamItem::Hole(n) => panic!("a hole of {n} on a non-sparse download"),
        }
    }
    assert!(
        seen == data,
        "{} bytes back, not the bytes sent",
        seen.len()
    );
    vol.delete(Default::default()).await.unwrap();
    copy.delete(Default::default()).await.unwrap();

    // Screenshot: the test driver sends a PNG.
    let test = Connect::open(&d.test_uri()).await.unwrap();
    let dom = test.lookup_domain_by_name("test").await.unwrap();
    let (mime, image) = dom.screenshot(0, 0).await.unwrap();
    assert_eq!(mime.as_deref(), Some("image/png"));
    let mut png = Vec::new();
    image.write_to(&mut png).await.unwrap();
    assert!(png.starts_with(b"\x89PNG"), "{} bytes", png.len());

    // Console and channel: a TCG guest with a serial console and no channel.
    let xml = "<domain type='qemu'><name>handles-console</name><memory unit='MiB'>32</memory>\
               <os><type arch='x86_64'>hvm</type></os><devices><serial type='pty'/>\
               <console type='pty'/><graphics type='vnc' port='-1' listen='127.0.0.1'/>\
               </devices></domain>";
    let guest = conn.define_domain_xml(xml).await.unwrap();
    let not_running = guest.open_console(None, 0).await.unwrap_err();
    assert!(not_running.remote().is_some(), "{not_running}");
    guest.create().await.unwrap();
    let mut console = guest.open_console(None, 0).await.unwrap();
    console.write_all(b"\r\n").await.unwrap();
    console.finish().await.unwrap();
    let no_channel = guest
        .open_channel(Some("org.qemu.guest_agent.0"), 0)
        .await
        .unwrap_err();
    assert!(no_channel.remote().is_some(), "{no_channel}");
    guest.destroy().await.unwrap();
    guest.undefine().await.unwrap();
}

/// `virsh list --name` with `--persistent`, `--transient`, `--inactive` (and `--all`) against
/// the same test driver: the typed flags select the same domains. A defined domain that is
/// running, one that is not, and a transient one cover every selection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_list_flags_select_what_virsh_list_selects() {
    use libvirt_remote::proto::procs::connect::ConnectListAllDomainsFlags as F;

    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let uri = d.test_uri();
    // The test driver's state lives while a connection holds it: virsh sees ours.
    let conn = Connect::open(&uri).await.unwrap();
    conn.define_domain_xml(&test_domain_xml("flags-defined"))
        .await
        .unwrap();
    conn.create_domain_xml(&test_domain_xml("flags-transient"), Default::default())
        .await
        .unwrap();
    let virsh = |opts: &[&str]| {
        let out = std::process::Command::new("virsh")
            .args(["-c", &uri, "list", "--name"])
            .args(opts)
            .output()
            .expect("run virsh");
        assert!(out.status.success(), "virsh list {opts:?}: {out:?}");
        let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect();
        names.sort();
        names
    };
    // virsh adds ACTIVE unless --inactive or --all is given.
    for (opts, flags) in [
        (&["--persistent"][..], F::ACTIVE | F::PERSISTENT),
        (&["--transient"], F::ACTIVE | F::TRANSIENT),
        (&["--inactive"], F::INACTIVE),
        (&["--all"], F::ACTIVE | F::INACTIVE),
        (
            &["--all", "--persistent"],
            F::ACTIVE | F::INACTIVE | F::PERSISTENT,
        ),
        (&["--inactive", "--persistent"], F::INACTIVE | F::PERSISTENT),
    ] {
        let mut ours: Vec<String> = conn
            .list_all_domains(flags)
            .await
            .unwrap()
            .iter()
            .map(|d| d.name().to_string())
            .collect();
        ours.sort();
        let theirs = virsh(opts);
        assert!(!theirs.is_empty(), "virsh list {opts:?} names nothing");
        assert_eq!(ours, theirs, "{opts:?} ({flags})");
    }
}

/// Issue 14's typed values against the test driver and virsh on the same daemon: the state
/// reason and the lifecycle detail as typed fields, the typed getter and node-device list
/// flags, a handle's printable name, and a list argument of handles.
#[tokio::test]
async fn typed_reasons_details_flags_names_and_handle_lists() {
    use libvirt_remote::proto::procs::domain::DomainGetParamsFlags;
    use libvirt_remote::proto::procs::nodedev::ConnectListAllNodeDevicesFlags as DevFlags;
    use std::time::Duration;

    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let uri = d.test_uri();
    let virsh = |args: &[&str]| {
        d.virsh_with(&uri, Duration::from_secs(60), args)
            .unwrap_or_else(|e| panic!("virsh {args:?}: {e}"))
    };
    let conn = Connect::open(&uri).await.unwrap();
    let dom = conn
        .define_domain_xml(&test_domain_xml("typed-t1"))
        .await
        .unwrap();

    // A handle's name prints, pads and compares as a string.
    assert_eq!(dom.name(), "typed-t1");
    assert_eq!(format!("{:<10}|", dom.name()), "typed-t1  |");
    assert_eq!(dom.name_bytes(), b"typed-t1");
    let owned: String = dom.name().into_owned();
    assert_eq!(owned, "typed-t1");
    // A name that is not UTF-8 still prints (U+FFFD), its bytes stay reachable.
    let odd = conn.bind(libvirt_remote::proto::types::NonnullDomain {
        name: LvString::from_bytes(vec![b'v', 0xff]),
        ..dom.wire().clone()
    });
    assert_eq!(odd.name(), "v\u{fffd}");
    assert_eq!(odd.name_bytes(), &[b'v', 0xff]);

    // Defined, never started: shut off (unknown), as virsh says.
    let st = dom.state(Default::default()).await.unwrap();
    assert_eq!(st.reason, StateReason::Shutoff(ShutoffReason::UNKNOWN));
    assert_eq!(
        st.to_string(),
        virsh(&["domstate", "typed-t1", "--reason"]).trim()
    );

    // Started: a typed lifecycle event, then running (booted).
    let mut events = conn.subscribe::<event_id::Lifecycle>().await.unwrap();
    dom.create().await.unwrap();
    let ev = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let ev = events.next().await.expect("events end");
            if ev.dom.name == "typed-t1" {
                break ev;
            }
        }
    })
    .await
    .expect("a lifecycle event within 20 s");
    assert_eq!(ev.event, DomainEventType::STARTED);
    assert_eq!(ev.detail, LifecycleDetail::Started(StartedDetail::BOOTED));
    assert_eq!(ev.to_string(), "Started Booted");
    let st = dom.state(Default::default()).await.unwrap();
    assert_eq!(st.reason, StateReason::Running(RunningReason::BOOTED));
    assert_eq!(
        st.to_string(),
        virsh(&["domstate", "typed-t1", "--reason"]).trim()
    );

    // Destroyed: a typed detail and reason.
    dom.destroy().await.unwrap();
    let ev = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let ev = events.next().await.expect("events end");
            if ev.dom.name == "typed-t1" && ev.event == DomainEventType::STOPPED {
                break ev;
            }
        }
    })
    .await
    .expect("a stopped event within 20 s");
    assert_eq!(
        ev.detail,
        LifecycleDetail::Stopped(StoppedDetail::DESTROYED)
    );
    let st = dom.state(Default::default()).await.unwrap();
    assert!(
        matches!(st.reason, StateReason::Shutoff(ShutoffReason::DESTROYED)),
        "{st:?}"
    );
    assert_eq!(
        st.to_string(),
        virsh(&["domstate", "typed-t1", "--reason"]).trim()
    );

    // Typed getter flags (virsh's --live / --config) on the running default domain; the
    // method adds STRING_OKAY to what the caller passes.
    let test = conn.lookup_domain_by_name("test").await.unwrap();
    for (flags, opt) in [
        (DomainGetParamsFlags::LIVE, "--live"),
        (DomainGetParamsFlags::CONFIG, "--config"),
        (DomainGetParamsFlags::CURRENT, "--current"),
    ] {
        let ours = test.blkio_parameters(flags).await.unwrap();
        let weight = ours
            .iter()
            .find(|p| p.field == "weight")
            .unwrap_or_else(|| panic!("{flags}: no weight in {ours:?}"));
        let TypedParamValue::UInt(w) = weight.value else {
            panic!("{weight:?}")
        };
        let theirs = virsh(&["blkiotune", "test", opt]);
        assert!(
            theirs.lines().any(
                |l| l.split_whitespace().collect::<Vec<_>>() == ["weight", ":", &w.to_string()]
            ),
            "{flags}: weight {w}, virsh said {theirs}"
        );
        // Strings came back (STRING_OKAY was added).
        assert!(
            ours.iter()
                .any(|p| matches!(p.value, TypedParamValue::String(_))),
            "{flags}: {ours:?}"
        );
    }

    // Node-device list flags with virsh's names. The test driver filters by capability and
    // refuses the ACTIVE/INACTIVE filters (libvirt 9.0): virsh fails the same way, and the
    // refusal names the bits, so ours must be the ones virsh sends.
    let names = |devs: Vec<NodeDevice>| {
        let mut v: Vec<String> = devs.iter().map(|d| d.name().into_owned()).collect();
        v.sort();
        v
    };
    for (flags, cap) in [
        (DevFlags::CAP_SYSTEM, "system"),
        (DevFlags::CAP_SCSI_HOST, "scsi_host"),
        (DevFlags::CAP_PCI_DEV, "pci"),
    ] {
        let ours = names(conn.list_all_node_devices(flags).await.unwrap());
        // The older call filters by the capability's name, on the daemon's side.
        let mut by_name = conn.node_list_devices(Some(cap), 256, 0).await.unwrap();
        by_name.sort();
        assert_eq!(ours, by_name, "{flags} vs cap {cap}");
    }
    assert_eq!(
        names(
            conn.list_all_node_devices(DevFlags::CAP_SYSTEM)
                .await
                .unwrap()
        ),
        ["computer"]
    );
    for (flags, opts) in [
        (
            DevFlags::ACTIVE | DevFlags::CAP_SYSTEM,
            &["--cap", "system"][..],
        ),
        (DevFlags::ACTIVE | DevFlags::INACTIVE, &["--all"][..]),
        (DevFlags::INACTIVE, &["--inactive"][..]),
    ] {
        let ours = conn.list_all_node_devices(flags).await.unwrap_err();
        let theirs = d
            .virsh_with(
                &uri,
                Duration::from_secs(60),
                &[&["nodedev-list"][..], opts].concat(),
            )
            .unwrap_err()
            .to_string();
        let msg = ours
            .remote()
            .and_then(|r| r.message.as_ref())
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(
            msg.starts_with("unsupported flags (0x") && theirs.contains(&msg),
            "{flags}: ours {msg:?}, virsh {theirs:?}"
        );
    }

    // A list argument of handles.
    let stats = conn
        .all_domain_stats(&[&test, &dom], Default::default(), Default::default())
        .await
        .unwrap();
    let mut got: Vec<String> = stats.iter().map(|r| r.dom.name.to_string()).collect();
    got.sort();
    assert_eq!(got, ["test", "typed-t1"]);

    dom.undefine().await.unwrap();
}
