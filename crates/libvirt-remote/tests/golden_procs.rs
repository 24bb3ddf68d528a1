//! Golden vectors for the procedure table: real `virsh` ↔ libvirtd 9.0.0 traffic.
//!
//! The packets come from the decoded wire captures of the protocol reference
//! (`captures/*.decoded.txt`); each constant names its file and packet. They are copied here
//! because CI runs on a clean clone without the reference. For every captured call we encode
//! the same arguments and compare with the captured payload byte for byte; every captured
//! reply decodes and, where complete, re-encodes to the same bytes. The capture tool cut the
//! hex of packets longer than 188 bytes: those are checked up to the cut.

use bytes::Bytes;
use libvirt_remote::proto::WireError;
use libvirt_remote::proto::names::{RunningReason, ShutoffReason, StateReason};
use libvirt_remote::proto::procs::common::{NameArgs, UuidArgs, XmlArgs};
use libvirt_remote::proto::procs::connect::{
    self, AuthList, ConnectClose, ConnectGetLibVersion, ConnectGetType, ConnectGetVersion,
    ConnectListAllDomains, ConnectListAllDomainsArgs, ConnectOpen, ConnectOpenArgs,
    ConnectRegisterCloseCallback, ConnectSupportsFeature, ConnectSupportsFeatureArgs,
    ConnectUnregisterCloseCallback,
};
use libvirt_remote::proto::procs::domain::{
    self, DomainArgs, DomainCreate, DomainCreateWithFlags, DomainDefineXml, DomainDestroy,
    DomainDestroyFlags, DomainFlagsArgs, DomainGetMetadata, DomainGetMetadataArgs, DomainGetState,
    DomainHasManagedSaveImage, DomainInterfaceAddresses, DomainInterfaceAddressesArgs,
    DomainIsActive, DomainLookupByName, DomainLookupByUuid, DomainSetMetadata,
    DomainSetMetadataArgs, DomainUndefineFlags,
};
use libvirt_remote::proto::procs::snapshot::DomainSnapshotNum;
use libvirt_remote::proto::procs::storage::{
    self, StoragePoolArgs, StoragePoolFlagsArgs, StoragePoolIsActive, StoragePoolListAllVolumes,
    StoragePoolListAllVolumesArgs, StoragePoolLookupByName, StoragePoolLookupByVolume,
    StoragePoolRefresh, StorageVolArgs, StorageVolCreateXml, StorageVolCreateXmlArgs,
    StorageVolDelete, StorageVolFlagsArgs, StorageVolGetInfo, StorageVolGetPath,
    StorageVolLookupByKey, StorageVolLookupByKeyArgs, StorageVolLookupByName,
    StorageVolLookupByNameArgs, StorageVolLookupByPath, StorageVolLookupByPathArgs,
    StorageVolTransferArgs, StorageVolUpload,
};
use libvirt_remote::proto::procs::{self, TABLES};
use libvirt_remote::proto::types::{NonnullDomain, NonnullStoragePool, NonnullStorageVol, Uuid};
use libvirt_remote::proto::{
    ErrorCode, ErrorDomain, ErrorLevel, Procedure, REMOTE_PROGRAM, RemoteError, StreamDirection,
};
use libvirt_remote::wire::frame::{HEADER_LEN, Header, LEN_WORD, MessageStatus, MessageType};
use libvirt_remote::wire::xdr::{self, Decode, Decoder, Encode, LvString};

mod golden;
use golden::{call, frame, unhex};
use libvirt_remote::proto::names::DomainState;
use libvirt_remote::proto::procs::connect::ConnectFlags;
use libvirt_remote::proto::procs::domain::DomainUndefineFlagsValues;
use libvirt_remote::proto::procs::snapshot::DomainSnapshotListFlags;
use libvirt_remote::proto::procs::storage::{StorageVolCreateFlags, StorageVolStreamFlags};

// ---- helpers ----------------------------------------------------------------------------

/// The header and the payload bytes the capture kept of a packet whose hex was cut.
fn cut(hex: &str) -> (Header, Bytes) {
    let b = unhex(hex);
    let declared = u32::from_be_bytes(b[..4].try_into().unwrap()) as usize;
    assert!(declared > b.len(), "not a cut packet");
    let h: &[u8; HEADER_LEN] = b[LEN_WORD..LEN_WORD + HEADER_LEN].try_into().unwrap();
    (
        Header::decode(h).unwrap(),
        Bytes::copy_from_slice(&b[LEN_WORD + HEADER_LEN..]),
    )
}

/// A CALL without arguments (the capture shows no hex for an empty payload).
fn void_call<P: Procedure<Args = ()>>(captured_proc: i32) {
    assert_eq!(P::NUMBER, captured_proc, "{}", P::NAME);
    assert!(xdr::to_bytes(&()).unwrap().is_empty());
}

/// The captured successful REPLY to `P` decodes and re-encodes to the same bytes.
fn reply<P: Procedure>(hex: &str) -> P::Ret
where
    P::Ret: Encode,
{
    let f = frame(hex);
    assert_eq!(f.header.procedure, P::NUMBER, "{}", P::NAME);
    assert_eq!(f.header.kind, MessageType::Reply, "{}", P::NAME);
    assert_eq!(f.header.status, MessageStatus::Ok, "{}", P::NAME);
    let ret: P::Ret =
        xdr::from_bytes(f.payload.clone()).unwrap_or_else(|e| panic!("{}: {e}", P::NAME));
    assert_eq!(
        xdr::to_bytes(&ret).unwrap(),
        f.payload,
        "{} re-encodes differently",
        P::NAME
    );
    ret
}

/// A complete captured error payload of a reply (or stream packet) to procedure `number`.
fn error(hex: &str, number: i32) -> (WireError, RemoteError) {
    let f = frame(hex);
    assert_eq!(f.header.procedure, number);
    assert_eq!(f.header.status, MessageStatus::Error);
    let wire: WireError = xdr::from_bytes(f.payload.clone()).unwrap();
    assert_eq!(xdr::to_bytes(&wire).unwrap(), f.payload);
    (wire.clone(), RemoteError::from(wire))
}

/// The leading fields of a cut error payload, decoded with the library's codecs; the fields
/// the capture lost are filled with `None`/-1 so the predicates can run on the code.
fn error_prefix(hex: &str, number: i32) -> RemoteError {
    let (h, payload) = cut(hex);
    assert_eq!(
        (h.procedure, h.kind, h.status),
        (number, MessageType::Reply, MessageStatus::Error)
    );
    let mut d = Decoder::new(payload);
    let code = i32::decode(&mut d).unwrap();
    let domain = i32::decode(&mut d).unwrap();
    let message = Option::<LvString>::decode(&mut d).unwrap();
    let level = i32::decode(&mut d).unwrap();
    let dom = Option::<NonnullDomain>::decode(&mut d).unwrap();
    let str1 = Option::<LvString>::decode(&mut d).unwrap();
    RemoteError::from(WireError {
        code,
        domain,
        message,
        level,
        dom,
        str1,
        str2: None,
        str3: None,
        int1: -1,
        int2: -1,
        net: None,
    })
}

fn uuid(s: &str) -> Uuid {
    s.parse().unwrap()
}

/// The domain of `session.decoded.txt`.
fn probe_dom(id: i32) -> NonnullDomain {
    NonnullDomain {
        name: "rpc-rpcprobe".into(),
        uuid: uuid("9a923c01-3780-4669-a69a-eb8c3eff533f"),
        id,
    }
}

