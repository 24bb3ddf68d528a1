//! XDR and framing costs of libvirt-remote's sans-io core: encoding calls, decoding replies and
//! events. No sockets, no runtime.
//!
//! `cargo bench -p benches --bench codec`
#![allow(
    missing_docs,
    reason = "criterion_group! generates an undocumented pub fn"
)]

use std::hint::black_box;

use bytes::{Bytes, BytesMut};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use libvirt_remote::proto::events::{self, CallbackMsg, Lifecycle};
use libvirt_remote::proto::names::{DomainEventType, IpAddrType};
use libvirt_remote::proto::procs::common::{NameArgs, XmlArgs};
use libvirt_remote::proto::procs::connect::{ConnectGetLibVersionRet, ConnectListAllDomainsRet};
use libvirt_remote::proto::procs::domain::{
    DomainInterface, DomainInterfaceAddressesRet, DomainIpAddr,
};
use libvirt_remote::proto::procs::storage::{StorageVolCreateFlags, StorageVolCreateXmlArgs};
use libvirt_remote::proto::types::{NonnullDomain, NonnullStoragePool, Uuid};
use libvirt_remote::proto::{REMOTE_PROGRAM, REMOTE_VERSION};
use libvirt_remote::wire::frame::{self, Header, MessageStatus, MessageType};
use libvirt_remote::wire::xdr::{self, Encode, Encoder, LvString};

fn header(procedure: i32) -> Header {
    Header {
        program: REMOTE_PROGRAM,
        version: REMOTE_VERSION,
        procedure,
        kind: MessageType::Call,
        serial: 42,
        status: MessageStatus::Ok,
    }
}

/// What `Connection::call` does to its arguments: one packet, length word patched in.
fn encode_call(procedure: i32, args: &impl Encode) -> Bytes {
    let mut buf = BytesMut::with_capacity(64);
    frame::encode_with(&mut buf, &header(procedure), |b| {
        let mut enc = Encoder::new(b);
        args.encode(&mut enc);
        enc.finish().expect("within limits");
    })
    .expect("under the frame limit");
    buf.freeze()
}

/// A domain XML of about `len` bytes.
fn domain_xml(len: usize) -> LvString {
    let mut xml = String::from(
        "<domain type='kvm'>\n  <name>bench</name>\n  <memory unit='MiB'>512</memory>\n",
    );
    while xml.len() + 40 < len {
        xml.push_str("  <!-- padding padding padding -->\n");
    }
    xml.push_str("</domain>\n");
    LvString::from(xml)
}

fn domain(i: usize) -> NonnullDomain {
    NonnullDomain {
        name: LvString::from(format!("vm-{i:04}")),
        uuid: Uuid([i as u8; 16]),
        id: i as i32,
    }
}

fn call_encode(c: &mut Criterion) {
    let mut g = c.benchmark_group("call_encode");
    g.bench_function("connect_get_lib_version", |b| {
        b.iter(|| encode_call(black_box(157), &()));
    });
    let name = NameArgs {
        name: LvString::from("rpc-rpcprobe"),
    };
    g.bench_function("domain_lookup_by_name", |b| {
        b.iter(|| encode_call(23, black_box(&name)));
    });
    let define = XmlArgs {
        xml: domain_xml(4096),
    };
    g.throughput(Throughput::Bytes(define.xml.len() as u64));
    g.bench_function("domain_define_xml_4k", |b| {
        b.iter(|| encode_call(11, black_box(&define)));
    });
    let vol = StorageVolCreateXmlArgs {
        pool: NonnullStoragePool {
            name: "default".into(),
            uuid: Uuid([1; 16]),
        },
        xml: domain_xml(4096),
        flags: StorageVolCreateFlags::empty(),
    };
    g.bench_function("storage_vol_create_xml_4k", |b| {
        b.iter(|| encode_call(93, black_box(&vol)));
    });
    g.finish();
}

fn reply_decode(c: &mut Criterion) {
    let mut g = c.benchmark_group("reply_decode");
    let lib = xdr::to_bytes(&ConnectGetLibVersionRet { lib_ver: 9_000_000 }).expect("encodes");
    g.bench_function("connect_get_lib_version", |b| {
        b.iter(|| {
            xdr::from_bytes::<ConnectGetLibVersionRet>(black_box(lib.clone())).expect("decodes")
        });
    });
    let list = ConnectListAllDomainsRet {
        domains: (0..100).map(domain).collect(),
        ret: 100,
    };
    let list = xdr::to_bytes(&list).expect("encodes");
    g.throughput(Throughput::Bytes(list.len() as u64));
    g.bench_function("connect_list_all_domains_100", |b| {
        b.iter(|| {
            xdr::from_bytes::<ConnectListAllDomainsRet>(black_box(list.clone())).expect("decodes")
        });
    });
    let iface = |n: usize| DomainInterface {
        name: LvString::from(format!("vnet{n}")),
        hwaddr: Some(LvString::from("52:54:00:aa:bb:cc")),
        addrs: vec![
            DomainIpAddr {
                kind: IpAddrType::IPV4,
                addr: LvString::from("192.168.122.10"),
                prefix: 24,
            },
            DomainIpAddr {
                kind: IpAddrType::IPV6,
                addr: LvString::from("fe80::5054:ff:feaa:bbcc"),
                prefix: 64,
            },
        ],
    };
    let addrs = DomainInterfaceAddressesRet {
        ifaces: (0..4).map(iface).collect(),
    };
    let addrs = xdr::to_bytes(&addrs).expect("encodes");
    g.throughput(Throughput::Bytes(addrs.len() as u64));
    g.bench_function("domain_interface_addresses_4x2", |b| {
        b.iter(|| {
            xdr::from_bytes::<DomainInterfaceAddressesRet>(black_box(addrs.clone()))
                .expect("decodes")
        });
    });
    g.finish();
}

fn event_decode(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_decode");
    let msg = CallbackMsg {
        callback_id: 1,
        body: Lifecycle {
            dom: domain(7),
            event: DomainEventType::STOPPED,
            detail: DomainEventType::STOPPED.with_detail(1).detail,
        },
    };
    let payload = xdr::to_bytes(&msg).expect("encodes");
    g.bench_function("domain_lifecycle", |b| {
        b.iter(|| events::decode(black_box(318), black_box(payload.clone())).expect("decodes"));
    });
    g.finish();
}

fn frame_decode(c: &mut Criterion) {
    let mut g = c.benchmark_group("frame_decode");
    // 64 small replies back to back, as a burst of get_lib_version answers.
    let mut wire = BytesMut::new();
    for _ in 0..64 {
        frame::encode_with(&mut wire, &header(157), |b| {
            b.extend_from_slice(&[0, 0, 0, 0, 0, 0x89, 0x54, 0x40]);
        })
        .expect("tiny");
    }
    let wire = wire.freeze();
    g.throughput(Throughput::Elements(64));
    g.bench_function("small_packets_x64", |b| {
        b.iter_batched(
            || BytesMut::from(&wire[..]),
            |mut buf| {
                while let Some(f) = frame::decode(&mut buf).expect("valid") {
                    black_box(f);
                }
            },
            criterion::BatchSize::SmallInput,
        );
    });
    g.finish();
}

criterion_group!(
    benches,
    call_encode,
    reply_decode,
    event_decode,
    frame_decode
);
criterion_main!(benches);
