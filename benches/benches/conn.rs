//! The connection state machine's hot paths: stream data in both directions and a call's
//! round trip, with the scripted peer's packets. Throughput is payload bytes.
//!
//! `cargo bench -p benches --bench conn`
#![allow(
    missing_docs,
    reason = "criterion_group! generates an undocumented pub fn"
)]

use std::hint::black_box;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use libvirt_remote::conn::{Connection, Output, StreamItem};
use libvirt_remote::proto::events::{CallbackMsg, Lifecycle};
use libvirt_remote::proto::names::DomainEventType;
use libvirt_remote::proto::procs::connect::{ConnectGetLibVersion, ConnectGetLibVersionRet};
use libvirt_remote::proto::types::{NonnullDomain, Uuid};
use libvirt_remote::proto::{REMOTE_PROGRAM, StreamDirection};
use libvirt_remote::wire::frame::{Header, STREAM_CHUNK_MAX};
use libvirt_remote_testkit::{Pair, peer};

/// Data packets per iteration (16 × 262,120 B ≈ 4 MiB).
const PACKETS: usize = 16;

/// A connection with one stream open in `dir`; returns it, the stream id and the opening
/// call's header.
fn open(dir: StreamDirection) -> (Pair, u32, Header) {
    let mut p = Pair::no_keepalive();
    let procedure = if dir == StreamDirection::Upload {
        208
    } else {
        209
    };
    let id = p
        .conn
        .open_stream_raw(REMOTE_PROGRAM, procedure, dir, false, &())
        .expect("open");
    let call = p.accept_open(id);
    (p, id, call)
}

/// One `handle_input` of `rx`, the outputs drained and the stream's items taken: the data
/// bytes received.
fn feed(conn: &mut Connection, id: u32, rx: &mut BytesMut, now: Instant) -> usize {
    conn.handle_input(rx, now).expect("data");
    while conn.poll_output().is_some() {}
    let mut got = 0;
    while let Some(item) = conn.stream(id).recv() {
        if let StreamItem::Data(d) = &item {
            got += d.len();
        }
        black_box(item);
    }
    got
}

fn stream_download(c: &mut Criterion) {
    let (Pair { mut conn, now, .. }, id, call) = open(StreamDirection::Download);
    let chunk = vec![0x5a; STREAM_CHUNK_MAX];
    let mut wire = BytesMut::new();
    for _ in 0..PACKETS {
        wire.extend_from_slice(&peer::stream_data_to(&call, &chunk));
    }
    let wire = wire.freeze();
    let mut g = c.benchmark_group("stream");
    g.throughput(Throughput::Bytes((PACKETS * STREAM_CHUNK_MAX) as u64));
    g.measurement_time(std::time::Duration::from_secs(10));
    // The socket read into the buffer is the driver's (setup, untimed); the core then frames,
    // queues and hands out slices of that buffer.
    g.bench_function("download_handle_input_recv_262120", |b| {
        b.iter_batched(
            || BytesMut::from(&wire[..]),
            |mut rx| {
                let mut got = 0;
                while !rx.is_empty() {
                    got += feed(&mut conn, id, &mut rx, now);
                }
                assert_eq!(got, PACKETS * STREAM_CHUNK_MAX);
            },
            BatchSize::LargeInput,
        );
    });
    // The same with the socket read's copy into the receive buffer timed as well: what a
    // driver costs end to end, bounded by one memcpy per byte.
    g.bench_function("download_copy_in_handle_input_recv_262120", |b| {
        b.iter(|| {
            let mut rx = BytesMut::with_capacity(wire.len());
            let mut got = 0;
            for piece in wire.chunks(64 * 1024) {
                rx.extend_from_slice(piece);
                got += feed(&mut conn, id, &mut rx, now);
            }
            assert_eq!(got, PACKETS * STREAM_CHUNK_MAX);
        });
    });
    g.finish();
}

fn stream_upload(c: &mut Criterion) {
    let (Pair { mut conn, .. }, id, _) = open(StreamDirection::Upload);
    let data = Bytes::from(vec![0xa5; PACKETS * STREAM_CHUNK_MAX]);
    let mut g = c.benchmark_group("stream");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.bench_function("upload_send_poll_transmit_262120", |b| {
        b.iter(|| {
            conn.stream(id).send(data.clone()).expect("send");
            let mut n = 0;
            while let Some(t) = conn.poll_transmit() {
                n += t.body.len();
                black_box(t);
            }
            assert_eq!(n, data.len());
        });
    });
    g.finish();
}

fn call_roundtrip(crit: &mut Criterion) {
    let Pair { mut conn, now, .. } = Pair::no_keepalive();
    let ret = ConnectGetLibVersionRet { lib_ver: 9_000_000 };
    let mut rx = BytesMut::new();
    crit.bench_function("call_roundtrip/connect_get_lib_version", |b| {
        b.iter(|| {
            let serial = conn.call::<ConnectGetLibVersion>(&(), None).expect("call");
            let t = conn.poll_transmit().expect("queued");
            let mut h = [0u8; 24];
            h.copy_from_slice(&t.head[4..28]);
            let call = Header::decode(&h).expect("header");
            rx.extend_from_slice(&peer::reply_to(&call, &ret));
            conn.handle_input(&mut rx, now).expect("reply");
            let Some(Output::CallDone {
                serial: s,
                result: Ok(p),
            }) = conn.poll_output()
            else {
                panic!("no reply")
            };
            assert_eq!(s, serial);
            black_box(
                conn.decode_reply::<ConnectGetLibVersion>(s, p)
                    .expect("decodes"),
            );
        });
    });
    let ev = peer::event(
        318,
        &CallbackMsg {
            callback_id: 1,
            body: Lifecycle {
                dom: NonnullDomain {
                    name: "vm".into(),
                    uuid: Uuid([1; 16]),
                    id: 1,
                },
                event: DomainEventType::STOPPED,
                detail: DomainEventType::STOPPED.with_detail(1).detail,
            },
        },
    );
    crit.bench_function("event/handle_input_lifecycle", |b| {
        b.iter(|| {
            rx.extend_from_slice(&ev);
            conn.handle_input(&mut rx, now).expect("event");
            black_box(conn.poll_output().expect("event"));
        });
    });
}

criterion_group!(benches, stream_download, stream_upload, call_roundtrip);
criterion_main!(benches);