/// The storage pool of every capture.
fn pool() -> NonnullStoragePool {
    NonnullStoragePool {
        name: "probe".into(),
        uuid: uuid("60d30d54-7014-447f-868e-9524694aae63"),
    }
}

fn vol(name: &str) -> NonnullStorageVol {
    NonnullStorageVol {
        pool: "probe".into(),
        name: name.into(),
        key: format!("/srv/pool/{name}").into(),
    }
}

// ---- the table itself -------------------------------------------------------------------

#[test]
fn table_is_large_and_numbers_are_unique() {
    assert!(procs::count() >= 100, "only {} procedures", procs::count());
    let mut seen = std::collections::HashMap::new();
    for p in TABLES.iter().flat_map(|t| t.iter()) {
        assert_eq!(p.program, REMOTE_PROGRAM);
        if let Some(other) = seen.insert(p.number, p.name) {
            panic!("{} and {} share number {}", other, p.name, p.number);
        }
    }
    assert_eq!(seen.len(), procs::count());
    // Spot checks against libvirt's numbering (remote_protocol.x).
    for (n, name) in [
        (1, "ConnectOpen"),
        (66, "AuthList"),
        (212, "DomainGetState"),
        (273, "ConnectListAllDomains"),
        (316, "ConnectDomainEventCallbackRegisterAny"),
        (317, "ConnectDomainEventCallbackDeregisterAny"),
        (341, "NetworkGetDhcpLeases"),
        (353, "DomainInterfaceAddresses"),
        (360, "ConnectRegisterCloseCallback"),
        (361, "ConnectUnregisterCloseCallback"),
        (378, "StorageVolGetInfoFlags"),
    ] {
        assert_eq!(
            procs::lookup(REMOTE_PROGRAM, n).map(|p| p.name),
            Some(name),
            "{n}"
        );
    }
}

#[test]
fn stream_procedures_are_marked() {
    let dir = |name| procs::lookup_name(name).unwrap().stream;
    assert_eq!(dir("StorageVolUpload"), Some(StreamDirection::Upload));
    assert_eq!(dir("StorageVolDownload"), Some(StreamDirection::Download));
    assert_eq!(dir("DomainScreenshot"), Some(StreamDirection::Download));
    assert_eq!(dir("DomainOpenConsole"), Some(StreamDirection::Duplex));
    assert_eq!(dir("DomainOpenChannel"), Some(StreamDirection::Duplex));
    let streams = TABLES
        .iter()
        .flat_map(|t| t.iter())
        .filter(|p| p.stream.is_some())
        .count();
    assert_eq!(
        streams, 8,
        "upload, download, screenshot, console, channel, three tunnelled migration prepares"
    );
    for name in [
        "DomainMigratePrepareTunnel",
        "DomainMigratePrepareTunnel3",
        "DomainMigratePrepareTunnel3Params",
    ] {
        assert_eq!(dir(name), Some(StreamDirection::Upload), "{name}");
    }
}

// ---- handshake (version.decoded.txt) -----------------------------------------------------

#[test]
fn handshake_matches_virsh() {
    void_call::<AuthList>(66);
    call::<ConnectSupportsFeature>(VERSION_C001, &ConnectSupportsFeatureArgs { feature: 10 });
    call::<ConnectOpen>(
        VERSION_C002,
        &ConnectOpenArgs {
            name: Some("qemu:///system".into()),
            flags: ConnectFlags::empty(),
        },
    );
    call::<ConnectSupportsFeature>(VERSION_C003, &ConnectSupportsFeatureArgs { feature: 14 });
    call::<ConnectSupportsFeature>(VERSION_C004, &ConnectSupportsFeatureArgs { feature: 15 });
    void_call::<ConnectRegisterCloseCallback>(360);
    void_call::<ConnectGetType>(3);
    void_call::<ConnectGetVersion>(4);
    void_call::<ConnectGetLibVersion>(157);
    void_call::<ConnectUnregisterCloseCallback>(361);
    void_call::<ConnectClose>(2);

    assert_eq!(
        reply::<AuthList>(VERSION_S000).types,
        vec![connect::auth_type::NONE]
    );
    for hex in [VERSION_S001, VERSION_S003, VERSION_S004] {
        assert_eq!(reply::<ConnectSupportsFeature>(hex).supported, 1);
    }
    assert_eq!(reply::<ConnectGetType>(VERSION_S006).kind, "QEMU");
    assert_eq!(reply::<ConnectGetVersion>(VERSION_S007).hv_ver, 7_002_022);
    assert_eq!(
        reply::<ConnectGetLibVersion>(SESSION_S008).lib_ver,
        9_000_000
    );
}

// ---- domains (session.decoded.txt) --------------------------------------------------------

