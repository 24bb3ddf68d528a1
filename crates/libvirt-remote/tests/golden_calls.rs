//! Golden vectors for the calls declared without a capture in the protocol reference (the
//! 9.0 daemon lacks some, and virsh never sent the others in the recorded sessions).
//!
//! Each row builds one argument or return value with distinct values per field (signed and
//! unsigned integers with the high bits set, present and absent optional strings, odd-length
//! opaque data so the padding shows, typed parameters cycling through every union arm) and
//! names the bytes its `remote_protocol.x` layout gives for it. The bytes were produced by an
//! XDR serializer generated independently from the `.x` files of libvirt `procs::HIGHEST_RELEASE` (not by this
//! crate), so a wrong field order, width, optionality or bound fails here. Every row must
//! encode to its bytes, decode from them to the same value, and consume them exactly.
//!
//! The second test replays real traffic for the 17 of these calls virsh 9.0 sends to a test
//! driver: virsh's arguments and the daemon's replies, byte for byte.

use std::collections::BTreeSet;
use std::fmt::Debug;

use bytes::Bytes;
use libvirt_remote::proto::names::MetadataType;
use libvirt_remote::proto::procs::connect::{ConnectGetAllDomainStatsFlags, DomainStatsTypes};
use libvirt_remote::proto::procs::domain::{
    DomainCreateFlags, DomainModificationImpact, DomainSaveRestoreFlags,
};
use libvirt_remote::proto::procs::migration::DomainMigrateFlags;
use libvirt_remote::proto::procs::network::NetworkUpdateFlags;
use libvirt_remote::proto::procs::qemu::QemuMonitorEventRegisterFlags;
use libvirt_remote::proto::procs::snapshot::DomainSnapshotListFlags;
use libvirt_remote::proto::procs::{
    self, common, connect, domain, domain_tune, migration, network, node, nodedev, snapshot,
};
use libvirt_remote::proto::types::{
    CharVec, NonnullDomain, NonnullDomainSnapshot, NonnullNetwork, NonnullNetworkPort, TypedParam,
    TypedParamValue, Uuid,
};
use libvirt_remote::proto::{Procedure, WireError};
use libvirt_remote::proto::{REMOTE_PROGRAM, RemoteError};
use libvirt_remote::wire::frame::{self, Frame, MessageStatus, MessageType};
use libvirt_remote::wire::xdr::{self, Decode, Encode};

/// The calls this file covers: every one declared without a capture, by number.
const COVERED: &[i32] = &[
    57, 58, 61, 62, 63, 103, 104, 105, 106, 108, 109, 148, 166, 167, 168, 207, 213, 214, 215, 216,
    217, 218, 230, 242, 243, 247, 252, 253, 254, 255, 256, 257, 262, 278, 279, 280, 299, 300, 302,
    303, 304, 305, 306, 307, 308, 334, 344, 345, 347, 351, 352, 355, 356, 364, 365, 366, 387, 395,
    396, 402, 407, 408, 419, 421, 422, 427, 439, 440, 441, 444, 445, 447, 448, 449, 450, 451, 452,
    456, // the calls that pass descriptors:
    249, 309, 310, 343, 443,
];

fn uuid() -> Uuid {
    Uuid(core::array::from_fn(|i| i as u8))
}

fn dom() -> NonnullDomain {
    NonnullDomain {
        name: "dom".into(),
        uuid: uuid(),
        id: 7,
    }
}

fn net() -> NonnullNetwork {
    NonnullNetwork {
        name: "net".into(),
        uuid: uuid(),
    }
}

fn port() -> NonnullNetworkPort {
    NonnullNetworkPort {
        net: net(),
        uuid: uuid(),
    }
}

fn snap() -> NonnullDomainSnapshot {
    NonnullDomainSnapshot {
        name: "snap".into(),
        dom: dom(),
    }
}

fn tp(field: &str, value: TypedParamValue) -> TypedParam {
    TypedParam {
        field: field.into(),
        value,
    }
}

