//! Descriptor passing (`CALL_WITH_FDS` / `REPLY_WITH_FDS`, `SCM_RIGHTS`) against a real
//! private libvirtd: a running qemu domain (TCG, no disk) with a VNC display that listens
//! nowhere, reached only through the descriptors the calls pass. Over TCP and TLS the same
//! calls fail locally before anything is sent.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use libvirt_remote::client::{Client, ConnectOptions};
use libvirt_remote::conn::CallError;
use libvirt_remote::proto::ErrorCode;
use libvirt_remote::proto::procs::common::XmlArgs;
use libvirt_remote::proto::procs::domain::{
    DomainArgs, DomainCreateWithFiles, DomainCreateXml, DomainCreateXmlArgs,
    DomainCreateXmlWithFiles, DomainDefineXml, DomainDestroy, DomainFdAssociate,
    DomainFdAssociateArgs, DomainFlagsArgs, DomainOpenGraphics, DomainOpenGraphicsArgs,
    DomainOpenGraphicsFd, DomainUndefine,
};
use libvirt_remote::proto::types::NonnullDomain;
use testbed::libvirtd::Libvirtd;
use testbed::pki::ServerCert;

/// A transient domain with nothing but a VNC display that listens on no address.
async fn vnc_domain(c: &Client, d: &Libvirtd, name: &str) -> NonnullDomain {
    let xml = format!(
        "<domain type='{}'><name>{name}</name><memory unit='MiB'>32</memory><vcpu>1</vcpu>\
         <os><type arch='x86_64' machine='pc'>hvm</type></os>\
         <devices><graphics type='vnc'><listen type='none'/></graphics></devices></domain>",
        d.domain_type()
    );
    c.call::<DomainCreateXml>(&DomainCreateXmlArgs {
        xml_desc: xml.as_str().into(),
        flags: Default::default(),
    })
    .await
    .unwrap_or_else(|e| panic!("start {name}: {e}"))
    .dom
}