#[test]
fn domain_calls_match_virsh() {
    use domain::{
        DomainCreateFlags, DomainDestroyFlagsValues, DomainModificationImpact,
        InterfaceAddressesSource,
    };
    use libvirt_remote::proto::names::MetadataType;

    call::<ConnectListAllDomains>(
        SESSION_C010,
        &ConnectListAllDomainsArgs {
            need_results: 1,
            flags: connect::ConnectListAllDomainsFlags::ACTIVE
                | connect::ConnectListAllDomainsFlags::INACTIVE,
        },
    );
    call::<DomainGetState>(
        SESSION_C011,
        &DomainFlagsArgs {
            dom: probe_dom(-1),
            flags: Default::default(),
        },
    );
    call::<DomainLookupByName>(
        SESSION_C012,
        &NameArgs {
            name: "rpc-rpcprobe".into(),
        },
    );
    call::<DomainSetMetadata>(
        SESSION_C016,
        &DomainSetMetadataArgs {
            dom: probe_dom(-1),
            kind: MetadataType::ELEMENT,
            metadata: Some(r#"<probe v="1"/>"#.into()),
            key: Some("ceo".into()),
            uri: Some("http://example.org/ceo".into()),
            flags: DomainModificationImpact::CONFIG,
        },
    );
    call::<DomainGetMetadata>(
        SESSION_C018,
        &DomainGetMetadataArgs {
            dom: probe_dom(-1),
            kind: MetadataType::ELEMENT,
            uri: Some("http://example.org/ceo".into()),
            flags: DomainModificationImpact::CONFIG,
        },
    );
    call::<DomainGetMetadata>(
        SESSION_C020,
        &DomainGetMetadataArgs {
            dom: probe_dom(-1),
            kind: MetadataType::ELEMENT,
            uri: Some("http://example.org/nothing".into()),
            flags: DomainModificationImpact::CONFIG,
        },
    );
    call::<DomainCreate>(SESSION_C022, &DomainArgs { dom: probe_dom(-1) });
    call::<DomainLookupByUuid>(
        SESSION_C023,
        &UuidArgs {
            uuid: probe_dom(-1).uuid,
        },
    );
    call::<DomainGetState>(
        SESSION_C025,
        &DomainFlagsArgs {
            dom: probe_dom(3),
            flags: Default::default(),
        },
    );
    for (hex, source) in [
        (SESSION_C027, InterfaceAddressesSource::LEASE),
        (SESSION_C029, InterfaceAddressesSource::ARP),
        (SESSION_C031, InterfaceAddressesSource::AGENT),
    ] {
        call::<DomainInterfaceAddresses>(
            hex,
            &DomainInterfaceAddressesArgs {
                dom: probe_dom(3),
                source,
                flags: Default::default(),
            },
        );
    }
    call::<DomainDestroy>(SESSION_C033, &DomainArgs { dom: probe_dom(3) });
    call::<DomainCreateWithFlags>(
        SESSION_C035,
        &DomainFlagsArgs {
            dom: probe_dom(-1),
            flags: DomainCreateFlags::START_PAUSED,
        },
    );
    call::<DomainDestroyFlags>(
        SESSION_C037,
        &DomainFlagsArgs {
            dom: probe_dom(4),
            flags: DomainDestroyFlagsValues::GRACEFUL,
        },
    );
    call::<DomainIsActive>(SESSION_C039, &DomainArgs { dom: probe_dom(-1) });
    call::<DomainHasManagedSaveImage>(
        SESSION_C040,
        &DomainFlagsArgs {
            dom: probe_dom(-1),
            flags: Default::default(),
        },
    );
    call::<DomainSnapshotNum>(
        SESSION_C041,
        &DomainFlagsArgs {
            dom: probe_dom(-1),
            flags: DomainSnapshotListFlags::empty(),
        },
    );
    call::<DomainUndefineFlags>(
        SESSION_C042,
        &DomainFlagsArgs {
            dom: probe_dom(-1),
            flags: DomainUndefineFlagsValues::empty(),
        },
    );
    call::<DomainLookupByName>(
        SESSION_C066,
        &NameArgs {
            name: "nonexistent-dom".into(),
        },
    );

    // errors.decoded.txt: a second domain (other UUID), destroyed while shut off.
    let other = NonnullDomain {
        name: "rpc-rpcprobe".into(),
        uuid: uuid("12816225-897c-4df0-8192-a1f29fa8af45"),
        id: -1,
    };
    call::<DomainDestroy>(ERRORS_C023, &DomainArgs { dom: other });
}

#[test]
fn domain_replies_decode() {
    assert_eq!(reply::<DomainDefineXml>(SESSION_S009).dom, probe_dom(-1));
    let list = reply::<ConnectListAllDomains>(SESSION_S010);
    assert_eq!((list.domains, list.ret), (vec![probe_dom(-1)], 1));
    let st = reply::<DomainGetState>(SESSION_S011);
    assert_eq!((st.state, st.reason.code()), (DomainState::SHUTOFF, 0));
    assert_eq!(st.reason, StateReason::Shutoff(ShutoffReason::UNKNOWN));
    assert_eq!(reply::<DomainLookupByName>(SESSION_S012).dom, probe_dom(-1));
    assert_eq!(
        reply::<DomainGetMetadata>(SESSION_S018).metadata,
        r#"<probe v="1"/>"#
    );
    assert_eq!(reply::<DomainLookupByUuid>(SESSION_S023).dom, probe_dom(3));
    let st = reply::<DomainGetState>(SESSION_S025);
    assert_eq!((st.state, st.reason.code()), (DomainState::RUNNING, 1));
    assert_eq!(st.reason, StateReason::Running(RunningReason::BOOTED));
    assert_eq!(st.to_string(), "running (booted)");
    assert!(
        reply::<DomainInterfaceAddresses>(SESSION_S027)
            .ifaces
            .is_empty()
    );
    assert_eq!(
        reply::<DomainCreateWithFlags>(SESSION_S035).dom,
        probe_dom(4)
    );
    assert_eq!(reply::<DomainIsActive>(SESSION_S039).active, 0);
    assert_eq!(reply::<DomainHasManagedSaveImage>(SESSION_S040).result, 0);
    assert_eq!(reply::<DomainSnapshotNum>(SESSION_S041).num, 0);
    assert_eq!(
        reply::<DomainDefineXml>(ERRORS_S021).dom.name,
        "rpc-rpcprobe"
    );
    assert_eq!(reply::<DomainIsActive>(ERRORS_S026).active, 0);
}

#[test]
fn define_xml_call_starts_like_virsh() {
    // The 244-byte payload was cut; its start is the XML's length word and first bytes.
    let (h, payload) = cut(DEFINE_XML_CALL_CUT);
    assert_eq!(h.procedure, DomainDefineXml::NUMBER);
    let xml = "<domain type='qemu'>\n  <name>rpc-rpcprobe</name>\n";
    let ours = xdr::to_bytes(&XmlArgs {
        xml: format!("{xml}{}", " ".repeat(237 - xml.len())).into(),
    })
    .unwrap();
    let n = 4 + xml.len();
    assert_eq!(&ours[..n], &payload[..n]);
}

// ---- storage (session, errors, upload_srverr) --------------------------------------------

#[test]
fn storage_calls_match_virsh() {
    call::<StoragePoolLookupByName>(
        SESSION_C043,
        &NameArgs {
            name: "probe".into(),
        },
    );
    call::<StoragePoolRefresh>(
        SESSION_C044,
        &StoragePoolFlagsArgs {
            pool: pool(),
            flags: Default::default(),
        },
    );
    call::<StorageVolCreateXml>(
        SESSION_C046,
        &StorageVolCreateXmlArgs {
            pool: pool(),
            xml: "<volume><name>rpc-rpcprobe2.raw</name><capacity unit='KiB'>64</capacity>\
                  <target><format type='raw'/></target></volume>\n"
                .into(),
            flags: StorageVolCreateFlags::empty(),
        },
    );
    call::<StoragePoolIsActive>(SESSION_C048, &StoragePoolArgs { pool: pool() });
    call::<StorageVolLookupByName>(
        SESSION_C049,
        &StorageVolLookupByNameArgs {
            pool: pool(),
            name: "rpc-rpcprobe2.raw".into(),
        },
    );
    call::<StoragePoolLookupByVolume>(
        SESSION_C050,
        &StorageVolArgs {
            vol: vol("rpc-rpcprobe2.raw"),
        },
    );
    call::<StorageVolGetInfo>(
        SESSION_C051,
        &StorageVolArgs {
            vol: vol("rpc-rpcprobe2.raw"),
        },
    );
    call::<StoragePoolListAllVolumes>(
        SESSION_C053,
        &StoragePoolListAllVolumesArgs {
            pool: pool(),
            need_results: 1,
            flags: Default::default(),
        },
    );
    call::<StorageVolGetPath>(
        SESSION_C054,
        &StorageVolArgs {
            vol: vol("rpc-rpcprobe.raw"),
        },
    );
    call::<StorageVolDelete>(
        SESSION_C065,
        &StorageVolFlagsArgs {
            vol: vol("rpc-rpcprobe2.raw"),
            flags: storage::StorageVolDeleteFlags::NORMAL,
        },
    );

    call::<StorageVolLookupByName>(
        ERRORS_C008,
        &StorageVolLookupByNameArgs {
            pool: pool(),
            name: "does-not-exist.raw".into(),
        },
    );
    call::<StorageVolLookupByKey>(
        ERRORS_C009,
        &StorageVolLookupByKeyArgs {
            key: "does-not-exist.raw".into(),
        },
    );
    call::<StorageVolLookupByPath>(
        ERRORS_C010,
        &StorageVolLookupByPathArgs {
            path: "does-not-exist.raw".into(),
        },
    );
    call::<StoragePoolLookupByName>(
        ERRORS_C020,
        &NameArgs {
            name: "no-such-pool".into(),
        },
    );

    call::<StorageVolLookupByName>(
        UPLOAD_SRVERR_C008,
        &StorageVolLookupByNameArgs {
            pool: pool(),
            name: "rpc-rpcprobe.raw".into(),
        },
    );
    call::<StoragePoolLookupByVolume>(
        UPLOAD_SRVERR_C009,
        &StorageVolArgs {
            vol: vol("rpc-rpcprobe.raw"),
        },
    );
    call::<StorageVolUpload>(
        UPLOAD_SRVERR_C010,
        &StorageVolTransferArgs {
            vol: vol("rpc-rpcprobe.raw"),
            offset: 0,
            length: 1000,
            flags: StorageVolStreamFlags::empty(),
        },
    );
}

#[test]
fn storage_replies_decode() {
    assert_eq!(reply::<StoragePoolLookupByName>(SESSION_S043).pool, pool());
    assert_eq!(
        reply::<StorageVolCreateXml>(SESSION_S046).vol,
        vol("rpc-rpcprobe2.raw")
    );
    assert_eq!(reply::<StoragePoolIsActive>(SESSION_S048).active, 1);
    assert_eq!(
        reply::<StorageVolLookupByName>(SESSION_S049).vol,
        vol("rpc-rpcprobe2.raw")
    );
    assert_eq!(
        reply::<StoragePoolLookupByVolume>(SESSION_S050).pool,
        pool()
    );
    // `char type` is 4 bytes: the whole ret is 20 bytes.
    let info = reply::<StorageVolGetInfo>(SESSION_S051);
    assert_eq!(
        (info.kind, info.capacity, info.allocation),
        (
            libvirt_remote::proto::names::StorageVolType::FILE,
            65_536,
            65_536
        )
    );
    assert_eq!(
        reply::<StorageVolGetPath>(SESSION_S054).name,
        "/srv/pool/rpc-rpcprobe.raw"
    );
    assert_eq!(
        reply::<StorageVolGetPath>(SESSION_S055).name,
        "/srv/pool/rpc-rpcprobe2.raw"
    );
    assert_eq!(
        reply::<StorageVolLookupByName>(UPLOAD_SRVERR_S008).vol,
        vol("rpc-rpcprobe.raw")
    );
}

#[test]
fn list_all_volumes_reply_decodes_up_to_the_cut() {
    let (h, payload) = cut(SESSION_S053);
    assert_eq!(
        (h.procedure, h.status),
        (StoragePoolListAllVolumes::NUMBER, MessageStatus::Ok)
    );
    let mut d = Decoder::new(payload);
    assert_eq!(u32::decode(&mut d).unwrap(), 7, "seven volumes");
    for name in ["lvb-up.raw", "lvb-ref.out", "up.raw"] {
        assert_eq!(NonnullStorageVol::decode(&mut d).unwrap(), vol(name));
    }
    assert!(
        NonnullStorageVol::decode(&mut d).is_err(),
        "the fourth volume is past the cut"
    );
}

// ---- errors ------------------------------------------------------------------------------

#[test]
fn complete_errors_decode_with_every_field() {
    // session #029: DOMAIN_INTERFACE_ADDRESSES with source ARP in the capture sandbox.
    let (w, e) = error(SESSION_S029, DomainInterfaceAddresses::NUMBER);
    assert_eq!(
        (e.code, e.domain, e.level),
        (
            ErrorCode::INTERNAL_ERROR,
            ErrorDomain::NONE,
            ErrorLevel::ERROR
        )
    );
    assert_eq!(e.message(), "internal error: wrong nlmsg len");
    assert_eq!(e.str1.as_ref().unwrap(), "internal error: %s");
    assert_eq!(e.str2.as_ref().unwrap(), "wrong nlmsg len");
    assert_eq!((e.str3.as_ref(), e.int1, e.int2), (None, -1, -1));
    assert_eq!((w.dom, w.net), (None, None));
    assert!(!e.is_not_found() && !e.is_unsupported() && e.errno().is_none());

    // errors #014: creating a volume that exists.
    let (_, e) = error(ERRORS_S014, StorageVolCreateXml::NUMBER);
    assert_eq!(
        (e.code, e.domain),
        (ErrorCode::STORAGE_VOL_EXIST, ErrorDomain::STORAGE)
    );
    assert_eq!(
        e.message(),
        "storage volume 'rpc-rpcprobe2.raw' exists already"
    );
    assert_eq!(e.str1.as_ref().unwrap(), "storage volume %s exists already");
    assert_eq!(e.str2.as_ref().unwrap(), "'rpc-rpcprobe2.raw'");
    assert_eq!(e.int1, -1);
    assert!(e.is_already_exists() && !e.is_not_found());

    // upload_srverr #011: the error arrives as a STREAM packet of the upload.
    let (_, e) = error(UPLOAD_SRVERR_S011, StorageVolUpload::NUMBER);
    assert_eq!(frame(UPLOAD_SRVERR_S011).header.kind, MessageType::Stream);
    assert_eq!(
        (e.code, e.domain),
        (ErrorCode::SYSTEM_ERROR, ErrorDomain::STREAMS)
    );
    assert_eq!(
        e.message(),
        "cannot write to stream: No space left on device"
    );
    assert_eq!(e.str1.as_ref().unwrap(), "%s");
    assert_eq!(
        e.str2.as_ref().unwrap(),
        "cannot write to stream: No space left on device"
    );
    assert_eq!((e.int1, e.int2), (28, -1));
    assert_eq!(e.errno(), Some(28), "ENOSPC");
}

#[test]
fn cut_errors_decode_up_to_the_cut() {
    let e = error_prefix(SESSION_S020, DomainGetMetadata::NUMBER);
    assert_eq!(
        (e.code, e.domain),
        (ErrorCode::NO_DOMAIN_METADATA, ErrorDomain::DOMAIN)
    );
    assert_eq!(
        e.message(),
        "metadata not found: Requested metadata element is not present"
    );
    assert_eq!(e.str1.as_ref().unwrap(), "metadata not found: %s");
    assert!(e.is_no_metadata() && !e.is_not_found());

    let e = error_prefix(SESSION_S031, DomainInterfaceAddresses::NUMBER);
    assert_eq!(
        (e.code, e.domain),
        (ErrorCode::ARGUMENT_UNSUPPORTED, ErrorDomain::QEMU)
    );
    assert_eq!(
        e.message(),
        "argument unsupported: QEMU guest agent is not configured"
    );
    assert!(e.is_unsupported() && !e.is_agent_unavailable());

    let e = error_prefix(SESSION_S066, DomainLookupByName::NUMBER);
    assert_eq!(
        (e.code, e.domain),
        (ErrorCode::NO_DOMAIN, ErrorDomain::QEMU)
    );
    assert_eq!(
        e.message(),
        "Domain not found: no domain with matching name 'nonexistent-dom'"
    );
    assert_eq!(e.str1.as_ref().unwrap(), "Domain not found: %s");
    assert!(e.is_not_found());

    for (hex, number, how) in [
        (
            ERRORS_S008,
            StorageVolLookupByName::NUMBER,
            "name 'does-not-exist.raw'",
        ),
        (
            ERRORS_S009,
            StorageVolLookupByKey::NUMBER,
            "key does-not-exist.raw",
        ),
        (
            ERRORS_S010,
            StorageVolLookupByPath::NUMBER,
            "path 'does-not-exist.raw'",
        ),
    ] {
        let e = error_prefix(hex, number);
        assert_eq!(
            (e.code, e.domain),
            (ErrorCode::NO_STORAGE_VOL, ErrorDomain::STORAGE)
        );
        assert_eq!(
            e.message(),
            format!("Storage volume not found: no storage vol with matching {how}")
        );
        assert!(e.is_not_found());
    }

    let e = error_prefix(ERRORS_S020, StoragePoolLookupByName::NUMBER);
    assert_eq!(
        (e.code, e.domain),
        (ErrorCode::NO_STORAGE_POOL, ErrorDomain::STORAGE)
    );
    assert!(e.message().ends_with("matching name 'no-such-pool'"));
    assert!(e.is_not_found());

    let e = error_prefix(ERRORS_S023, DomainDestroy::NUMBER);
    assert_eq!(
        (e.code, e.domain),
        (ErrorCode::OPERATION_INVALID, ErrorDomain::DOMAIN)
    );
    assert_eq!(
        e.message(),
        "Requested operation is not valid: domain is not running"
    );
    assert!(e.is_operation_invalid() && !e.is_not_found());

    let e = error_prefix(ERRORS_S024, DomainDefineXml::NUMBER);
    assert_eq!(
        (e.code, e.domain),
        (ErrorCode::OPERATION_FAILED, ErrorDomain::DOMAIN)
    );
    assert!(
        e.message()
            .contains("already exists with uuid 12816225-897c-4df0-8192-a1f29fa8af45")
    );
    assert_eq!(e.level, ErrorLevel::ERROR);
    assert!(
        !e.is_already_exists(),
        "a duplicate define is OPERATION_FAILED, not DOM_EXIST"
    );
}

// ---- captured packets ---------------------------------------------------------------------

/// `session.decoded.txt` C→S #009: CALL `DOMAIN_DEFINE_XML` (11) serial 9 OK (hex cut at 188 bytes by the capture tool).
const DEFINE_XML_CALL_CUT: &str = "0000011020008086000000010000000b000000000000000900000000000000ed3c646f6d61696e20747970653d2771656d75273e0a20203c6e616d653e7270632d72706370726f62653c2f6e616d653e0a20203c6d656d6f727920756e69743d274d6942273e33323c2f6d656d6f72793e0a20203c766370753e313c2f766370753e0a20203c6f733e3c7479706520617263683d277838365f3634273e68766d3c2f747970653e3c2f6f733e0a20203c646576696365733e0a202020";
/// `version.decoded.txt` C→S #001: CALL `CONNECT_SUPPORTS_FEATURE` (60) serial 1 OK.
const VERSION_C001: &str = "0000002020008086000000010000003c0000000000000001000000000000000a";
/// `version.decoded.txt` C→S #002: CALL `CONNECT_OPEN` (1) serial 2 OK.
const VERSION_C002: &str = "00000038200080860000000100000001000000000000000200000000000000010000000e71656d753a2f2f2f73797374656d000000000000";
/// `version.decoded.txt` C→S #003: CALL `CONNECT_SUPPORTS_FEATURE` (60) serial 3 OK.
const VERSION_C003: &str = "0000002020008086000000010000003c0000000000000003000000000000000e";
/// `version.decoded.txt` C→S #004: CALL `CONNECT_SUPPORTS_FEATURE` (60) serial 4 OK.
const VERSION_C004: &str = "0000002020008086000000010000003c0000000000000004000000000000000f";
/// `version.decoded.txt` S→C #000: REPLY `AUTH_LIST` (66) serial 0 OK.
const VERSION_S000: &str =
    "000000242000808600000001000000420000000100000000000000000000000100000000";
/// `version.decoded.txt` S→C #001: REPLY `CONNECT_SUPPORTS_FEATURE` (60) serial 1 OK.
const VERSION_S001: &str = "0000002020008086000000010000003c00000001000000010000000000000001";
/// `version.decoded.txt` S→C #003: REPLY `CONNECT_SUPPORTS_FEATURE` (60) serial 3 OK.
const VERSION_S003: &str = "0000002020008086000000010000003c00000001000000030000000000000001";
/// `version.decoded.txt` S→C #004: REPLY `CONNECT_SUPPORTS_FEATURE` (60) serial 4 OK.
const VERSION_S004: &str = "0000002020008086000000010000003c00000001000000040000000000000001";
/// `version.decoded.txt` S→C #006: REPLY `CONNECT_GET_TYPE` (3) serial 6 OK.
const VERSION_S006: &str =
    "000000242000808600000001000000030000000100000006000000000000000451454d55";
/// `version.decoded.txt` S→C #007: REPLY `CONNECT_GET_VERSION` (4) serial 7 OK.
const VERSION_S007: &str =
    "0000002420008086000000010000000400000001000000070000000000000000006ad7a6";
/// `session.decoded.txt` C→S #010: CALL `CONNECT_LIST_ALL_DOMAINS` (273) serial 10 OK.
const SESSION_C010: &str =
    "00000024200080860000000100000111000000000000000a000000000000000100000003";
/// `session.decoded.txt` C→S #011: CALL `DOMAIN_GET_STATE` (212) serial 11 OK.
const SESSION_C011: &str = "000000442000808600000001000000d4000000000000000b000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533fffffffff00000000";
/// `session.decoded.txt` C→S #012: CALL `DOMAIN_LOOKUP_BY_NAME` (23) serial 12 OK.
const SESSION_C012: &str =
    "0000002c200080860000000100000017000000000000000c000000000000000c7270632d72706370726f6265";
/// `session.decoded.txt` C→S #016: CALL `DOMAIN_SET_METADATA` (264) serial 16 OK.
const SESSION_C016: &str = "0000008c2000808600000001000001080000000000000010000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533fffffffff00000002000000010000000e3c70726f626520763d2231222f3e0000000000010000000363656f000000000100000016687474703a2f2f6578616d706c652e6f72672f63656f000000000002";
/// `session.decoded.txt` C→S #018: CALL `DOMAIN_GET_METADATA` (265) serial 18 OK.
const SESSION_C018: &str = "000000682000808600000001000001090000000000000012000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533fffffffff000000020000000100000016687474703a2f2f6578616d706c652e6f72672f63656f000000000002";
/// `session.decoded.txt` C→S #020: CALL `DOMAIN_GET_METADATA` (265) serial 20 OK.
const SESSION_C020: &str = "0000006c2000808600000001000001090000000000000014000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533fffffffff00000002000000010000001a687474703a2f2f6578616d706c652e6f72672f6e6f7468696e67000000000002";
/// `session.decoded.txt` C→S #022: CALL `DOMAIN_CREATE` (9) serial 22 OK.
const SESSION_C022: &str = "000000402000808600000001000000090000000000000016000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533fffffffff";
/// `session.decoded.txt` C→S #023: CALL `DOMAIN_LOOKUP_BY_UUID` (24) serial 23 OK.
const SESSION_C023: &str =
    "0000002c2000808600000001000000180000000000000017000000009a923c0137804669a69aeb8c3eff533f";
/// `session.decoded.txt` C→S #025: CALL `DOMAIN_GET_STATE` (212) serial 25 OK.
const SESSION_C025: &str = "000000442000808600000001000000d40000000000000019000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533f0000000300000000";
/// `session.decoded.txt` C→S #027: CALL `DOMAIN_INTERFACE_ADDRESSES` (353) serial 27 OK.
const SESSION_C027: &str = "00000048200080860000000100000161000000000000001b000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533f000000030000000000000000";
/// `session.decoded.txt` C→S #029: CALL `DOMAIN_INTERFACE_ADDRESSES` (353) serial 29 OK.
const SESSION_C029: &str = "00000048200080860000000100000161000000000000001d000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533f000000030000000200000000";
/// `session.decoded.txt` C→S #031: CALL `DOMAIN_INTERFACE_ADDRESSES` (353) serial 31 OK.
const SESSION_C031: &str = "00000048200080860000000100000161000000000000001f000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533f000000030000000100000000";
/// `session.decoded.txt` C→S #033: CALL `DOMAIN_DESTROY` (12) serial 33 OK.
const SESSION_C033: &str = "0000004020008086000000010000000c0000000000000021000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533f00000003";
/// `session.decoded.txt` C→S #035: CALL `DOMAIN_CREATE_WITH_FLAGS` (196) serial 35 OK.
const SESSION_C035: &str = "000000442000808600000001000000c40000000000000023000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533fffffffff00000001";
/// `session.decoded.txt` C→S #037: CALL `DOMAIN_DESTROY_FLAGS` (234) serial 37 OK.
const SESSION_C037: &str = "000000442000808600000001000000ea0000000000000025000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533f0000000400000001";
/// `session.decoded.txt` C→S #039: CALL `DOMAIN_IS_ACTIVE` (150) serial 39 OK.
const SESSION_C039: &str = "000000402000808600000001000000960000000000000027000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533fffffffff";
/// `session.decoded.txt` C→S #040: CALL `DOMAIN_HAS_MANAGED_SAVE_IMAGE` (183) serial 40 OK.
const SESSION_C040: &str = "000000442000808600000001000000b70000000000000028000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533fffffffff00000000";
/// `session.decoded.txt` C→S #041: CALL `DOMAIN_SNAPSHOT_NUM` (187) serial 41 OK.
const SESSION_C041: &str = "000000442000808600000001000000bb0000000000000029000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533fffffffff00000000";
/// `session.decoded.txt` C→S #042: CALL `DOMAIN_UNDEFINE_FLAGS` (231) serial 42 OK.
const SESSION_C042: &str = "000000442000808600000001000000e7000000000000002a000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533fffffffff00000000";
/// `session.decoded.txt` C→S #043: CALL `STORAGE_POOL_LOOKUP_BY_NAME` (84) serial 43 OK.
const SESSION_C043: &str =
    "00000028200080860000000100000054000000000000002b000000000000000570726f6265000000";
/// `session.decoded.txt` C→S #044: CALL `STORAGE_POOL_REFRESH` (83) serial 44 OK.
const SESSION_C044: &str = "0000003c200080860000000100000053000000000000002c000000000000000570726f626500000060d30d547014447f868e9524694aae6300000000";
/// `session.decoded.txt` C→S #046: CALL `STORAGE_VOL_CREATE_XML` (93) serial 46 OK.
const SESSION_C046: &str = "000000b820008086000000010000005d000000000000002e000000000000000570726f626500000060d30d547014447f868e9524694aae63000000773c766f6c756d653e3c6e616d653e7270632d72706370726f6265322e7261773c2f6e616d653e3c636170616369747920756e69743d274b6942273e36343c2f63617061636974793e3c7461726765743e3c666f726d617420747970653d27726177272f3e3c2f7461726765743e3c2f766f6c756d653e0a0000000000";
/// `session.decoded.txt` C→S #048: CALL `STORAGE_POOL_IS_ACTIVE` (154) serial 48 OK.
const SESSION_C048: &str = "0000003820008086000000010000009a0000000000000030000000000000000570726f626500000060d30d547014447f868e9524694aae63";
/// `session.decoded.txt` C→S #049: CALL `STORAGE_VOL_LOOKUP_BY_NAME` (95) serial 49 OK.
const SESSION_C049: &str = "0000005020008086000000010000005f0000000000000031000000000000000570726f626500000060d30d547014447f868e9524694aae63000000117270632d72706370726f6265322e726177000000";
/// `session.decoded.txt` C→S #050: CALL `STORAGE_POOL_LOOKUP_BY_VOLUME` (86) serial 50 OK.
const SESSION_C050: &str = "000000602000808600000001000000560000000000000032000000000000000570726f6265000000000000117270632d72706370726f6265322e7261770000000000001b2f7372762f706f6f6c2f7270632d72706370726f6265322e72617700";
/// `session.decoded.txt` C→S #051: CALL `STORAGE_VOL_GET_INFO` (98) serial 51 OK.
const SESSION_C051: &str = "000000602000808600000001000000620000000000000033000000000000000570726f6265000000000000117270632d72706370726f6265322e7261770000000000001b2f7372762f706f6f6c2f7270632d72706370726f6265322e72617700";
/// `session.decoded.txt` C→S #053: CALL `STORAGE_POOL_LIST_ALL_VOLUMES` (282) serial 53 OK.
const SESSION_C053: &str = "0000004020008086000000010000011a0000000000000035000000000000000570726f626500000060d30d547014447f868e9524694aae630000000100000000";
/// `session.decoded.txt` C→S #054: CALL `STORAGE_VOL_GET_PATH` (100) serial 54 OK.
const SESSION_C054: &str = "0000005c2000808600000001000000640000000000000036000000000000000570726f6265000000000000107270632d72706370726f62652e7261770000001a2f7372762f706f6f6c2f7270632d72706370726f62652e7261770000";
/// `session.decoded.txt` C→S #065: CALL `STORAGE_VOL_DELETE` (94) serial 65 OK.
const SESSION_C065: &str = "0000006420008086000000010000005e0000000000000041000000000000000570726f6265000000000000117270632d72706370726f6265322e7261770000000000001b2f7372762f706f6f6c2f7270632d72706370726f6265322e7261770000000000";
/// `session.decoded.txt` C→S #066: CALL `DOMAIN_LOOKUP_BY_NAME` (23) serial 66 OK.
const SESSION_C066: &str = "000000302000808600000001000000170000000000000042000000000000000f6e6f6e6578697374656e742d646f6d00";
/// `session.decoded.txt` S→C #008: REPLY `CONNECT_GET_LIB_VERSION` (157) serial 8 OK.
const SESSION_S008: &str =
    "0000002420008086000000010000009d0000000100000008000000000000000000895440";
/// `session.decoded.txt` S→C #009: REPLY `DOMAIN_DEFINE_XML` (11) serial 9 OK.
const SESSION_S009: &str = "0000004020008086000000010000000b0000000100000009000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533fffffffff";
/// `session.decoded.txt` S→C #010: REPLY `CONNECT_LIST_ALL_DOMAINS` (273) serial 10 OK.
const SESSION_S010: &str = "00000048200080860000000100000111000000010000000a00000000000000010000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533fffffffff00000001";
/// `session.decoded.txt` S→C #011: REPLY `DOMAIN_GET_STATE` (212) serial 11 OK.
const SESSION_S011: &str =
    "000000242000808600000001000000d4000000010000000b000000000000000500000000";
/// `session.decoded.txt` S→C #012: REPLY `DOMAIN_LOOKUP_BY_NAME` (23) serial 12 OK.
const SESSION_S012: &str = "00000040200080860000000100000017000000010000000c000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533fffffffff";
/// `session.decoded.txt` S→C #018: REPLY `DOMAIN_GET_METADATA` (265) serial 18 OK.
const SESSION_S018: &str = "000000302000808600000001000001090000000100000012000000000000000e3c70726f626520763d2231222f3e0000";
/// `session.decoded.txt` S→C #020: REPLY `DOMAIN_GET_METADATA` (265) serial 20 ERROR (hex cut at 188 bytes by the capture tool).
const SESSION_S020: &str = "000000d82000808600000001000001090000000100000014000000010000005000000014000000010000003d6d65746164617461206e6f7420666f756e643a20526571756573746564206d6574616461746120656c656d656e74206973206e6f742070726573656e74000000000000020000000000000001000000166d65746164617461206e6f7420666f756e643a20257300000000000100000029526571756573746564206d6574616461746120656c656d656e74206973206e6f";
/// `session.decoded.txt` S→C #023: REPLY `DOMAIN_LOOKUP_BY_UUID` (24) serial 23 OK.
const SESSION_S023: &str = "000000402000808600000001000000180000000100000017000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533f00000003";
/// `session.decoded.txt` S→C #025: REPLY `DOMAIN_GET_STATE` (212) serial 25 OK.
const SESSION_S025: &str =
    "000000242000808600000001000000d40000000100000019000000000000000100000001";
/// `session.decoded.txt` S→C #027: REPLY `DOMAIN_INTERFACE_ADDRESSES` (353) serial 27 OK.
const SESSION_S027: &str = "00000020200080860000000100000161000000010000001b0000000000000000";
/// `session.decoded.txt` S→C #029: REPLY `DOMAIN_INTERFACE_ADDRESSES` (353) serial 29 ERROR.
const SESSION_S029: &str = "00000098200080860000000100000161000000010000001d000000010000000100000000000000010000001f696e7465726e616c206572726f723a2077726f6e67206e6c6d7367206c656e0000000002000000000000000100000012696e7465726e616c206572726f723a2025730000000000010000000f77726f6e67206e6c6d7367206c656e0000000000ffffffffffffffff00000000";
/// `session.decoded.txt` S→C #031: REPLY `DOMAIN_INTERFACE_ADDRESSES` (353) serial 31 ERROR (hex cut at 188 bytes by the capture tool).
const SESSION_S031: &str = "000000c8200080860000000100000161000000010000001f000000010000004a0000000a0000000100000038617267756d656e7420756e737570706f727465643a2051454d55206775657374206167656e74206973206e6f7420636f6e6669677572656400000002000000000000000100000018617267756d656e7420756e737570706f727465643a202573000000010000002251454d55206775657374206167656e74206973206e6f7420636f6e66696775726564000000000000";
/// `session.decoded.txt` S→C #035: REPLY `DOMAIN_CREATE_WITH_FLAGS` (196) serial 35 OK.
const SESSION_S035: &str = "000000402000808600000001000000c40000000100000023000000000000000c7270632d72706370726f62659a923c0137804669a69aeb8c3eff533f00000004";
/// `session.decoded.txt` S→C #039: REPLY `DOMAIN_IS_ACTIVE` (150) serial 39 OK.
const SESSION_S039: &str = "0000002020008086000000010000009600000001000000270000000000000000";
/// `session.decoded.txt` S→C #040: REPLY `DOMAIN_HAS_MANAGED_SAVE_IMAGE` (183) serial 40 OK.
const SESSION_S040: &str = "000000202000808600000001000000b700000001000000280000000000000000";
/// `session.decoded.txt` S→C #041: REPLY `DOMAIN_SNAPSHOT_NUM` (187) serial 41 OK.
const SESSION_S041: &str = "000000202000808600000001000000bb00000001000000290000000000000000";
/// `session.decoded.txt` S→C #043: REPLY `STORAGE_POOL_LOOKUP_BY_NAME` (84) serial 43 OK.
const SESSION_S043: &str = "00000038200080860000000100000054000000010000002b000000000000000570726f626500000060d30d547014447f868e9524694aae63";
/// `session.decoded.txt` S→C #046: REPLY `STORAGE_VOL_CREATE_XML` (93) serial 46 OK.
const SESSION_S046: &str = "0000006020008086000000010000005d000000010000002e000000000000000570726f6265000000000000117270632d72706370726f6265322e7261770000000000001b2f7372762f706f6f6c2f7270632d72706370726f6265322e72617700";
/// `session.decoded.txt` S→C #048: REPLY `STORAGE_POOL_IS_ACTIVE` (154) serial 48 OK.
const SESSION_S048: &str = "0000002020008086000000010000009a00000001000000300000000000000001";
/// `session.decoded.txt` S→C #049: REPLY `STORAGE_VOL_LOOKUP_BY_NAME` (95) serial 49 OK.
const SESSION_S049: &str = "0000006020008086000000010000005f0000000100000031000000000000000570726f6265000000000000117270632d72706370726f6265322e7261770000000000001b2f7372762f706f6f6c2f7270632d72706370726f6265322e72617700";
/// `session.decoded.txt` S→C #050: REPLY `STORAGE_POOL_LOOKUP_BY_VOLUME` (86) serial 50 OK.
const SESSION_S050: &str = "000000382000808600000001000000560000000100000032000000000000000570726f626500000060d30d547014447f868e9524694aae63";
/// `session.decoded.txt` S→C #051: REPLY `STORAGE_VOL_GET_INFO` (98) serial 51 OK.
const SESSION_S051: &str = "000000302000808600000001000000620000000100000033000000000000000000000000000100000000000000010000";
/// `session.decoded.txt` S→C #053: REPLY `STORAGE_POOL_LIST_ALL_VOLUMES` (282) serial 53 OK (hex cut at 188 bytes by the capture tool).
const SESSION_S053: &str = "000001a820008086000000010000011a000000010000003500000000000000070000000570726f62650000000000000a6c76622d75702e7261770000000000142f7372762f706f6f6c2f6c76622d75702e7261770000000570726f62650000000000000b6c76622d7265662e6f757400000000152f7372762f706f6f6c2f6c76622d7265662e6f75740000000000000570726f62650000000000000675702e7261770000000000102f7372762f706f6f6c2f75702e72617700000005";
/// `session.decoded.txt` S→C #054: REPLY `STORAGE_VOL_GET_PATH` (100) serial 54 OK.
const SESSION_S054: &str = "0000003c2000808600000001000000640000000100000036000000000000001a2f7372762f706f6f6c2f7270632d72706370726f62652e7261770000";
/// `session.decoded.txt` S→C #055: REPLY `STORAGE_VOL_GET_PATH` (100) serial 55 OK.
const SESSION_S055: &str = "0000003c2000808600000001000000640000000100000037000000000000001b2f7372762f706f6f6c2f7270632d72706370726f6265322e72617700";
/// `session.decoded.txt` S→C #066: REPLY `DOMAIN_LOOKUP_BY_NAME` (23) serial 66 ERROR (hex cut at 188 bytes by the capture tool).
const SESSION_S066: &str = "000000d82000808600000001000000170000000100000042000000010000002a0000000a0000000100000040446f6d61696e206e6f7420666f756e643a206e6f20646f6d61696e2077697468206d61746368696e67206e616d6520276e6f6e6578697374656e742d646f6d2700000002000000000000000100000014446f6d61696e206e6f7420666f756e643a202573000000010000002e6e6f20646f6d61696e2077697468206d61746368696e67206e616d6520276e6f6e657869";
/// `errors.decoded.txt` C→S #008: CALL `STORAGE_VOL_LOOKUP_BY_NAME` (95) serial 8 OK.
const ERRORS_C008: &str = "0000005020008086000000010000005f0000000000000008000000000000000570726f626500000060d30d547014447f868e9524694aae6300000012646f65732d6e6f742d65786973742e7261770000";
/// `errors.decoded.txt` C→S #009: CALL `STORAGE_VOL_LOOKUP_BY_KEY` (96) serial 9 OK.
const ERRORS_C009: &str = "0000003420008086000000010000006000000000000000090000000000000012646f65732d6e6f742d65786973742e7261770000";
/// `errors.decoded.txt` C→S #010: CALL `STORAGE_VOL_LOOKUP_BY_PATH` (97) serial 10 OK.
const ERRORS_C010: &str = "00000034200080860000000100000061000000000000000a0000000000000012646f65732d6e6f742d65786973742e7261770000";
/// `errors.decoded.txt` C→S #020: CALL `STORAGE_POOL_LOOKUP_BY_NAME` (84) serial 20 OK.
const ERRORS_C020: &str =
    "0000002c2000808600000001000000540000000000000014000000000000000c6e6f2d737563682d706f6f6c";
/// `errors.decoded.txt` C→S #023: CALL `DOMAIN_DESTROY` (12) serial 23 OK.
const ERRORS_C023: &str = "0000004020008086000000010000000c0000000000000017000000000000000c7270632d72706370726f626512816225897c4df08192a1f29fa8af45ffffffff";
/// `errors.decoded.txt` S→C #008: REPLY `STORAGE_VOL_LOOKUP_BY_NAME` (95) serial 8 ERROR (hex cut at 188 bytes by the capture tool).
const ERRORS_S008: &str = "000000f820008086000000010000005f0000000100000008000000010000003200000012000000010000005053746f7261676520766f6c756d65206e6f7420666f756e643a206e6f2073746f7261676520766f6c2077697468206d61746368696e67206e616d652027646f65732d6e6f742d65786973742e726177270000000200000000000000010000001c53746f7261676520766f6c756d65206e6f7420666f756e643a20257300000001000000366e6f2073746f726167652076";
/// `errors.decoded.txt` S→C #009: REPLY `STORAGE_VOL_LOOKUP_BY_KEY` (96) serial 9 ERROR (hex cut at 188 bytes by the capture tool).
const ERRORS_S009: &str = "000000f42000808600000001000000600000000100000009000000010000003200000012000000010000004d53746f7261676520766f6c756d65206e6f7420666f756e643a206e6f2073746f7261676520766f6c2077697468206d61746368696e67206b657920646f65732d6e6f742d65786973742e7261770000000000000200000000000000010000001c53746f7261676520766f6c756d65206e6f7420666f756e643a20257300000001000000336e6f2073746f726167652076";
/// `errors.decoded.txt` S→C #010: REPLY `STORAGE_VOL_LOOKUP_BY_PATH` (97) serial 10 ERROR (hex cut at 188 bytes by the capture tool).
const ERRORS_S010: &str = "000000f8200080860000000100000061000000010000000a000000010000003200000012000000010000005053746f7261676520766f6c756d65206e6f7420666f756e643a206e6f2073746f7261676520766f6c2077697468206d61746368696e6720706174682027646f65732d6e6f742d65786973742e726177270000000200000000000000010000001c53746f7261676520766f6c756d65206e6f7420666f756e643a20257300000001000000366e6f2073746f726167652076";
/// `errors.decoded.txt` S→C #014: REPLY `STORAGE_VOL_CREATE_XML` (93) serial 14 ERROR.
const ERRORS_S014: &str = "000000bc20008086000000010000005d000000010000000e000000010000005a00000012000000010000003173746f7261676520766f6c756d6520277270632d72706370726f6265322e726177272065786973747320616c72656164790000000000000200000000000000010000002073746f7261676520766f6c756d652025732065786973747320616c72656164790000000100000013277270632d72706370726f6265322e726177270000000000ffffffffffffffff00000000";
/// `errors.decoded.txt` S→C #020: REPLY `STORAGE_POOL_LOOKUP_BY_NAME` (84) serial 20 ERROR (hex cut at 188 bytes by the capture tool).
const ERRORS_S020: &str = "000000f02000808600000001000000540000000100000014000000010000003100000012000000010000004953746f7261676520706f6f6c206e6f7420666f756e643a206e6f2073746f7261676520706f6f6c2077697468206d61746368696e67206e616d6520276e6f2d737563682d706f6f6c270000000000000200000000000000010000001a53746f7261676520706f6f6c206e6f7420666f756e643a202573000000000001000000316e6f2073746f7261676520706f6f6c20";
/// `errors.decoded.txt` S→C #021: REPLY `DOMAIN_DEFINE_XML` (11) serial 21 OK.
const ERRORS_S021: &str = "0000004020008086000000010000000b0000000100000015000000000000000c7270632d72706370726f626512816225897c4df08192a1f29fa8af45ffffffff";
/// `errors.decoded.txt` S→C #023: REPLY `DOMAIN_DESTROY` (12) serial 23 ERROR (hex cut at 188 bytes by the capture tool).
const ERRORS_S023: &str = "000000c820008086000000010000000c00000001000000170000000100000037000000140000000100000037526571756573746564206f7065726174696f6e206973206e6f742076616c69643a20646f6d61696e206973206e6f742072756e6e696e670000000002000000000000000100000024526571756573746564206f7065726174696f6e206973206e6f742076616c69643a2025730000000100000015646f6d61696e206973206e6f742072756e6e696e6700000000000000";
/// `errors.decoded.txt` S→C #024: REPLY `DOMAIN_DEFINE_XML` (11) serial 24 ERROR (hex cut at 188 bytes by the capture tool).
const ERRORS_S024: &str = "0000012420008086000000010000000b000000010000001800000001000000090000001400000001000000656f7065726174696f6e206661696c65643a20646f6d61696e20277270632d72706370726f62652720616c726561647920657869737473207769746820757569642031323831363232352d383937632d346466302d383139322d613166323966613861663435000000000000020000000000000001000000146f7065726174696f6e206661696c65643a20257300000001";
/// `errors.decoded.txt` S→C #026: REPLY `DOMAIN_IS_ACTIVE` (150) serial 26 OK.
const ERRORS_S026: &str = "00000020200080860000000100000096000000010000001a0000000000000000";
/// `upload_srverr.decoded.txt` C→S #008: CALL `STORAGE_VOL_LOOKUP_BY_NAME` (95) serial 8 OK.
const UPLOAD_SRVERR_C008: &str = "0000004c20008086000000010000005f0000000000000008000000000000000570726f626500000060d30d547014447f868e9524694aae63000000107270632d72706370726f62652e726177";
/// `upload_srverr.decoded.txt` C→S #009: CALL `STORAGE_POOL_LOOKUP_BY_VOLUME` (86) serial 9 OK.
const UPLOAD_SRVERR_C009: &str = "0000005c2000808600000001000000560000000000000009000000000000000570726f6265000000000000107270632d72706370726f62652e7261770000001a2f7372762f706f6f6c2f7270632d72706370726f62652e7261770000";
/// `upload_srverr.decoded.txt` C→S #010: CALL `STORAGE_VOL_UPLOAD` (208) serial 10 OK.
const UPLOAD_SRVERR_C010: &str = "000000702000808600000001000000d0000000000000000a000000000000000570726f6265000000000000107270632d72706370726f62652e7261770000001a2f7372762f706f6f6c2f7270632d72706370726f62652e7261770000000000000000000000000000000003e800000000";
/// `upload_srverr.decoded.txt` S→C #008: REPLY `STORAGE_VOL_LOOKUP_BY_NAME` (95) serial 8 OK.
const UPLOAD_SRVERR_S008: &str = "0000005c20008086000000010000005f0000000100000008000000000000000570726f6265000000000000107270632d72706370726f62652e7261770000001a2f7372762f706f6f6c2f7270632d72706370726f62652e7261770000";
/// `upload_srverr.decoded.txt` S→C #011: STREAM `STORAGE_VOL_UPLOAD` (208) serial 10 ERROR.
const UPLOAD_SRVERR_S011: &str = "000000b82000808600000001000000d0000000030000000a000000010000002600000026000000010000002f63616e6e6f7420777269746520746f2073747265616d3a204e6f207370616365206c656674206f6e20646576696365000000000200000000000000010000000225730000000000010000002f63616e6e6f7420777269746520746f2073747265616d3a204e6f207370616365206c656674206f6e2064657669636500000000000000001cffffffff00000000";