fn unhex(s: &str) -> Bytes {
    assert!(s.len() % 2 == 0, "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect::<Vec<u8>>()
        .into()
}

fn check<T: Encode + Decode + PartialEq + Debug>(what: &str, value: &T, hex: &str) {
    let want = unhex(hex);
    assert_eq!(
        xdr::to_bytes(value).unwrap(),
        want,
        "{what} encodes differently from its layout"
    );
    let back: T = xdr::from_bytes(want).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(&back, value, "{what} decodes to another value");
}

// Rows pass values: they read as the declarations they check.
#[allow(clippy::needless_pass_by_value)]
fn args<P: Procedure>(seen: &mut BTreeSet<i32>, value: P::Args, hex: &str)
where
    P::Args: Decode + PartialEq + Debug,
{
    check(&format!("{} args", P::NAME), &value, hex);
    seen.insert(P::NUMBER);
}

#[allow(clippy::needless_pass_by_value)]
fn ret<P: Procedure>(seen: &mut BTreeSet<i32>, value: P::Ret, hex: &str)
where
    P::Ret: Encode + PartialEq + Debug,
{
    check(&format!("{} ret", P::NAME), &value, hex);
    seen.insert(P::NUMBER);
}

#[test]
#[allow(clippy::too_many_lines, clippy::unreadable_literal)]
fn declared_calls_match_their_layouts() {
    let mut seen = BTreeSet::new();
    args::<domain_tune::DomainGetSchedulerParameters>(
        &mut seen,
        domain_tune::DomainGetSchedulerParametersArgs {
            dom: dom(),
            nparams: -2,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007fffffffe",
    );
    ret::<domain_tune::DomainGetSchedulerParameters>(
        &mut seen,
        domain_tune::DomainGetSchedulerParametersLegacyRet {
            params: vec![
                tp("p0", TypedParamValue::Int(-1)),
                tp("p1", TypedParamValue::UInt(4000000001)),
            ],
        },
        "00000002000000027030000000000001ffffffff000000027031000000000002ee6b2801",
    );
    args::<domain_tune::DomainSetSchedulerParameters>(
        &mut seen,
        domain_tune::DomainSetSchedulerParametersArgs {
            dom: dom(),
            params: vec![
                tp("p2", TypedParamValue::LLong(-1099511627778)),
                tp("p3", TypedParamValue::ULLong(9223372036854775811)),
            ],
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700000002000000027032000000000003fffffefffffffffe0000000270330000000000048000000000000003",
    );
    args::<migration::DomainMigratePrepare>(
        &mut seen,
        migration::DomainMigratePrepareArgs {
            uri_in: Some("uri-in".into()),
            flags: DomainMigrateFlags::from_bits_retain(4294967297),
            dname: Some("dname2".into()),
            bandwidth: 4294967299,
        },
        "00000001000000067572692d696e000000000001000000010000000100000006646e616d653200000000000100000003",
    );
    ret::<migration::DomainMigratePrepare>(
        &mut seen,
        migration::DomainMigratePrepareRet {
            cookie: Bytes::from_static(b"\x01\x02\x03"),
            uri_out: None,
        },
        "000000030102030000000000",
    );
    args::<migration::DomainMigratePerform>(
        &mut seen,
        migration::DomainMigratePerformArgs {
            dom: dom(),
            cookie: Bytes::from_static(b"\x01\x02\x03"),
            uri: "uri2".into(),
            flags: DomainMigrateFlags::from_bits_retain(4294967299),
            dname: Some("dname4".into()),
            bandwidth: 4294967301,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f000000070000000301020300000000047572693200000001000000030000000100000006646e616d653400000000000100000005",
    );
    args::<migration::DomainMigrateFinish>(
        &mut seen,
        migration::DomainMigrateFinishArgs {
            dname: "dname".into(),
            cookie: Bytes::from_static(b"\x01\x02\x03"),
            uri: "uri2".into(),
            flags: DomainMigrateFlags::from_bits_retain(4294967299),
        },
        "00000005646e616d65000000000000030102030000000004757269320000000100000003",
    );
    ret::<migration::DomainMigrateFinish>(
        &mut seen,
        migration::DomainMigrateFinishRet { ddom: dom() },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007",
    );
    args::<domain::DomainBlockPeek>(
        &mut seen,
        domain::DomainBlockPeekArgs {
            dom: dom(),
            path: "path1".into(),
            offset: 4294967298,
            size: 4099,
            flags: 4100,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700000005706174683100000000000001000000020000100300001004",
    );
    ret::<domain::DomainBlockPeek>(
        &mut seen,
        domain::DomainBlockPeekRet {
            buffer: Bytes::from_static(b"\x01\x02\x03"),
        },
        "0000000301020300",
    );
    args::<domain::DomainMemoryPeek>(
        &mut seen,
        domain::DomainMemoryPeekArgs {
            dom: dom(),
            offset: 4294967297,
            size: 4098,
            flags: 4099,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700000001000000010000100200001003",
    );
    ret::<domain::DomainMemoryPeek>(
        &mut seen,
        domain::DomainMemoryPeekRet {
            buffer: Bytes::from_static(b"\x01\x02\x03"),
        },
        "0000000301020300",
    );
    ret::<connect::ConnectDomainEventRegister>(
        &mut seen,
        connect::ConnectDomainEventRegisterRet { cb_registered: -1 },
        "ffffffff",
    );
    ret::<connect::ConnectDomainEventDeregister>(
        &mut seen,
        connect::ConnectDomainEventRegisterRet { cb_registered: -1 },
        "ffffffff",
    );
    args::<migration::DomainMigratePrepare2>(
        &mut seen,
        migration::DomainMigratePrepare2Args {
            uri_in: Some("uri-in".into()),
            flags: DomainMigrateFlags::from_bits_retain(4294967297),
            dname: Some("dname2".into()),
            bandwidth: 4294967299,
            dom_xml: "dom-xml4".into(),
        },
        "00000001000000067572692d696e000000000001000000010000000100000006646e616d65320000000000010000000300000008646f6d2d786d6c34",
    );
    ret::<migration::DomainMigratePrepare2>(
        &mut seen,
        migration::DomainMigratePrepareRet {
            cookie: Bytes::from_static(b"\x01\x02\x03"),
            uri_out: None,
        },
        "000000030102030000000000",
    );
    args::<migration::DomainMigrateFinish2>(
        &mut seen,
        migration::DomainMigrateFinish2Args {
            dname: "dname".into(),
            cookie: Bytes::from_static(b"\x01\x02\x03"),
            uri: "uri2".into(),
            flags: DomainMigrateFlags::from_bits_retain(4294967299),
            retcode: -5,
        },
        "00000005646e616d65000000000000030102030000000004757269320000000100000003fffffffb",
    );
    ret::<migration::DomainMigrateFinish2>(
        &mut seen,
        migration::DomainMigrateFinishRet { ddom: dom() },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007",
    );
    args::<migration::DomainMigratePrepareTunnel>(
        &mut seen,
        migration::DomainMigratePrepareTunnelArgs {
            flags: DomainMigrateFlags::from_bits_retain(4294967296),
            dname: None,
            bandwidth: 4294967298,
            dom_xml: "dom-xml3".into(),
        },
        "000000010000000000000000000000010000000200000008646f6d2d786d6c33",
    );
    args::<migration::DomainMigrateSetMaxDowntime>(
        &mut seen,
        migration::DomainMigrateSetMaxDowntimeArgs {
            dom: dom(),
            downtime: 4294967297,
            flags: 4098,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007000000010000000100001002",
    );
    args::<connect::ConnectDomainEventRegisterAny>(
        &mut seen,
        connect::ConnectDomainEventRegisterAnyArgs { event_id: -1 },
        "ffffffff",
    );
    args::<connect::ConnectDomainEventDeregisterAny>(
        &mut seen,
        connect::ConnectDomainEventRegisterAnyArgs { event_id: -1 },
        "ffffffff",
    );
    args::<migration::DomainMigrateSetMaxSpeed>(
        &mut seen,
        migration::DomainMigrateSetMaxSpeedArgs {
            dom: dom(),
            bandwidth: 4294967297,
            flags: 4098,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007000000010000000100001002",
    );
    args::<migration::DomainMigrateBegin3>(
        &mut seen,
        migration::DomainMigrateBegin3Args {
            dom: dom(),
            xmlin: None,
            flags: DomainMigrateFlags::from_bits_retain(4294967298),
            dname: None,
            bandwidth: 4294967300,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007000000000000000100000002000000000000000100000004",
    );
    ret::<migration::DomainMigrateBegin3>(
        &mut seen,
        migration::DomainMigrateBegin3Ret {
            cookie_out: Bytes::from_static(b"\x01\x02\x03"),
            xml: "xml1".into(),
        },
        "000000030102030000000004786d6c31",
    );
    args::<migration::DomainMigratePrepare3>(
        &mut seen,
        migration::DomainMigratePrepare3Args {
            cookie_in: Bytes::from_static(b"\x01\x02\x03"),
            uri_in: None,
            flags: DomainMigrateFlags::from_bits_retain(4294967298),
            dname: None,
            bandwidth: 4294967300,
            dom_xml: "dom-xml5".into(),
        },
        "000000030102030000000000000000010000000200000000000000010000000400000008646f6d2d786d6c35",
    );
    ret::<migration::DomainMigratePrepare3>(
        &mut seen,
        migration::DomainMigratePrepare3Ret {
            cookie_out: Bytes::from_static(b"\x01\x02\x03"),
            uri_out: None,
        },
        "000000030102030000000000",
    );
    args::<migration::DomainMigratePrepareTunnel3>(
        &mut seen,
        migration::DomainMigratePrepareTunnel3Args {
            cookie_in: Bytes::from_static(b"\x01\x02\x03"),
            flags: DomainMigrateFlags::from_bits_retain(4294967297),
            dname: Some("dname2".into()),
            bandwidth: 4294967299,
            dom_xml: "dom-xml4".into(),
        },
        "000000030102030000000001000000010000000100000006646e616d65320000000000010000000300000008646f6d2d786d6c34",
    );
    ret::<migration::DomainMigratePrepareTunnel3>(
        &mut seen,
        migration::DomainMigrateCookieRet {
            cookie_out: Bytes::from_static(b"\x01\x02\x03"),
        },
        "0000000301020300",
    );
    args::<migration::DomainMigratePerform3>(
        &mut seen,
        migration::DomainMigratePerform3Args {
            dom: dom(),
            xmlin: None,
            cookie_in: Bytes::from_static(b"\x01\x02\x03"),
            dconnuri: None,
            uri: Some("uri4".into()),
            flags: DomainMigrateFlags::from_bits_retain(4294967301),
            dname: Some("dname6".into()),
            bandwidth: 4294967303,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f000000070000000000000003010203000000000000000001000000047572693400000001000000050000000100000006646e616d653600000000000100000007",
    );
    ret::<migration::DomainMigratePerform3>(
        &mut seen,
        migration::DomainMigrateCookieRet {
            cookie_out: Bytes::from_static(b"\x01\x02\x03"),
        },
        "0000000301020300",
    );
    args::<migration::DomainMigrateFinish3>(
        &mut seen,
        migration::DomainMigrateFinish3Args {
            dname: "dname".into(),
            cookie_in: Bytes::from_static(b"\x01\x02\x03"),
            dconnuri: Some("dconnuri2".into()),
            uri: None,
            flags: DomainMigrateFlags::from_bits_retain(4294967300),
            cancelled: -6,
        },
        "00000005646e616d650000000000000301020300000000010000000964636f6e6e75726932000000000000000000000100000004fffffffa",
    );
    ret::<migration::DomainMigrateFinish3>(
        &mut seen,
        migration::DomainMigrateFinish3Ret {
            dom: dom(),
            cookie_out: Bytes::from_static(b"\x01\x02\x03"),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f000000070000000301020300",
    );
    args::<migration::DomainMigrateConfirm3>(
        &mut seen,
        migration::DomainMigrateConfirm3Args {
            dom: dom(),
            cookie_in: Bytes::from_static(b"\x01\x02\x03"),
            flags: DomainMigrateFlags::from_bits_retain(4294967298),
            cancelled: -4,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700000003010203000000000100000002fffffffc",
    );
    args::<domain_tune::DomainGetVcpuPinInfo>(
        &mut seen,
        domain_tune::DomainGetVcpuPinInfoArgs {
            dom: dom(),
            ncpumaps: -2,
            maplen: -3,
            flags: DomainModificationImpact::from_bits_retain(4099),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007fffffffefffffffd00001003",
    );
    ret::<domain_tune::DomainGetVcpuPinInfo>(
        &mut seen,
        domain_tune::DomainGetVcpuPinInfoRet {
            cpumaps: Bytes::from_static(b"\x01\x02\x03"),
            num: -2,
        },
        "0000000301020300fffffffe",
    );
    args::<migration::DomainMigrateGetMaxSpeed>(
        &mut seen,
        domain::DomainFlagsArgs {
            dom: dom(),
            flags: 4097,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700001001",
    );
    ret::<migration::DomainMigrateGetMaxSpeed>(
        &mut seen,
        migration::DomainMigrateGetMaxSpeedRet {
            bandwidth: 4294967296,
        },
        "0000000100000000",
    );
    args::<domain::DomainBlockStatsFlags>(
        &mut seen,
        domain::DomainBlockStatsFlagsArgs {
            dom: dom(),
            path: "path1".into(),
            nparams: -3,
            flags: 4099.into(),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007000000057061746831000000fffffffd00001003",
    );
    ret::<domain::DomainBlockStatsFlags>(
        &mut seen,
        domain::DomainBlockStatsFlagsRet {
            params: vec![
                tp("p4", TypedParamValue::Double(2.5)),
                tp("p5", TypedParamValue::Boolean(true)),
            ],
            nparams: -2,
        },
        "00000002000000027034000000000005400400000000000000000002703500000000000600000001fffffffe",
    );
    args::<snapshot::DomainSnapshotListChildrenNames>(
        &mut seen,
        snapshot::DomainSnapshotListChildrenNamesArgs {
            snap: snap(),
            maxnames: -2,
            flags: DomainSnapshotListFlags::from_bits_retain(4098),
        },
        "00000004736e617000000003646f6d00000102030405060708090a0b0c0d0e0f00000007fffffffe00001002",
    );
    ret::<snapshot::DomainSnapshotListChildrenNames>(
        &mut seen,
        snapshot::SnapshotNamesRet {
            names: vec!["names".into(), "names1".into()],
        },
        "00000002000000056e616d6573000000000000066e616d6573310000",
    );
    args::<domain_tune::DomainSetBlockIoTune>(
        &mut seen,
        domain_tune::DomainSetBlockIoTuneArgs {
            dom: dom(),
            disk: "disk1".into(),
            params: vec![
                tp("p6", TypedParamValue::String("v6".into())),
                tp("p7", TypedParamValue::Int(-8)),
            ],
            flags: DomainModificationImpact::from_bits_retain(4099),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007000000056469736b31000000000000020000000270360000000000070000000276360000000000027037000000000001fffffff800001003",
    );
    args::<domain_tune::DomainGetBlockIoTune>(
        &mut seen,
        domain_tune::DomainGetBlockIoTuneArgs {
            dom: dom(),
            disk: None,
            nparams: -3,
            flags: 4099.into(),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700000000fffffffd00001003",
    );
    ret::<domain_tune::DomainGetBlockIoTune>(
        &mut seen,
        domain_tune::DomainGetBlockIoTuneRet {
            params: vec![
                tp("p8", TypedParamValue::UInt(4000000008)),
                tp("p9", TypedParamValue::LLong(-1099511627785)),
            ],
            nparams: -2,
        },
        "00000002000000027038000000000002ee6b2808000000027039000000000003fffffefffffffff7fffffffe",
    );
    args::<domain_tune::DomainSetNumaParameters>(
        &mut seen,
        domain_tune::DomainSetNumaParametersArgs {
            dom: dom(),
            params: vec![
                tp("p10", TypedParamValue::ULLong(9223372036854775818)),
                tp("p11", TypedParamValue::Double(2.5)),
            ],
            flags: DomainModificationImpact::from_bits_retain(4098),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700000002000000037031300000000004800000000000000a000000037031310000000005400400000000000000001002",
    );
    args::<domain_tune::DomainGetNumaParameters>(
        &mut seen,
        domain::DomainGetParamsArgs {
            dom: dom(),
            nparams: -2,
            flags: 4098.into(),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007fffffffe00001002",
    );
    ret::<domain_tune::DomainGetNumaParameters>(
        &mut seen,
        domain_tune::DomainGetNumaParametersRet {
            params: vec![
                tp("p12", TypedParamValue::Boolean(true)),
                tp("p13", TypedParamValue::String("v13".into())),
            ],
            nparams: -2,
        },
        "00000002000000037031320000000006000000010000000370313300000000070000000376313300fffffffe",
    );
    args::<domain_tune::DomainSetInterfaceParameters>(
        &mut seen,
        domain_tune::DomainSetInterfaceParametersArgs {
            dom: dom(),
            device: "device1".into(),
            params: vec![
                tp("p14", TypedParamValue::Int(-15)),
                tp("p15", TypedParamValue::UInt(4000000015)),
            ],
            flags: DomainModificationImpact::from_bits_retain(4099),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700000007646576696365310000000002000000037031340000000001fffffff1000000037031350000000002ee6b280f00001003",
    );
    args::<domain_tune::DomainGetInterfaceParameters>(
        &mut seen,
        domain_tune::DomainGetInterfaceParametersArgs {
            dom: dom(),
            device: "device1".into(),
            nparams: -3,
            flags: 4099.into(),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007000000076465766963653100fffffffd00001003",
    );
    ret::<domain_tune::DomainGetInterfaceParameters>(
        &mut seen,
        domain_tune::DomainGetInterfaceParametersRet {
            params: vec![
                tp("p16", TypedParamValue::LLong(-1099511627792)),
                tp("p17", TypedParamValue::ULLong(9223372036854775825)),
            ],
            nparams: -2,
        },
        "00000002000000037031360000000003fffffefffffffff00000000370313700000000048000000000000011fffffffe",
    );
    args::<domain::DomainGetCpuStats>(
        &mut seen,
        domain::DomainGetCpuStatsArgs {
            dom: dom(),
            nparams: 4097,
            start_cpu: -3,
            ncpus: 4099,
            flags: 4100.into(),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700001001fffffffd0000100300001004",
    );
    ret::<domain::DomainGetCpuStats>(
        &mut seen,
        domain::DomainGetCpuStatsRet {
            params: vec![
                tp("p18", TypedParamValue::Double(2.5)),
                tp("p19", TypedParamValue::Boolean(true)),
            ],
            nparams: -2,
        },
        "00000002000000037031380000000005400400000000000000000003703139000000000600000001fffffffe",
    );
    args::<domain::DomainGetSecurityLabelList>(
        &mut seen,
        domain::DomainArgs { dom: dom() },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007",
    );
    ret::<domain::DomainGetSecurityLabelList>(
        &mut seen,
        domain::DomainGetSecurityLabelListRet {
            labels: vec![domain::DomainGetSecurityLabelRet {
                label: CharVec(b"label".to_vec()),
                enforcing: -2,
            }],
            ret: -2,
        },
        "00000001000000050000006c0000006100000062000000650000006cfffffffefffffffe",
    );
    args::<domain_tune::DomainPinEmulator>(
        &mut seen,
        domain_tune::DomainPinEmulatorArgs {
            dom: dom(),
            cpumap: Bytes::from_static(b"\x01\x02\x03"),
            flags: DomainModificationImpact::from_bits_retain(4098),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007000000030102030000001002",
    );
    args::<domain_tune::DomainGetEmulatorPinInfo>(
        &mut seen,
        domain_tune::DomainGetEmulatorPinInfoArgs {
            dom: dom(),
            maplen: -2,
            flags: DomainModificationImpact::from_bits_retain(4098),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007fffffffe00001002",
    );
    ret::<domain_tune::DomainGetEmulatorPinInfo>(
        &mut seen,
        domain_tune::DomainGetEmulatorPinInfoRet {
            cpumaps: Bytes::from_static(b"\x01\x02\x03"),
            ret: -2,
        },
        "0000000301020300fffffffe",
    );
    args::<migration::DomainMigrateGetCompressionCache>(
        &mut seen,
        domain::DomainFlagsArgs {
            dom: dom(),
            flags: 4097,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700001001",
    );
    ret::<migration::DomainMigrateGetCompressionCache>(
        &mut seen,
        migration::DomainMigrateGetCompressionCacheRet {
            cache_size: 4294967296,
        },
        "0000000100000000",
    );
    args::<migration::DomainMigrateSetCompressionCache>(
        &mut seen,
        migration::DomainMigrateSetCompressionCacheArgs {
            dom: dom(),
            cache_size: 4294967297,
            flags: 4098,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007000000010000000100001002",
    );
    args::<migration::DomainMigrateBegin3Params>(
        &mut seen,
        migration::DomainMigrateBegin3ParamsArgs {
            dom: dom(),
            params: vec![
                tp("p20", TypedParamValue::String("v20".into())),
                tp("p21", TypedParamValue::Int(-22)),
            ],
            flags: DomainMigrateFlags::from_bits_retain(4098),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007000000020000000370323000000000070000000376323000000000037032310000000001ffffffea00001002",
    );
    ret::<migration::DomainMigrateBegin3Params>(
        &mut seen,
        migration::DomainMigrateBegin3Ret {
            cookie_out: Bytes::from_static(b"\x01\x02\x03"),
            xml: "xml1".into(),
        },
        "000000030102030000000004786d6c31",
    );
    args::<migration::DomainMigratePrepare3Params>(
        &mut seen,
        migration::DomainMigratePrepare3ParamsArgs {
            params: vec![
                tp("p22", TypedParamValue::UInt(4000000022)),
                tp("p23", TypedParamValue::LLong(-1099511627799)),
            ],
            cookie_in: Bytes::from_static(b"\x01\x02\x03"),
            flags: DomainMigrateFlags::from_bits_retain(4098),
        },
        "00000002000000037032320000000002ee6b2816000000037032330000000003fffffeffffffffe9000000030102030000001002",
    );
    ret::<migration::DomainMigratePrepare3Params>(
        &mut seen,
        migration::DomainMigratePrepare3Ret {
            cookie_out: Bytes::from_static(b"\x01\x02\x03"),
            uri_out: None,
        },
        "000000030102030000000000",
    );
    args::<migration::DomainMigratePrepareTunnel3Params>(
        &mut seen,
        migration::DomainMigratePrepare3ParamsArgs {
            params: vec![
                tp("p24", TypedParamValue::ULLong(9223372036854775832)),
                tp("p25", TypedParamValue::Double(2.5)),
            ],
            cookie_in: Bytes::from_static(b"\x01\x02\x03"),
            flags: DomainMigrateFlags::from_bits_retain(4098),
        },
        "0000000200000003703234000000000480000000000000180000000370323500000000054004000000000000000000030102030000001002",
    );
    ret::<migration::DomainMigratePrepareTunnel3Params>(
        &mut seen,
        migration::DomainMigrateCookieRet {
            cookie_out: Bytes::from_static(b"\x01\x02\x03"),
        },
        "0000000301020300",
    );
    args::<migration::DomainMigratePerform3Params>(
        &mut seen,
        migration::DomainMigratePerform3ParamsArgs {
            dom: dom(),
            dconnuri: None,
            params: vec![
                tp("p26", TypedParamValue::Boolean(true)),
                tp("p27", TypedParamValue::String("v27".into())),
            ],
            cookie_in: Bytes::from_static(b"\x01\x02\x03"),
            flags: DomainMigrateFlags::from_bits_retain(4100),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f000000070000000000000002000000037032360000000006000000010000000370323700000000070000000376323700000000030102030000001004",
    );
    ret::<migration::DomainMigratePerform3Params>(
        &mut seen,
        migration::DomainMigrateCookieRet {
            cookie_out: Bytes::from_static(b"\x01\x02\x03"),
        },
        "0000000301020300",
    );
    args::<migration::DomainMigrateFinish3Params>(
        &mut seen,
        migration::DomainMigrateFinish3ParamsArgs {
            params: vec![
                tp("p28", TypedParamValue::Int(-29)),
                tp("p29", TypedParamValue::UInt(4000000029)),
            ],
            cookie_in: Bytes::from_static(b"\x01\x02\x03"),
            flags: DomainMigrateFlags::from_bits_retain(4098),
            cancelled: -4,
        },
        "00000002000000037032380000000001ffffffe3000000037032390000000002ee6b281d000000030102030000001002fffffffc",
    );
    ret::<migration::DomainMigrateFinish3Params>(
        &mut seen,
        migration::DomainMigrateFinish3Ret {
            dom: dom(),
            cookie_out: Bytes::from_static(b"\x01\x02\x03"),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f000000070000000301020300",
    );
    args::<migration::DomainMigrateConfirm3Params>(
        &mut seen,
        migration::DomainMigrateConfirm3ParamsArgs {
            dom: dom(),
            params: vec![
                tp("p30", TypedParamValue::LLong(-1099511627806)),
                tp("p31", TypedParamValue::ULLong(9223372036854775839)),
            ],
            cookie_in: Bytes::from_static(b"\x01\x02\x03"),
            flags: DomainMigrateFlags::from_bits_retain(4099),
            cancelled: -5,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700000002000000037033300000000003fffffeffffffffe2000000037033310000000004800000000000001f000000030102030000001003fffffffb",
    );
    args::<domain_tune::DomainSetMemoryStatsPeriod>(
        &mut seen,
        domain_tune::DomainSetMemoryStatsPeriodArgs {
            dom: dom(),
            period: -2,
            flags: DomainModificationImpact::from_bits_retain(4098),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007fffffffe00001002",
    );
    args::<domain::DomainCoreDumpWithFormat>(
        &mut seen,
        domain::DomainCoreDumpWithFormatArgs {
            dom: dom(),
            to: "to1".into(),
            dumpformat: 4098,
            flags: 4099,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700000003746f31000000100200001003",
    );
    args::<connect::ConnectGetAllDomainStats>(
        &mut seen,
        connect::ConnectGetAllDomainStatsArgs {
            doms: vec![dom()],
            stats: DomainStatsTypes::from_bits_retain(4097),
            flags: ConnectGetAllDomainStatsFlags::from_bits_retain(4098),
        },
        "0000000100000003646f6d00000102030405060708090a0b0c0d0e0f000000070000100100001002",
    );
    ret::<connect::ConnectGetAllDomainStats>(
        &mut seen,
        connect::ConnectGetAllDomainStatsRet {
            ret_stats: vec![connect::DomainStatsRecord {
                dom: dom(),
                params: vec![
                    tp("p32", TypedParamValue::Double(2.5)),
                    tp("p33", TypedParamValue::Boolean(true)),
                ],
            }],
        },
        "0000000100000003646f6d00000102030405060708090a0b0c0d0e0f0000000700000002000000037033320000000005400400000000000000000003703333000000000600000001",
    );
    args::<domain::DomainBlockCopy>(
        &mut seen,
        domain::DomainBlockCopyArgs {
            dom: dom(),
            path: "path1".into(),
            destxml: "destxml2".into(),
            params: vec![
                tp("p34", TypedParamValue::String("v34".into())),
                tp("p35", TypedParamValue::Int(-36)),
            ],
            flags: 4100,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f000000070000000570617468310000000000000864657374786d6c32000000020000000370333400000000070000000376333400000000037033350000000001ffffffdc00001004",
    );
    args::<node::NodeAllocPages>(
        &mut seen,
        node::NodeAllocPagesArgs {
            page_sizes: vec![4096, 4097],
            page_counts: vec![4294967297, 4294967298],
            start_cell: -3,
            cell_count: 4099,
            flags: 4100,
        },
        "0000000200001000000010010000000200000001000000010000000100000002fffffffd0000100300001004",
    );
    ret::<node::NodeAllocPages>(&mut seen, node::NodeAllocPagesRet { ret: -1 }, "ffffffff");
    args::<domain_tune::DomainGetIoThreadInfo>(
        &mut seen,
        domain::DomainFlagsArgs {
            dom: dom(),
            flags: 4097,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700001001",
    );
    ret::<domain_tune::DomainGetIoThreadInfo>(
        &mut seen,
        domain_tune::DomainGetIoThreadInfoRet {
            info: vec![domain_tune::DomainIoThreadInfo {
                iothread_id: 4096,
                cpumap: Bytes::from_static(b"\x01\x02\x03"),
            }],
            ret: 4097,
        },
        "0000000100001000000000030102030000001001",
    );
    args::<domain_tune::DomainPinIoThread>(
        &mut seen,
        domain_tune::DomainPinIoThreadArgs {
            dom: dom(),
            iothreads_id: 4097,
            cpumap: Bytes::from_static(b"\x01\x02\x03"),
            flags: DomainModificationImpact::from_bits_retain(4099),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700001001000000030102030000001003",
    );
    // Adding and deleting an I/O thread take the same arguments.
    let iothread = || domain_tune::DomainIoThreadIdArgs {
        dom: dom(),
        iothread_id: 4097,
        flags: DomainModificationImpact::from_bits_retain(4098),
    };
    let iothread_hex = "00000003646f6d00000102030405060708090a0b0c0d0e0f000000070000100100001002";
    args::<domain_tune::DomainAddIoThread>(&mut seen, iothread(), iothread_hex);
    args::<domain_tune::DomainDelIoThread>(&mut seen, iothread(), iothread_hex);
    args::<migration::DomainMigrateStartPostCopy>(
        &mut seen,
        domain::DomainFlagsArgs {
            dom: dom(),
            flags: 4097,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700001001",
    );
    args::<domain_tune::DomainGetPerfEvents>(
        &mut seen,
        domain::DomainFlagsArgs {
            dom: dom(),
            flags: 4097,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700001001",
    );
    ret::<domain_tune::DomainGetPerfEvents>(
        &mut seen,
        domain_tune::DomainGetPerfEventsRet {
            params: vec![
                tp("p36", TypedParamValue::UInt(4000000036)),
                tp("p37", TypedParamValue::LLong(-1099511627813)),
            ],
        },
        "00000002000000037033360000000002ee6b2824000000037033370000000003fffffeffffffffdb",
    );
    args::<domain_tune::DomainSetPerfEvents>(
        &mut seen,
        domain_tune::DomainSetPerfEventsArgs {
            dom: dom(),
            params: vec![
                tp("p38", TypedParamValue::ULLong(9223372036854775846)),
                tp("p39", TypedParamValue::Double(2.5)),
            ],
            flags: DomainModificationImpact::from_bits_retain(4098),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007000000020000000370333800000000048000000000000026000000037033390000000005400400000000000000001002",
    );
    args::<migration::DomainMigrateGetMaxDowntime>(
        &mut seen,
        domain::DomainFlagsArgs {
            dom: dom(),
            flags: 4097,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700001001",
    );
    ret::<migration::DomainMigrateGetMaxDowntime>(
        &mut seen,
        migration::DomainMigrateGetMaxDowntimeRet {
            downtime: 4294967296,
        },
        "0000000100000000",
    );
    args::<node::NodeGetSevInfo>(
        &mut seen,
        node::NodeGetSevInfoArgs {
            nparams: -1,
            flags: 4097,
        },
        "ffffffff00001001",
    );
    ret::<node::NodeGetSevInfo>(
        &mut seen,
        node::NodeGetSevInfoRet {
            params: vec![
                tp("p40", TypedParamValue::Boolean(true)),
                tp("p41", TypedParamValue::String("v41".into())),
            ],
            nparams: -2,
        },
        "00000002000000037034300000000006000000010000000370343100000000070000000376343100fffffffe",
    );
    args::<domain_tune::DomainGetLaunchSecurityInfo>(
        &mut seen,
        domain::DomainFlagsArgs {
            dom: dom(),
            flags: 4097,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700001001",
    );
    ret::<domain_tune::DomainGetLaunchSecurityInfo>(
        &mut seen,
        domain_tune::DomainGetLaunchSecurityInfoRet {
            params: vec![
                tp("p42", TypedParamValue::Int(-43)),
                tp("p43", TypedParamValue::UInt(4000000043)),
            ],
        },
        "00000002000000037034320000000001ffffffd5000000037034330000000002ee6b282b",
    );
    args::<domain_tune::DomainSetIoThreadParams>(
        &mut seen,
        domain_tune::DomainSetIoThreadParamsArgs {
            dom: dom(),
            iothread_id: 4097,
            params: vec![
                tp("p44", TypedParamValue::LLong(-1099511627820)),
                tp("p45", TypedParamValue::ULLong(9223372036854775853)),
            ],
            flags: DomainModificationImpact::from_bits_retain(4099),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f000000070000100100000002000000037034340000000003fffffeffffffffd4000000037034350000000004800000000000002d00001003",
    );
    args::<network::NetworkPortGetParameters>(
        &mut seen,
        network::NetworkPortGetParametersArgs {
            port: port(),
            nparams: -2,
            flags: 4098,
        },
        "000000036e657400000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0ffffffffe00001002",
    );
    ret::<network::NetworkPortGetParameters>(
        &mut seen,
        network::NetworkPortGetParametersRet {
            params: vec![
                tp("p46", TypedParamValue::Double(2.5)),
                tp("p47", TypedParamValue::Boolean(true)),
            ],
            nparams: -2,
        },
        "00000002000000037034360000000005400400000000000000000003703437000000000600000001fffffffe",
    );
    args::<network::NetworkPortSetParameters>(
        &mut seen,
        network::NetworkPortSetParametersArgs {
            port: port(),
            params: vec![
                tp("p48", TypedParamValue::String("v48".into())),
                tp("p49", TypedParamValue::Int(-50)),
            ],
            flags: 4098,
        },
        "000000036e657400000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f000000020000000370343800000000070000000376343800000000037034390000000001ffffffce00001002",
    );
    args::<connect::ConnectSetIdentity>(
        &mut seen,
        connect::ConnectSetIdentityArgs {
            params: vec![
                tp("p50", TypedParamValue::UInt(4000000050)),
                tp("p51", TypedParamValue::LLong(-1099511627827)),
            ],
            flags: 4097,
        },
        "00000002000000037035300000000002ee6b2832000000037035310000000003fffffeffffffffcd00001001",
    );
    args::<domain::DomainBackupBegin>(
        &mut seen,
        domain::DomainBackupBeginArgs {
            dom: dom(),
            backup_xml: "backup-xml1".into(),
            checkpoint_xml: Some("checkpoint-xml2".into()),
            flags: 4099,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f000000070000000b6261636b75702d786d6c3100000000010000000f636865636b706f696e742d786d6c320000001003",
    );
    args::<domain::DomainBackupGetXmlDesc>(
        &mut seen,
        domain::DomainFlagsArgs {
            dom: dom(),
            flags: 4097,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700001001",
    );
    ret::<domain::DomainBackupGetXmlDesc>(
        &mut seen,
        common::XmlRet { xml: "xml".into() },
        "00000003786d6c00",
    );
    args::<domain::DomainStartDirtyRateCalc>(
        &mut seen,
        domain::DomainStartDirtyRateCalcArgs {
            dom: dom(),
            seconds: -2,
            flags: 4098,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007fffffffe00001002",
    );
    args::<domain_tune::DomainSetLaunchSecurityState>(
        &mut seen,
        domain_tune::DomainSetLaunchSecurityStateArgs {
            dom: dom(),
            params: vec![
                tp("p52", TypedParamValue::ULLong(9223372036854775860)),
                tp("p53", TypedParamValue::Double(2.5)),
            ],
            flags: 4098,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007000000020000000370353200000000048000000000000034000000037035330000000005400400000000000000001002",
    );
    args::<domain::DomainSaveParams>(
        &mut seen,
        domain::DomainSaveParamsArgs {
            dom: dom(),
            params: vec![
                tp("p54", TypedParamValue::Boolean(true)),
                tp("p55", TypedParamValue::String("v55".into())),
            ],
            flags: DomainSaveRestoreFlags::from_bits_retain(4098),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f000000070000000200000003703534000000000600000001000000037035350000000007000000037635350000001002",
    );
    args::<domain::DomainRestoreParams>(
        &mut seen,
        domain::DomainRestoreParamsArgs {
            params: vec![
                tp("p56", TypedParamValue::Int(-57)),
                tp("p57", TypedParamValue::UInt(4000000057)),
            ],
            flags: DomainSaveRestoreFlags::from_bits_retain(4097),
        },
        "00000002000000037035360000000001ffffffc7000000037035370000000002ee6b283900001001",
    );
    args::<network::NetworkSetMetadata>(
        &mut seen,
        network::NetworkSetMetadataArgs {
            network: net(),
            kind: MetadataType(-2),
            metadata: Some("metadata2".into()),
            key: None,
            uri: Some("uri4".into()),
            flags: NetworkUpdateFlags::from_bits_retain(4101),
        },
        "000000036e657400000102030405060708090a0b0c0d0e0ffffffffe00000001000000096d65746164617461320000000000000000000001000000047572693400001005",
    );
    args::<network::NetworkGetMetadata>(
        &mut seen,
        network::NetworkGetMetadataArgs {
            network: net(),
            kind: MetadataType(-2),
            uri: Some("uri2".into()),
            flags: NetworkUpdateFlags::from_bits_retain(4099),
        },
        "000000036e657400000102030405060708090a0b0c0d0e0ffffffffe00000001000000047572693200001003",
    );
    ret::<network::NetworkGetMetadata>(
        &mut seen,
        network::NetworkGetMetadataRet {
            metadata: "metadata".into(),
        },
        "000000086d65746164617461",
    );
    args::<nodedev::NodeDeviceUpdate>(
        &mut seen,
        nodedev::NodeDeviceUpdateArgs {
            name: "name".into(),
            xml_desc: "xml-desc1".into(),
            flags: 4098,
        },
        "000000046e616d6500000009786d6c2d646573633100000000001002",
    );
    args::<domain::DomainGraphicsReload>(
        &mut seen,
        domain::DomainGraphicsReloadArgs {
            dom: dom(),
            kind: 4097,
            flags: 4098,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f000000070000100100001002",
    );
    args::<domain::DomainGetAutostartOnce>(
        &mut seen,
        domain::DomainArgs { dom: dom() },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007",
    );
    ret::<domain::DomainGetAutostartOnce>(
        &mut seen,
        common::AutostartRet { autostart: -1 },
        "ffffffff",
    );
    args::<domain::DomainSetAutostartOnce>(
        &mut seen,
        domain::DomainSetAutostartArgs {
            dom: dom(),
            autostart: -2,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007fffffffe",
    );
    args::<domain_tune::DomainSetThrottleGroup>(
        &mut seen,
        domain_tune::DomainSetThrottleGroupArgs {
            dom: dom(),
            group: "group1".into(),
            params: vec![
                tp("p58", TypedParamValue::LLong(-1099511627834)),
                tp("p59", TypedParamValue::ULLong(9223372036854775867)),
            ],
            flags: DomainModificationImpact::from_bits_retain(4099),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f000000070000000667726f757031000000000002000000037035380000000003fffffeffffffffc6000000037035390000000004800000000000003b00001003",
    );
    args::<domain_tune::DomainDelThrottleGroup>(
        &mut seen,
        domain_tune::DomainDelThrottleGroupArgs {
            dom: dom(),
            group: None,
            flags: DomainModificationImpact::from_bits_retain(4098),
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f000000070000000000001002",
    );
    args::<domain::DomainAnnounceInterface>(
        &mut seen,
        domain::DomainAnnounceInterfaceArgs {
            dom: dom(),
            device: None,
            params: vec![
                tp("p60", TypedParamValue::Double(2.5)),
                tp("p61", TypedParamValue::Boolean(true)),
            ],
            flags: 4099,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007000000000000000200000003703630000000000540040000000000000000000370363100000000060000000100001003",
    );

    // The calls that pass file descriptors: declared, refused locally until descriptor
    // passing exists, and their payloads still checked against the layouts.
    args::<domain::DomainOpenGraphics>(
        &mut seen,
        domain::DomainOpenGraphicsArgs {
            dom: dom(),
            idx: u32::MAX,
            flags: 1,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007ffffffff00000001",
    );
    args::<domain::DomainCreateXmlWithFiles>(
        &mut seen,
        domain::DomainCreateXmlArgs {
            xml_desc: "<domain/>".into(),
            flags: DomainCreateFlags::from_bits_retain(0xffff_ff01),
        },
        "000000093c646f6d61696e2f3e000000ffffff01",
    );
    ret::<domain::DomainCreateXmlWithFiles>(
        &mut seen,
        domain::DomainRet { dom: dom() },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007",
    );
    args::<domain::DomainCreateWithFiles>(
        &mut seen,
        domain::DomainFlagsArgs {
            dom: dom(),
            flags: DomainCreateFlags::START_PAUSED | DomainCreateFlags::START_AUTODESTROY,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700000003",
    );
    ret::<domain::DomainCreateWithFiles>(
        &mut seen,
        domain::DomainRet { dom: dom() },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007",
    );
    args::<domain::DomainOpenGraphicsFd>(
        &mut seen,
        domain::DomainOpenGraphicsArgs {
            dom: dom(),
            idx: 2,
            flags: 4097,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f000000070000000200001001",
    );
    args::<domain::DomainFdAssociate>(
        &mut seen,
        domain::DomainFdAssociateArgs {
            dom: dom(),
            name: "fdgroup".into(),
            flags: 2,
        },
        "00000003646f6d00000102030405060708090a0b0c0d0e0f0000000700000007666467726f75700000000002",
    );

    let covered: BTreeSet<i32> = COVERED.iter().copied().collect();
    assert_eq!(seen, covered, "rows and the covered list disagree");
    for n in COVERED {
        assert!(
            procs::lookup(REMOTE_PROGRAM, *n).is_some(),
            "{n} is not declared"
        );
    }
}

// ---- the QEMU and LXC programs ------------------------------------------------------------

/// The independent serializer covers only the remote program, so these bytes are derived by
/// hand from `qemu_protocol.x` / `lxc_protocol.x`, one field per chunk: [`DOM`] is
/// `remote_nonnull_domain` (`"dom"`, uuid 00..0f, id 7).
const DOM: &str = "00000003646f6d00000102030405060708090a0b0c0d0e0f00000007";

#[test]
fn qemu_and_lxc_calls_match_their_layouts() {
    use libvirt_remote::proto::procs::{lxc, qemu};
    use libvirt_remote::proto::{LXC_PROGRAM, QEMU_PROGRAM};
    let mut seen = BTreeSet::new();
    let hex = |parts: &[&str]| parts.concat();
    let monitor = qemu::QemuDomainMonitorCommandArgs {
        dom: dom(),
        cmd: "info".into(),
        flags: qemu::QemuMonitorCommandFlags::HMP,
    };
    // cmd "info" (length 4, no padding), flags 1.
    let monitor_hex = hex(&[DOM, "00000004", "696e666f", "00000001"]);
    args::<qemu::QemuDomainMonitorCommand>(&mut seen, monitor.clone(), &monitor_hex);
    // result "ok" (length 2, two bytes of padding).
    ret::<qemu::QemuDomainMonitorCommand>(
        &mut seen,
        qemu::QemuDomainMonitorCommandRet {
            result: "ok".into(),
        },
        "000000026f6b0000",
    );
    // pid_value 4242, flags 0.
    args::<qemu::QemuDomainAttach>(
        &mut seen,
        qemu::QemuDomainAttachArgs {
            pid_value: 4242,
            flags: Default::default(),
        },
        "0000109200000000",
    );
    ret::<qemu::QemuDomainAttach>(&mut seen, domain::DomainRet { dom: dom() }, DOM);
    // cmd "{}", timeout -2 (BLOCK), flags 0.
    args::<qemu::QemuDomainAgentCommand>(
        &mut seen,
        qemu::QemuDomainAgentCommandArgs {
            dom: dom(),
            cmd: "{}".into(),
            timeout: qemu::agent_timeout::BLOCK,
            flags: Default::default(),
        },
        &hex(&[DOM, "000000027b7d0000", "fffffffe", "00000000"]),
    );
    // result: a present optional string, then an absent one.
    ret::<qemu::QemuDomainAgentCommand>(
        &mut seen,
        qemu::QemuDomainAgentCommandRet {
            result: Some("{}".into()),
        },
        "00000001000000027b7d0000",
    );
    check(
        "QemuDomainAgentCommand ret (none)",
        &qemu::QemuDomainAgentCommandRet { result: None },
        "00000000",
    );
    // dom absent, event "STOP" present, flags REGEX | NOCASE.
    args::<qemu::QemuConnectDomainMonitorEventRegister>(
        &mut seen,
        qemu::QemuConnectDomainMonitorEventRegisterArgs {
            dom: None,
            event: Some("STOP".into()),
            flags: QemuMonitorEventRegisterFlags::REGEX | QemuMonitorEventRegisterFlags::NOCASE,
        },
        "00000000000000010000000453544f5000000003",
    );
    ret::<qemu::QemuConnectDomainMonitorEventRegister>(
        &mut seen,
        common::CallbackIdRet { callback_id: 5 },
        "00000005",
    );
    args::<qemu::QemuConnectDomainMonitorEventDeregister>(
        &mut seen,
        common::CallbackIdArgs { callback_id: 5 },
        "00000005",
    );
    args::<qemu::QemuDomainMonitorCommandWithFiles>(&mut seen, monitor, &monitor_hex);
    // LXC: dom, flags 0.
    args::<lxc::LxcDomainOpenNamespace>(
        &mut seen,
        domain::DomainFlagsArgs {
            dom: dom(),
            flags: Default::default(),
        },
        &hex(&[DOM, "00000000"]),
    );

    // Every call of both programs has a row (6 is the QEMU program's event message).
    let qemu_calls: BTreeSet<i32> = qemu::PROCEDURES.iter().map(|p| p.number).collect();
    assert_eq!(qemu_calls, BTreeSet::from([1, 2, 3, 4, 5, 7]));
    assert_eq!(seen, BTreeSet::from([1, 2, 3, 4, 5, 7]));
    assert!(qemu::PROCEDURES.iter().all(|p| p.program == QEMU_PROGRAM));
    assert_eq!(lxc::PROCEDURES[0].program, LXC_PROGRAM);
}

// ---- captured: virsh 9.0 against the private libvirtd 9.0 ---------------------------------

fn packet(hex: &str) -> Frame {
    let mut buf = bytes::BytesMut::from(&unhex(hex)[..]);
    let f = frame::decode(&mut buf).unwrap().expect("complete packet");
    assert!(buf.is_empty(), "one packet per constant");
    f
}

/// virsh's CALL of `P` decodes as `P::Args` and re-encodes to the same bytes; the daemon's
/// REPLY decodes as `P::Ret` (and re-encodes the same), or is the error a daemon lacking the
/// call gives (`NO_SUPPORT`: the test driver does not implement migration tunables or
/// `DomainBlockStatsFlags`, so virsh fell back to `DomainBlockStats`).
fn captured<P: Procedure>(seen: &mut BTreeSet<i32>, call: &str, reply: &str)
where
    P::Args: Decode + PartialEq + Debug,
    P::Ret: Encode + PartialEq + Debug,
{
    let c = packet(call);
    assert_eq!(
        (c.header.program, c.header.procedure, c.header.kind),
        (REMOTE_PROGRAM, P::NUMBER, MessageType::Call),
        "{}",
        P::NAME
    );
    let args: P::Args =
        xdr::from_bytes(c.payload.clone()).unwrap_or_else(|e| panic!("{} args: {e}", P::NAME));
    assert_eq!(
        xdr::to_bytes(&args).unwrap(),
        c.payload,
        "{} args re-encode differently from virsh's",
        P::NAME
    );
    let r = packet(reply);
    assert_eq!(
        (r.header.procedure, r.header.serial, r.header.kind),
        (P::NUMBER, c.header.serial, MessageType::Reply),
        "{}",
        P::NAME
    );
    if r.header.status == MessageStatus::Ok {
        let ret: P::Ret =
            xdr::from_bytes(r.payload.clone()).unwrap_or_else(|e| panic!("{} ret: {e}", P::NAME));
        assert_eq!(
            xdr::to_bytes(&ret).unwrap(),
            r.payload,
            "{} ret re-encodes differently from the daemon's",
            P::NAME
        );
    } else {
        let wire: WireError = xdr::from_bytes(r.payload.clone()).unwrap();
        let e = RemoteError::from(wire);
        assert!(e.is_unsupported(), "{}: {e:?}", P::NAME);
    }
    seen.insert(P::NUMBER);
}

#[test]
fn virsh_calls_and_daemon_replies_are_byte_exact() {
    let mut seen = BTreeSet::new();
    captured::<domain_tune::DomainGetSchedulerParameters>(
        &mut seen,
        DOMAIN_GET_SCHEDULER_PARAMETERS_CALL,
        DOMAIN_GET_SCHEDULER_PARAMETERS_REPLY,
    );
    captured::<domain_tune::DomainGetVcpuPinInfo>(
        &mut seen,
        DOMAIN_GET_VCPU_PIN_INFO_CALL,
        DOMAIN_GET_VCPU_PIN_INFO_REPLY,
    );
    captured::<migration::DomainMigrateGetMaxSpeed>(
        &mut seen,
        DOMAIN_MIGRATE_GET_MAX_SPEED_CALL,
        DOMAIN_MIGRATE_GET_MAX_SPEED_REPLY,
    );
    captured::<domain::DomainBlockStatsFlags>(
        &mut seen,
        DOMAIN_BLOCK_STATS_FLAGS_CALL,
        DOMAIN_BLOCK_STATS_FLAGS_REPLY,
    );
    captured::<domain_tune::DomainGetBlockIoTune>(
        &mut seen,
        DOMAIN_GET_BLOCK_IO_TUNE_0_CALL,
        DOMAIN_GET_BLOCK_IO_TUNE_0_REPLY,
    );
    captured::<domain_tune::DomainGetBlockIoTune>(
        &mut seen,
        DOMAIN_GET_BLOCK_IO_TUNE_1_CALL,
        DOMAIN_GET_BLOCK_IO_TUNE_1_REPLY,
    );
    captured::<domain_tune::DomainGetNumaParameters>(
        &mut seen,
        DOMAIN_GET_NUMA_PARAMETERS_0_CALL,
        DOMAIN_GET_NUMA_PARAMETERS_0_REPLY,
    );
    captured::<domain_tune::DomainGetNumaParameters>(
        &mut seen,
        DOMAIN_GET_NUMA_PARAMETERS_1_CALL,
        DOMAIN_GET_NUMA_PARAMETERS_1_REPLY,
    );
    captured::<domain_tune::DomainGetInterfaceParameters>(
        &mut seen,
        DOMAIN_GET_INTERFACE_PARAMETERS_0_CALL,
        DOMAIN_GET_INTERFACE_PARAMETERS_0_REPLY,
    );
    captured::<domain_tune::DomainGetInterfaceParameters>(
        &mut seen,
        DOMAIN_GET_INTERFACE_PARAMETERS_1_CALL,
        DOMAIN_GET_INTERFACE_PARAMETERS_1_REPLY,
    );
    captured::<domain::DomainGetCpuStats>(
        &mut seen,
        DOMAIN_GET_CPU_STATS_0_CALL,
        DOMAIN_GET_CPU_STATS_0_REPLY,
    );
    captured::<domain::DomainGetCpuStats>(
        &mut seen,
        DOMAIN_GET_CPU_STATS_1_CALL,
        DOMAIN_GET_CPU_STATS_1_REPLY,
    );
    captured::<domain_tune::DomainGetEmulatorPinInfo>(
        &mut seen,
        DOMAIN_GET_EMULATOR_PIN_INFO_CALL,
        DOMAIN_GET_EMULATOR_PIN_INFO_REPLY,
    );
    captured::<migration::DomainMigrateGetCompressionCache>(
        &mut seen,
        DOMAIN_MIGRATE_GET_COMPRESSION_CACHE_CALL,
        DOMAIN_MIGRATE_GET_COMPRESSION_CACHE_REPLY,
    );
    captured::<domain_tune::DomainSetMemoryStatsPeriod>(
        &mut seen,
        DOMAIN_SET_MEMORY_STATS_PERIOD_CALL,
        DOMAIN_SET_MEMORY_STATS_PERIOD_REPLY,
    );
    captured::<connect::ConnectGetAllDomainStats>(
        &mut seen,
        CONNECT_GET_ALL_DOMAIN_STATS_CALL,
        CONNECT_GET_ALL_DOMAIN_STATS_REPLY,
    );
    captured::<domain_tune::DomainGetIoThreadInfo>(
        &mut seen,
        DOMAIN_GET_IO_THREAD_INFO_CALL,
        DOMAIN_GET_IO_THREAD_INFO_REPLY,
    );
    captured::<domain_tune::DomainAddIoThread>(
        &mut seen,
        DOMAIN_ADD_IO_THREAD_CALL,
        DOMAIN_ADD_IO_THREAD_REPLY,
    );
    captured::<domain_tune::DomainDelIoThread>(
        &mut seen,
        DOMAIN_DEL_IO_THREAD_CALL,
        DOMAIN_DEL_IO_THREAD_REPLY,
    );
    captured::<domain_tune::DomainGetPerfEvents>(
        &mut seen,
        DOMAIN_GET_PERF_EVENTS_CALL,
        DOMAIN_GET_PERF_EVENTS_REPLY,
    );
    captured::<migration::DomainMigrateGetMaxDowntime>(
        &mut seen,
        DOMAIN_MIGRATE_GET_MAX_DOWNTIME_CALL,
        DOMAIN_MIGRATE_GET_MAX_DOWNTIME_REPLY,
    );
    assert_eq!(seen.len(), 17, "{seen:?}");
}

// Recorded with `strace -xx` on `virsh -c test+unix:///default?socket=…` (libvirt 9.0) against
// the testbed's private libvirtd and its test driver; one command each of domblkstat,
// vcpupin, emulatorpin, numatune, domiftune, blkdeviotune, cpu-stats --total, perf,
// iothreadinfo, domstats --state, memtune, migrate-getspeed, migrate-getmaxdowntime,
// migrate-compcache, schedinfo, iothreadadd, iothreaddel, dommemstat --period. Only the
// packets of calls declared without an earlier capture are kept.
/// CALL `DomainGetSchedulerParameters` (57) serial 56.
const DOMAIN_GET_SCHEDULER_PARAMETERS_CALL: &str = "0000003c20008086000000010000003900000000000000380000000000000004746573746695eb01f6a4830479aa97f2502e193f0000000100000001";
/// Its REPLY (OK).
const DOMAIN_GET_SCHEDULER_PARAMETERS_REPLY: &str = "00000034200080860000000100000039000000010000003800000000000000010000000677656967687400000000000200000032";
/// CALL `DomainGetVcpuPinInfo` (230) serial 13.
const DOMAIN_GET_VCPU_PIN_INFO_CALL: &str = "000000442000808600000001000000e6000000000000000d0000000000000004746573746695eb01f6a4830479aa97f2502e193f00000001000000020000000100000000";
/// Its REPLY (OK).
const DOMAIN_GET_VCPU_PIN_INFO_REPLY: &str =
    "000000282000808600000001000000e6000000010000000d0000000000000002ffff000000000002";
/// CALL `DomainMigrateGetMaxSpeed` (242) serial 49.
const DOMAIN_MIGRATE_GET_MAX_SPEED_CALL: &str = "0000003c2000808600000001000000f200000000000000310000000000000004746573746695eb01f6a4830479aa97f2502e193f0000000100000000";
/// Its REPLY (ERROR).
const DOMAIN_MIGRATE_GET_MAX_SPEED_REPLY: &str = "000001002000808600000001000000f200000001000000310000000100000003000000140000000100000054746869732066756e6374696f6e206973206e6f7420737570706f727465642062792074686520636f6e6e656374696f6e206472697665723a20766972446f6d61696e4d6967726174654765744d617853706565640000000200000000000000010000003b746869732066756e6374696f6e206973206e6f7420737570706f727465642062792074686520636f6e6e656374696f6e206472697665723a20257300000000010000001b766972446f6d61696e4d6967726174654765744d617853706565640000000000ffffffffffffffff00000000";
/// CALL `DomainBlockStatsFlags` (243) serial 8.
const DOMAIN_BLOCK_STATS_FLAGS_CALL: &str = "000000482000808600000001000000f300000000000000080000000000000004746573746695eb01f6a4830479aa97f2502e193f0000000100000003766461000000000000000004";
/// Its REPLY (ERROR).
const DOMAIN_BLOCK_STATS_FLAGS_REPLY: &str = "000000fc2000808600000001000000f300000001000000080000000100000003000000140000000100000051746869732066756e6374696f6e206973206e6f7420737570706f727465642062792074686520636f6e6e656374696f6e206472697665723a20766972446f6d61696e426c6f636b5374617473466c6167730000000000000200000000000000010000003b746869732066756e6374696f6e206973206e6f7420737570706f727465642062792074686520636f6e6e656374696f6e206472697665723a202573000000000100000018766972446f6d61696e426c6f636b5374617473466c61677300000000ffffffffffffffff00000000";
/// CALL `DomainGetBlockIoTune` (253) serial 29.
const DOMAIN_GET_BLOCK_IO_TUNE_0_CALL: &str = "000000442000808600000001000000fd000000000000001d0000000000000004746573746695eb01f6a4830479aa97f2502e193f00000001000000000000000000000004";
/// Its REPLY (OK).
const DOMAIN_GET_BLOCK_IO_TUNE_0_REPLY: &str =
    "000000242000808600000001000000fd000000010000001d000000000000000000000014";
/// CALL `DomainGetBlockIoTune` (253) serial 31.
const DOMAIN_GET_BLOCK_IO_TUNE_1_CALL: &str = "0000004c2000808600000001000000fd000000000000001f0000000000000004746573746695eb01f6a4830479aa97f2502e193f000000010000000100000003766461000000001400000004";
/// Its REPLY (OK).
const DOMAIN_GET_BLOCK_IO_TUNE_1_REPLY: &str = "000002f82000808600000001000000fd000000010000001f00000000000000140000000f746f74616c5f62797465735f736563000000000400000000000000000000000e726561645f62797465735f73656300000000000400000000000000000000000f77726974655f62797465735f736563000000000400000000000000000000000e746f74616c5f696f70735f73656300000000000400000000000000000000000d726561645f696f70735f7365630000000000000400000000000000000000000e77726974655f696f70735f736563000000000004000000000000000000000013746f74616c5f62797465735f7365635f6d61780000000004000000000000000000000012726561645f62797465735f7365635f6d617800000000000400000000000000000000001377726974655f62797465735f7365635f6d61780000000004000000000000000000000012746f74616c5f696f70735f7365635f6d6178000000000004000000000000000000000011726561645f696f70735f7365635f6d61780000000000000400000000000000000000001277726974655f696f70735f7365635f6d617800000000000400000000000000000000000d73697a655f696f70735f7365630000000000000400000000000000000000000a67726f75705f6e616d65000000000007000000000000001a746f74616c5f62797465735f7365635f6d61785f6c656e677468000000000004000000000000000000000019726561645f62797465735f7365635f6d61785f6c656e6774680000000000000400000000000000000000001a77726974655f62797465735f7365635f6d61785f6c656e677468000000000004000000000000000000000019746f74616c5f696f70735f7365635f6d61785f6c656e67746800000000000004000000000000000000000018726561645f696f70735f7365635f6d61785f6c656e6774680000000400000000000000000000001977726974655f696f70735f7365635f6d61785f6c656e67746800000000000004000000000000000000000000";
/// CALL `DomainGetNumaParameters` (255) serial 19.
const DOMAIN_GET_NUMA_PARAMETERS_0_CALL: &str = "000000402000808600000001000000ff00000000000000130000000000000004746573746695eb01f6a4830479aa97f2502e193f000000010000000000000004";
/// Its REPLY (OK).
const DOMAIN_GET_NUMA_PARAMETERS_0_REPLY: &str =
    "000000242000808600000001000000ff0000000100000013000000000000000000000002";
/// CALL `DomainGetNumaParameters` (255) serial 21.
const DOMAIN_GET_NUMA_PARAMETERS_1_CALL: &str = "000000402000808600000001000000ff00000000000000150000000000000004746573746695eb01f6a4830479aa97f2502e193f000000010000000200000004";
/// Its REPLY (OK).
const DOMAIN_GET_NUMA_PARAMETERS_1_REPLY: &str = "000000542000808600000001000000ff00000001000000150000000000000002000000096e756d615f6d6f646500000000000001000000000000000c6e756d615f6e6f6465736574000000070000000000000000";
/// CALL `DomainGetInterfaceParameters` (257) serial 24.
const DOMAIN_GET_INTERFACE_PARAMETERS_0_CALL: &str = "0000004c20008086000000010000010100000000000000180000000000000004746573746695eb01f6a4830479aa97f2502e193f0000000100000008746573746e6574300000000000000004";
/// Its REPLY (OK).
const DOMAIN_GET_INTERFACE_PARAMETERS_0_REPLY: &str =
    "000000242000808600000001000001010000000100000018000000000000000000000007";
/// CALL `DomainGetInterfaceParameters` (257) serial 26.
const DOMAIN_GET_INTERFACE_PARAMETERS_1_CALL: &str = "0000004c200080860000000100000101000000000000001a0000000000000004746573746695eb01f6a4830479aa97f2502e193f0000000100000008746573746e6574300000000700000004";
/// Its REPLY (OK).
const DOMAIN_GET_INTERFACE_PARAMETERS_1_REPLY: &str = "000000e4200080860000000100000101000000010000001a00000000000000070000000f696e626f756e642e617665726167650000000002000000000000000c696e626f756e642e7065616b00000002000000000000000d696e626f756e642e627572737400000000000002000000000000000d696e626f756e642e666c6f6f720000000000000200000000000000106f7574626f756e642e6176657261676500000002000000000000000d6f7574626f756e642e7065616b00000000000002000000000000000e6f7574626f756e642e62757273740000000000020000000000000000";
/// CALL `DomainGetCpuStats` (262) serial 34.
const DOMAIN_GET_CPU_STATS_0_CALL: &str = "0000004820008086000000010000010600000000000000220000000000000004746573746695eb01f6a4830479aa97f2502e193f0000000100000000ffffffff0000000100000004";
/// Its REPLY (OK).
const DOMAIN_GET_CPU_STATS_0_REPLY: &str =
    "000000242000808600000001000001060000000100000022000000000000000000000003";
/// CALL `DomainGetCpuStats` (262) serial 36.
const DOMAIN_GET_CPU_STATS_1_CALL: &str = "0000004820008086000000010000010600000000000000240000000000000004746573746695eb01f6a4830479aa97f2502e193f0000000100000003ffffffff0000000100000004";
/// Its REPLY (OK).
const DOMAIN_GET_CPU_STATS_1_REPLY: &str = "0000007420008086000000010000010600000001000000240000000000000003000000086370755f74696d65000000040000000b5b13134b00000009757365725f74696d6500000000000004000000014a35b1000000000b73797374656d5f74696d65000000000400000001810bc70000000003";
/// CALL `DomainGetEmulatorPinInfo` (280) serial 16.
const DOMAIN_GET_EMULATOR_PIN_INFO_CALL: &str = "0000004020008086000000010000011800000000000000100000000000000004746573746695eb01f6a4830479aa97f2502e193f000000010000000100000000";
/// Its REPLY (OK).
const DOMAIN_GET_EMULATOR_PIN_INFO_REPLY: &str =
    "0000002820008086000000010000011800000001000000100000000000000001ff00000000000001";
/// CALL `DomainMigrateGetCompressionCache` (299) serial 53.
const DOMAIN_MIGRATE_GET_COMPRESSION_CACHE_CALL: &str = "0000003c20008086000000010000012b00000000000000350000000000000004746573746695eb01f6a4830479aa97f2502e193f0000000100000000";
/// Its REPLY (ERROR).
const DOMAIN_MIGRATE_GET_COMPRESSION_CACHE_REPLY: &str = "0000011020008086000000010000012b0000000100000035000000010000000300000014000000010000005c746869732066756e6374696f6e206973206e6f7420737570706f727465642062792074686520636f6e6e656374696f6e206472697665723a20766972446f6d61696e4d696772617465476574436f6d7072657373696f6e43616368650000000200000000000000010000003b746869732066756e6374696f6e206973206e6f7420737570706f727465642062792074686520636f6e6e656374696f6e206472697665723a202573000000000100000023766972446f6d61696e4d696772617465476574436f6d7072657373696f6e43616368650000000000ffffffffffffffff00000000";
/// CALL `DomainSetMemoryStatsPeriod` (308) serial 78.
const DOMAIN_SET_MEMORY_STATS_PERIOD_CALL: &str = "00000040200080860000000100000134000000000000004e0000000000000004746573746695eb01f6a4830479aa97f2502e193f000000010000000200000001";
/// Its REPLY (OK).
const DOMAIN_SET_MEMORY_STATS_PERIOD_REPLY: &str =
    "0000001c200080860000000100000134000000010000004e00000000";
/// CALL `ConnectGetAllDomainStats` (344) serial 42.
const CONNECT_GET_ALL_DOMAIN_STATS_CALL: &str = "00000044200080860000000100000158000000000000002a000000000000000100000004746573746695eb01f6a4830479aa97f2502e193f000000010000000100000000";
/// Its REPLY (OK).
const CONNECT_GET_ALL_DOMAIN_STATS_REPLY: &str = "00000070200080860000000100000158000000010000002a000000000000000100000004746573746695eb01f6a4830479aa97f2502e193f00000001000000020000000b73746174652e73746174650000000001000000010000000c73746174652e726561736f6e0000000100000000";
/// CALL `DomainGetIoThreadInfo` (351) serial 40.
const DOMAIN_GET_IO_THREAD_INFO_CALL: &str = "0000003c20008086000000010000015f00000000000000280000000000000004746573746695eb01f6a4830479aa97f2502e193f0000000100000000";
/// Its REPLY (OK).
const DOMAIN_GET_IO_THREAD_INFO_REPLY: &str =
    "0000002420008086000000010000015f0000000100000028000000000000000000000000";
/// CALL `DomainAddIoThread` (355) serial 74.
const DOMAIN_ADD_IO_THREAD_CALL: &str = "00000040200080860000000100000163000000000000004a0000000000000004746573746695eb01f6a4830479aa97f2502e193f000000010000000300000000";
/// Its REPLY (OK).
const DOMAIN_ADD_IO_THREAD_REPLY: &str = "0000001c200080860000000100000163000000010000004a00000000";
/// CALL `DomainDelIoThread` (356) serial 76.
const DOMAIN_DEL_IO_THREAD_CALL: &str = "00000040200080860000000100000164000000000000004c0000000000000004746573746695eb01f6a4830479aa97f2502e193f000000010000000300000000";
/// Its REPLY (OK).
const DOMAIN_DEL_IO_THREAD_REPLY: &str = "0000001c200080860000000100000164000000010000004c00000000";
/// CALL `DomainGetPerfEvents` (365) serial 38.
const DOMAIN_GET_PERF_EVENTS_CALL: &str = "0000003c20008086000000010000016d00000000000000260000000000000004746573746695eb01f6a4830479aa97f2502e193f0000000100000000";
/// Its REPLY (OK).
const DOMAIN_GET_PERF_EVENTS_REPLY: &str = "0000025c20008086000000010000016d0000000100000026000000000000001600000003636d74000000000600000000000000046d626d740000000600000000000000046d626d6c00000006000000000000000a6370755f6379636c6573000000000006000000000000000c696e737472756374696f6e7300000006000000000000001063616368655f7265666572656e63657300000006000000000000000c63616368655f6d69737365730000000600000000000000136272616e63685f696e737472756374696f6e730000000006000000000000000d6272616e63685f6d697373657300000000000006000000000000000a6275735f6379636c657300000000000600000000000000177374616c6c65645f6379636c65735f66726f6e74656e64000000000600000000000000167374616c6c65645f6379636c65735f6261636b656e64000000000006000000000000000e7265665f6370755f6379636c657300000000000600000000000000096370755f636c6f636b00000000000006000000000000000a7461736b5f636c6f636b000000000006000000000000000b706167655f6661756c747300000000060000000000000010636f6e746578745f737769746368657300000006000000000000000e6370755f6d6967726174696f6e73000000000006000000000000000f706167655f6661756c74735f6d696e0000000006000000000000000f706167655f6661756c74735f6d616a00000000060000000000000010616c69676e6d656e745f6661756c7473000000060000000000000010656d756c6174696f6e5f6661756c74730000000600000000";
/// CALL `DomainMigrateGetMaxDowntime` (387) serial 51.
const DOMAIN_MIGRATE_GET_MAX_DOWNTIME_CALL: &str = "0000003c20008086000000010000018300000000000000330000000000000004746573746695eb01f6a4830479aa97f2502e193f0000000100000000";
/// Its REPLY (ERROR).
const DOMAIN_MIGRATE_GET_MAX_DOWNTIME_REPLY: &str = "0000010820008086000000010000018300000001000000330000000100000003000000140000000100000057746869732066756e6374696f6e206973206e6f7420737570706f727465642062792074686520636f6e6e656374696f6e206472697665723a20766972446f6d61696e4d6967726174654765744d6178446f776e74696d65000000000200000000000000010000003b746869732066756e6374696f6e206973206e6f7420737570706f727465642062792074686520636f6e6e656374696f6e206472697665723a20257300000000010000001e766972446f6d61696e4d6967726174654765744d6178446f776e74696d65000000000000ffffffffffffffff00000000";