/// The first 12 bytes a VNC server sends: its protocol version, `RFB 003.00x\n`.
fn banner(sock: &UnixStream) -> String {
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut b = [0u8; 12];
    (&*sock).read_exact(&mut b).expect("the VNC banner");
    String::from_utf8_lossy(&b).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graphics_descriptors_travel_both_ways_on_the_unix_socket() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.uri(), ConnectOptions::default())
        .await
        .unwrap();
    let dom = vnc_domain(&c, &d, "fds-vnc").await;
    let args = DomainOpenGraphicsArgs {
        dom: dom.clone(),
        idx: 0,
        flags: Default::default(),
    };

    // REPLY_WITH_FDS: the daemon hands us a socket connected to the display.
    let ((), fds) = c
        .call_with_fds::<DomainOpenGraphicsFd>(&args, Vec::new())
        .await
        .unwrap();
    assert_eq!(fds.len(), 1, "one descriptor with the reply");
    let got = banner(&UnixStream::from(fds.into_iter().next().unwrap()));
    assert!(got.starts_with("RFB 003.00"), "banner {got:?}");

    // CALL_WITH_FDS: we hand the daemon one end of a socket pair and read the other.
    let (ours, theirs) = UnixStream::pair().unwrap();
    let ((), back) = c
        .call_with_fds::<DomainOpenGraphics>(&args, vec![OwnedFd::from(theirs)])
        .await
        .unwrap();
    assert!(back.is_empty(), "{} descriptors came back", back.len());
    let got = banner(&ours);
    assert!(got.starts_with("RFB 003.00"), "banner {got:?}");

    // Several in a row on one connection, interleaved with plain calls: the descriptor
    // bytes stay in step with the packets.
    for _ in 0..3 {
        let ((), fds) = c
            .call_with_fds::<DomainOpenGraphicsFd>(&args, Vec::new())
            .await
            .unwrap();
        assert_eq!(fds.len(), 1);
        let ver = c
            .call::<libvirt_remote::proto::procs::connect::ConnectGetLibVersion>(&())
            .await
            .unwrap();
        assert!(ver.lib_ver >= 9_000_000);
    }

    // A descriptor-passing call the daemon refuses: a typed error, the connection lives.
    let bad = DomainOpenGraphicsArgs {
        dom: dom.clone(),
        idx: 7,
        flags: Default::default(),
    };
    let err = c
        .call_with_fds::<DomainOpenGraphicsFd>(&bad, Vec::new())
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Remote(_)), "{err:?}");

    // The plain call path still refuses these procedures (they need the descriptor path).
    let err = c.call::<DomainOpenGraphicsFd>(&args).await.unwrap_err();
    assert!(matches!(err, CallError::NeedsFdPassing { .. }), "{err:?}");

    c.call::<DomainDestroy>(&DomainArgs { dom }).await.unwrap();
    assert!(!c.is_closed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn descriptor_calls_fail_locally_over_tcp_and_tls() {
    let Some(d) = Libvirtd::builder()
        .tls(ServerCert::default())
        .tcp()
        .start_or_skip()
    else {
        return;
    };
    let tcp = format!(
        "qemu+tcp://127.0.0.1:{}/session",
        d.tcp_port().expect("a TCP daemon")
    );
    for uri in [tcp, d.tls_uri()] {
        let c = Client::connect(&uri, ConnectOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{uri}: {e}"));
        let dom = NonnullDomain {
            name: "nowhere".into(),
            uuid: libvirt_remote::proto::types::Uuid([0; 16]),
            id: -1,
        };
        let args = DomainOpenGraphicsArgs {
            dom,
            idx: 0,
            flags: Default::default(),
        };
        let before = c.stats().packets_out;
        let err = c
            .call_with_fds::<DomainOpenGraphicsFd>(&args, Vec::new())
            .await
            .unwrap_err();
        assert_eq!(
            err,
            CallError::FdPassingUnavailable {
                procedure: "DomainOpenGraphicsFd"
            },
            "{uri}"
        );
        let (ours, theirs) = UnixStream::pair().unwrap();
        let err = c
            .call_with_fds::<DomainOpenGraphics>(&args, vec![OwnedFd::from(theirs)])
            .await
            .unwrap_err();
        assert!(
            matches!(err, CallError::FdPassingUnavailable { .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("unix socket"), "{err}");
        assert_eq!(
            c.stats().packets_out,
            before,
            "{uri}: a refused call sent a packet"
        );
        // The refused descriptor was closed, not kept: its peer reads EOF.
        ours.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        assert_eq!((&ours).read(&mut [0u8; 1]).unwrap(), 0, "{uri}");
        assert!(!c.is_closed());
    }
}

/// `DomainFdAssociate` (443, libvirt 9.0) on a defined domain: the session qemu driver
/// takes the descriptor (one end of a unix socket pair) under a name; the call answers
/// with no descriptors, and the daemon keeps its own duplicate (ours can be closed).
/// Associating with no descriptor is the daemon's typed refusal, on the same path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fd_associate_hands_a_descriptor_to_a_defined_domain() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.uri(), ConnectOptions::default())
        .await
        .unwrap();
    let dom = c
        .call::<DomainDefineXml>(&XmlArgs {
            xml: d.minimal_domain_xml("fds-assoc").as_str().into(),
        })
        .await
        .unwrap()
        .dom;
    let (ours, theirs) = UnixStream::pair().unwrap();
    let args = DomainFdAssociateArgs {
        dom: dom.clone(),
        name: "fdgroup0".into(),
        flags: 0,
    };
    let ((), back) = c
        .call_with_fds::<DomainFdAssociate>(&args, vec![OwnedFd::from(theirs)])
        .await
        .unwrap_or_else(|e| panic!("FdAssociate: {e:?}\n{}", d.log_tail()));
    assert!(back.is_empty(), "{} descriptors came back", back.len());
    // The daemon holds its own copy: the peer end does not read EOF after ours is gone.
    ours.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let err = (&ours).read(&mut [0u8; 1]).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock, "{err:?}");

    // A second group under another name, two descriptors at once.
    let (one, two) = UnixStream::pair().unwrap();
    let ((), back) = c
        .call_with_fds::<DomainFdAssociate>(
            &DomainFdAssociateArgs {
                dom: dom.clone(),
                name: "fdgroup1".into(),
                flags: 0,
            },
            vec![OwnedFd::from(one), OwnedFd::from(two)],
        )
        .await
        .unwrap();
    assert!(back.is_empty());

    // No descriptor at all: refused by the daemon (typed), not by us, connection alive.
    let err = c
        .call_with_fds::<DomainFdAssociate>(&args, Vec::new())
        .await
        .unwrap_err();
    let CallError::Remote(e) = &err else {
        panic!("{err:?}")
    };
    // libvirtd 9.0: INVALID_ARG "nfds in virDomainFDAssociate must not be zero".
    assert_eq!(e.code, ErrorCode::INVALID_ARG, "{e:?}");
    assert!(e.message().contains("nfds"), "{e:?}");
    assert!(!c.is_closed());

    // Undefining the domain releases the daemon's copies: the peer reads EOF.
    c.call::<DomainUndefine>(&DomainArgs { dom }).await.unwrap();
    ours.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    assert_eq!(
        (&ours).read(&mut [0u8; 1]).unwrap(),
        0,
        "EOF once undefined"
    );
}

/// `DomainCreateXmlWithFiles` (309) and `DomainCreateWithFiles` (310): the qemu driver does
/// not implement them (only LXC does), so the proof is the daemon's typed `NO_SUPPORT`
/// arriving through the descriptor path with a descriptor attached — no hang, no decode
/// failure, the connection usable afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_with_files_is_refused_typed_by_the_qemu_driver() {
    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.uri(), ConnectOptions::default())
        .await
        .unwrap();
    let unsupported = |err: &CallError, what: &str| {
        let CallError::Remote(e) = err else {
            panic!("{what}: {err:?}")
        };
        // libvirtd 9.0: "this function is not supported by the connection driver: virX".
        assert_eq!(e.code, ErrorCode::NO_SUPPORT, "{what}: {e:?}");
        assert!(e.is_unsupported(), "{what}: {e:?}");
    };

    let (_ours, theirs) = UnixStream::pair().unwrap();
    let err = c
        .call_with_fds::<DomainCreateXmlWithFiles>(
            &DomainCreateXmlArgs {
                xml_desc: d.minimal_domain_xml("fds-files-xml").as_str().into(),
                flags: Default::default(),
            },
            vec![OwnedFd::from(theirs)],
        )
        .await
        .unwrap_err();
    unsupported(&err, "DomainCreateXmlWithFiles");

    let dom = c
        .call::<DomainDefineXml>(&XmlArgs {
            xml: d.minimal_domain_xml("fds-files").as_str().into(),
        })
        .await
        .unwrap()
        .dom;
    let (_ours, theirs) = UnixStream::pair().unwrap();
    let err = c
        .call_with_fds::<DomainCreateWithFiles>(
            &DomainFlagsArgs {
                dom: dom.clone(),
                flags: Default::default(),
            },
            vec![OwnedFd::from(theirs)],
        )
        .await
        .unwrap_err();
    unsupported(&err, "DomainCreateWithFiles");

    // Nothing was started, and the connection still answers.
    let ver = c
        .call::<libvirt_remote::proto::procs::connect::ConnectGetLibVersion>(&())
        .await
        .unwrap();
    assert!(ver.lib_ver >= 9_000_000);
    c.call::<DomainUndefine>(&DomainArgs { dom }).await.unwrap();
    assert!(!c.is_closed());
}

