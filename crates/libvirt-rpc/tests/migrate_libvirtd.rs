//! Client-driven migration (`Client::migrate`: begin3/prepare3/perform3/finish3/confirm3
//! with typed parameters) between two private session libvirtds on this host: the
//! destination runs under a host name and host UUID of its own (libvirt refuses to migrate
//! to its own host), the data goes over 127.0.0.1 only (`migrate_uri` and
//! `listen_address`). The guest is a diskless TCG domain (it boots into the BIOS and keeps
//! running), so no storage has to be shared.

use libvirt_rpc::CallError;
use libvirt_rpc::client::{Client, ConnectOptions, MigrateOptions, MigrateStep};
use libvirt_rpc::proto::ErrorCode;
use libvirt_rpc::proto::procs::common::NameArgs;
use libvirt_rpc::proto::procs::domain::{
    DomainArgs, DomainCreateXml, DomainCreateXmlArgs, DomainDestroy, DomainFlagsArgs,
    DomainGetState, DomainLookupByName, DomainState,
};
use libvirt_rpc::proto::procs::migration::DomainMigrateFlags;
use libvirt_rpc::proto::types::Domain;
use testbed::libvirtd::{Libvirtd, LibvirtdError};

async fn start(c: &Client, d: &Libvirtd, name: &str) -> Domain {
    let xml = d.minimal_domain_xml(name);
    c.call::<DomainCreateXml>(&DomainCreateXmlArgs {
        xml_desc: xml.as_str().into(),
        flags: Default::default(),
    })
    .await
    .unwrap_or_else(|e| panic!("start {name}: {e}"))
    .dom
}

async fn state(c: &Client, dom: &Domain) -> DomainState {
    c.call::<DomainGetState>(&DomainFlagsArgs {
        dom: dom.clone(),
        flags: 0,
    })
    .await
    .unwrap()
    .state
}

async fn lookup(c: &Client, name: &str) -> Result<Domain, CallError> {
    c.call::<DomainLookupByName>(&NameArgs { name: name.into() })
        .await
        .map(|r| r.dom)
}

fn opts() -> MigrateOptions {
    let port = testbed::guest::free_loopback_port().unwrap();
    MigrateOptions::new(DomainMigrateFlags::LIVE)
        .uri(format!("tcp://127.0.0.1:{port}"))
        .listen_address("127.0.0.1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_domain_migrates_between_two_private_daemons() {
    let Some(src) = Libvirtd::start_or_skip() else {
        return;
    };
    let dst = match Libvirtd::builder().hostname("lv-migrate-dst").start() {
        Ok(d) => d,
        Err(e @ LibvirtdError::NotInstalled { .. }) if !testbed::required() => {
            eprintln!("skipping: {e}");
            return;
        }
        Err(e) => panic!("destination libvirtd: {e}"),
    };
    let s = Client::connect(&src.uri(), ConnectOptions::default())
        .await
        .unwrap();
    let t = Client::connect(&dst.uri(), ConnectOptions::default())
        .await
        .unwrap();
    let dom = start(&s, &src, "mig-a").await;

    let moved = s
        .migrate(&t, &dom, &opts())
        .await
        .unwrap_or_else(|e| panic!("{e}: {:?}\nsource:\n{}", e.error, src.log_tail()));
    assert_eq!(
        (moved.name.to_str().unwrap(), moved.uuid),
        ("mig-a", dom.uuid)
    );
    assert_eq!(state(&t, &moved).await, DomainState::RUNNING);
    // A transient domain leaves the source.
    let err = lookup(&s, "mig-a").await.unwrap_err();
    assert!(err.is_not_found(), "{err:?}");

    // And back again, under another name on the way.
    let back = t
        .migrate(&s, &moved, &opts().dname("mig-a2"))
        .await
        .unwrap_or_else(|e| panic!("{e}: {:?}", e.error));
    assert_eq!(back.name.to_str().unwrap(), "mig-a2");
    assert_eq!(state(&s, &back).await, DomainState::RUNNING);
    assert!(lookup(&t, "mig-a").await.unwrap_err().is_not_found());

    // A prepare the destination refuses (a running domain of that name, another UUID):
    // the typed error names the step, the source domain keeps running, and its migration
    // job was ended (the next migration of it, renamed, goes through).
    let blocker = start(&t, &dst, "mig-a2").await;
    let err = s.migrate(&t, &back, &opts()).await.unwrap_err();
    assert_eq!(err.step, MigrateStep::Prepare, "{err:?}");
    let CallError::Remote(e) = &err.error else {
        panic!("{err:?}")
    };
    eprintln!("prepare refused: {e:?}");
    assert_eq!(e.code, ErrorCode::OPERATION_FAILED, "{e:?}");
    assert!(err.to_string().contains("prepare"), "{err}");
    assert_eq!(state(&s, &back).await, DomainState::RUNNING);
    let moved = s
        .migrate(&t, &back, &opts().dname("mig-a3"))
        .await
        .unwrap_or_else(|e| panic!("{e}: {:?}", e.error));
    assert_eq!(state(&t, &moved).await, DomainState::RUNNING);

    // Peer to peer: the source daemon itself connects to the destination daemon's socket
    // and runs the steps (one call from us), then tunnelled through that connection.
    t.migrate_to_uri(&src.uri(), &moved, &opts().dname("mig-p2p"))
        .await
        .unwrap_or_else(|e| panic!("{e}: {:?}\ndestination:\n{}", e.error, dst.log_tail()));
    let p2p = lookup(&s, "mig-p2p").await.unwrap();
    assert_eq!(state(&s, &p2p).await, DomainState::RUNNING);
    assert!(lookup(&t, "mig-a3").await.unwrap_err().is_not_found());
    let tunnelled = MigrateOptions::new(DomainMigrateFlags::LIVE | DomainMigrateFlags::TUNNELLED)
        .dname("mig-tunnel");
    s.migrate_to_uri(&dst.uri(), &p2p, &tunnelled)
        .await
        .unwrap_or_else(|e| panic!("{e}: {:?}\nsource:\n{}", e.error, src.log_tail()));
    let again = lookup(&t, "mig-tunnel").await.unwrap();
    assert_eq!(state(&t, &again).await, DomainState::RUNNING);
    assert!(lookup(&s, "mig-p2p").await.unwrap_err().is_not_found());

    for d in [again, blocker] {
        t.call::<DomainDestroy>(&DomainArgs { dom: d })
            .await
            .unwrap();
    }
    assert!(!s.is_closed() && !t.is_closed());
}