/// `QemuDomainMonitorCommandWithFiles` (QEMU program, 7) on a running TCG domain: one end
/// of a socket pair travels with `add-fd` into fd set 7; `query-fdsets` lists it with our
/// opaque tag, and qemu's descriptor of that number is our socket (same inode, read from
/// `/proc`); `remove-fd` takes it out again. The replies pass no descriptors (libvirt's
/// qemu driver returns none). Without a descriptor, `add-fd` is qemu's error, handed back
/// verbatim as the command's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qemu_monitor_command_with_files_hands_qemu_a_descriptor() {
    use libvirt_remote::proto::procs::qemu::{
        QemuDomainMonitorCommandArgs, QemuDomainMonitorCommandWithFiles,
    };

    let Some(d) = Libvirtd::start_or_skip() else {
        return;
    };
    let c = Client::connect(&d.uri(), ConnectOptions::default())
        .await
        .unwrap();
    let dom =
        libvirt_remote_testkit::live::create_domain(&c, &d.minimal_domain_xml("qmp-fds")).await;
    let qmp = |cmd: &str| QemuDomainMonitorCommandArgs {
        dom: dom.clone(),
        cmd: cmd.into(),
        flags: Default::default(),
    };
    let (_ours, theirs) = UnixStream::pair().unwrap();
    let link = |path: String| std::fs::read_link(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let inode = {
        use std::os::fd::AsRawFd;
        link(format!("/proc/self/fd/{}", theirs.as_raw_fd()))
    };
    let add = r#"{"execute":"add-fd","arguments":{"fdset-id":7,"opaque":"lv-with-files"}}"#;
    let (ret, fds) = c
        .call_with_fds::<QemuDomainMonitorCommandWithFiles>(&qmp(add), vec![OwnedFd::from(theirs)])
        .await
        .unwrap_or_else(|e| panic!("add-fd with a descriptor: {e:?}\n{}", d.log_tail()));
    let added = ret.result.to_str().unwrap().to_string();
    eprintln!("add-fd: {added}");
    assert!(added.contains(r#""fdset-id":7"#), "{added}");
    assert!(fds.is_empty(), "the reply passes no descriptors: {fds:?}");
    // qemu's number for it, and qemu's pid from libvirt's pid file: the same socket.
    let number: String = added[added.find(r#""fd":"#).unwrap() + 5..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let pid = std::fs::read_to_string(d.dir().join("run/libvirt/qemu/run/qmp-fds.pid")).unwrap();
    assert_eq!(
        link(format!("/proc/{}/fd/{number}", pid.trim())),
        inode,
        "qemu's fd {number} is the socket we sent"
    );

    let (ret, fds) = c
        .call_with_fds::<QemuDomainMonitorCommandWithFiles>(
            &qmp(r#"{"execute":"query-fdsets"}"#),
            Vec::new(),
        )
        .await
        .unwrap();
    let sets = ret.result.to_str().unwrap().to_string();
    eprintln!("query-fdsets: {sets}");
    assert!(
        sets.contains(r#""fdset-id":7"#) && sets.contains("lv-with-files"),
        "{sets}"
    );
    assert!(fds.is_empty());

    // Without a descriptor, qemu refuses add-fd (in the answer; the call succeeds).
    let (ret, _) = c
        .call_with_fds::<QemuDomainMonitorCommandWithFiles>(&qmp(add), Vec::new())
        .await
        .unwrap();
    let refused = ret.result.to_str().unwrap();
    eprintln!("add-fd without: {refused}");
    assert!(
        refused.contains("No file descriptor supplied via SCM_RIGHTS"),
        "{refused}"
    );
    let (ret, _) = c
        .call_with_fds::<QemuDomainMonitorCommandWithFiles>(
            &qmp(r#"{"execute":"remove-fd","arguments":{"fdset-id":7}}"#),
            Vec::new(),
        )
        .await
        .unwrap();
    assert!(ret.result.to_str().unwrap().contains("return"), "{ret:?}");
    c.call::<DomainDestroy>(&DomainArgs { dom }).await.unwrap();
    assert!(!c.is_closed());
}
