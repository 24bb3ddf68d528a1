//! Seed inputs for `frame_decode` and `xdr_decode`, built from captured libvirtd 9.0
//! conversations (the `*.decoded.txt` captures of the protocol reference) plus packets the
//! captures print only a prefix of, and the packing of many `xdr_decode` inputs into few
//! files. The testkit's `corpus` example writes them to `fuzz/corpus/`.
//!
//! The captures print every packet's header line and up to ~100 bytes of hex. Packets
//! printed whole become seeds as they are; empty-payload packets are rebuilt from their header
//! line; packets cut short are kept only as `frame_decode` partial-input seeds.

use std::collections::HashSet;

use libvirt_remote::proto::WireError;
use libvirt_remote::proto::events::{CallbackMsg, ConnectionClosedMsg, DomainOnly};
use libvirt_remote::proto::procs::connect::ConnectListAllDomainsRet;
use libvirt_remote::proto::procs::domain::{
    DomainGetMemoryParametersRet, DomainInterface, DomainInterfaceAddressesRet, DomainIpAddr,
};
use libvirt_remote::proto::types::{
    NonnullDomain, NonnullStoragePool, NonnullStorageVol, StreamHole, TypedParam, TypedParamValue,
    Uuid,
};
use libvirt_remote::proto::{KEEPALIVE_PROGRAM, LXC_PROGRAM, QEMU_PROGRAM, REMOTE_PROGRAM};
use libvirt_remote::wire::frame::{Header, MessageStatus, MessageType};
use libvirt_remote::wire::xdr::{self, Encode, LvString};

use super::xdr::{Names, Params};
use crate::peer;
use libvirt_remote::proto::names::{ConnectCloseReason, IpAddrType};

/// Whole packets kept per capture and direction as one `frame_decode` stream seed.
const STREAM_SEED_MAX: usize = 16_384;
/// Packets cut short by the capture kept as partial-input seeds.
const PARTIAL_MAX: usize = 24;
/// Largest `xdr_decode` input [`pack`] takes, and its largest output.
pub const PACK_LIMIT: usize = 4096;

/// One packet of a capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// Sent by the client (else by the daemon).
    pub from_client: bool,
    /// The packet's bytes, or the prefix the capture prints.
    pub bytes: Vec<u8>,
    /// `bytes` is the whole packet.
    pub complete: bool,
}

/// One seed input to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seed {
    /// Target directory under `fuzz/corpus/`.
    pub target: &'static str,
    /// File name prefix (the name is `<prefix>-<content hash>`).
    pub prefix: &'static str,
    /// The input.
    pub data: Vec<u8>,
}

fn hex(text: &str) -> Option<Vec<u8>> {
    let text = &text[..text.len() / 2 * 2];
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// The fields of a header line, `#000 len=28 prog=REMOTE vers=1 proc=66(AUTH_LIST)
/// type=CALL serial=0 status=OK payload=0B`: (length, header, payload length).
fn header_line(line: &str) -> Option<(usize, Header, usize)> {
    let mut words = line.split_whitespace();
    let index = words.next()?;
    if !index.starts_with('#') || !index[1..].bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut field = |key: &str| words.next()?.strip_prefix(key)?.strip_prefix('=');
    let len = field("len")?.parse().ok()?;
    let program = match field("prog")? {
        "REMOTE" => REMOTE_PROGRAM,
        "KEEPALIVE" => KEEPALIVE_PROGRAM,
        "QEMU" => QEMU_PROGRAM,
        "LXC" => LXC_PROGRAM,
        _ => return None,
    };
    let version = field("vers")?.parse().ok()?;
    let procedure = field("proc")?.split('(').next()?.parse().ok()?;
    let kind = match field("type")? {
        "CALL" => MessageType::Call,
        "REPLY" => MessageType::Reply,
        "MESSAGE" => MessageType::Message,
        "STREAM" => MessageType::Stream,
        "CALL_WITH_FDS" => MessageType::CallWithFds,
        "REPLY_WITH_FDS" => MessageType::ReplyWithFds,
        "STREAM_HOLE" => MessageType::StreamHole,
        _ => return None,
    };
    let serial = field("serial")?.parse().ok()?;
    let status = match field("status")? {
        "OK" => MessageStatus::Ok,
        "ERROR" => MessageStatus::Error,
        "CONTINUE" => MessageStatus::Continue,
        _ => return None,
    };
    let payload = field("payload")?.strip_suffix('B')?.parse().ok()?;
    let header = Header {
        program,
        version,
        procedure,
        kind,
        serial,
        status,
    };
    Some((len, header, payload))
}

/// Every packet of one capture, in order.
pub fn parse_capture(text: &str) -> Vec<Captured> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut from_client = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with("=====") {
            from_client = line.contains("client->server");
        }
        if let Some((len, header, payload)) = header_line(line.trim()) {
            let next = lines.get(i + 1).map_or("", |l| l.trim());
            if let Some(text) = next.strip_prefix("hdr+payload hex:") {
                let bytes = hex(text.trim()).unwrap_or_default();
                out.push(Captured {
                    from_client,
                    complete: bytes.len() == len,
                    bytes,
                });
                i += 2;
                continue;
            }
            if payload == 0 {
                out.push(Captured {
                    from_client,
                    bytes: peer::raw(header, &[]).to_vec(),
                    complete: true,
                });
            }
        }
        i += 1;
    }
    out
}

/// The same packet but for its serial: one seed is enough.
fn dedupe_key(data: &[u8]) -> Vec<u8> {
    if data.len() >= 28 {
        [&data[..20], &data[24..]].concat()
    } else {
        data.to_vec()
    }
}

/// The seeds of `frame_decode` and `xdr_decode` from `captures` (the texts of the capture
/// files, in name order), the synthesized packets and the framing edge cases.
pub fn seeds_from_captures(captures: &[String]) -> Vec<Seed> {
    let mut seen = HashSet::new();
    let mut whole = Vec::new();
    let mut partial = Vec::new();
    let mut out = Vec::new();
    for text in captures {
        let (mut to_daemon, mut to_client) = (Vec::new(), Vec::new());
        for p in parse_capture(text) {
            if p.complete {
                let stream = if p.from_client {
                    &mut to_daemon
                } else {
                    &mut to_client
                };
                if stream.len() < STREAM_SEED_MAX {
                    stream.extend_from_slice(&p.bytes);
                }
                if seen.insert(dedupe_key(&p.bytes)) {
                    whole.push(p.bytes);
                }
            } else if partial.len() < PARTIAL_MAX {
                partial.push(p.bytes);
            }
        }
        for data in [to_daemon, to_client] {
            if !data.is_empty() {
                out.push(seed("frame_decode", "cap-stream", data));
            }
        }
    }
    for data in whole {
        out.push(seed("frame_decode", "cap", data.clone()));
        out.push(seed("xdr_decode", "cap", data));
    }
    for data in partial {
        out.push(seed("frame_decode", "cap-partial", data));
    }
    for data in synthesized() {
        out.push(seed("xdr_decode", "syn", data.clone()));
        out.push(seed("frame_decode", "syn", data));
    }
    for data in framing_edges() {
        out.push(seed("frame_decode", "edge", data));
    }
    out
}

fn seed(target: &'static str, prefix: &'static str, data: Vec<u8>) -> Seed {
    Seed {
        target,
        prefix,
        data,
    }
}

fn packet(
    procedure: i32,
    kind: MessageType,
    serial: u32,
    status: MessageStatus,
    payload: &impl Encode,
) -> Vec<u8> {
    let header = Header {
        kind,
        status,
        ..peer::call_header(REMOTE_PROGRAM, procedure, serial)
    };
    peer::raw(header, &xdr::to_bytes(payload).expect("seed encodes")).to_vec()
}

fn reply(procedure: i32, serial: u32, ret: &impl Encode) -> Vec<u8> {
    packet(
        procedure,
        MessageType::Reply,
        serial,
        MessageStatus::Ok,
        ret,
    )
}

fn reply_error(procedure: i32, serial: u32, kind: MessageType, err: &WireError) -> Vec<u8> {
    packet(procedure, kind, serial, MessageStatus::Error, err)
}

fn domain(name: &str, uuid: [u8; 16], id: i32) -> NonnullDomain {
    NonnullDomain {
        name: name.into(),
        uuid: Uuid(uuid),
        id,
    }
}

fn param(field: &str, value: TypedParamValue) -> TypedParam {
    TypedParam {
        field: field.into(),
        value,
    }
}

const PROBE_UUID: [u8; 16] = [
    0x9a, 0x92, 0x3c, 0x01, 0x37, 0x80, 0x46, 0x69, 0xa6, 0x9a, 0xeb, 0x8c, 0x3e, 0xff, 0x53, 0x3f,
];
const POOL_UUID: [u8; 16] = [
    0x60, 0xd3, 0x0d, 0x54, 0x70, 0x14, 0x44, 0x7f, 0x86, 0x8e, 0x95, 0x24, 0x69, 0x4a, 0xae, 0x63,
];

/// Whole packets the captures show only a prefix of (long errors, a 100-domain list,
/// interface addresses, typed parameters of every type, events), and one seed per shared
/// type `xdr_decode` checks (type word 7, the procedure word picks the type).
pub fn synthesized() -> Vec<Vec<u8>> {
    let dom = domain("rpc-rpcprobe", PROBE_UUID, -1);
    let with_dom = |mut e: WireError| {
        e.dom = Some(dom.clone());
        e
    };
    let mut out = vec![
        // Error replies as libvirtd sends them (the captures cut them at ~100 bytes).
        reply_error(
            23,
            66,
            MessageType::Reply,
            &peer::error(
                42,
                10,
                "Domain not found: no domain with matching name 'nonexistent-dom'",
            ),
        ),
        reply_error(
            265,
            20,
            MessageType::Reply,
            &with_dom(peer::error(
                80,
                20,
                "metadata not found: Requested metadata element is not present",
            )),
        ),
        reply_error(
            353,
            31,
            MessageType::Reply,
            &peer::error(
                74,
                10,
                "argument unsupported: QEMU guest agent is not configured",
            ),
        ),
        reply_error(
            208,
            10,
            MessageType::Stream,
            &peer::error(38, 18, "cannot write: No space left on device"),
        ),
        reply(
            273,
            10,
            &ConnectListAllDomainsRet {
                domains: (0..100u8)
                    .map(|i| {
                        let id = if i % 2 == 1 { i32::from(i) } else { -1 };
                        domain(&format!("vm-{i:03}"), [i; 16], id)
                    })
                    .collect(),
                ret: 100,
            },
        ),
    ];
    let addr = |kind, addr: &str, prefix| DomainIpAddr {
        kind,
        addr: addr.into(),
        prefix,
    };
    out.push(reply(
        353,
        27,
        &DomainInterfaceAddressesRet {
            ifaces: vec![
                DomainInterface {
                    name: "vnet0".into(),
                    hwaddr: Some("52:54:00:aa:bb:cc".into()),
                    addrs: vec![
                        addr(IpAddrType::IPV4, "192.168.122.10", 24),
                        addr(IpAddrType::IPV6, "fe80::5054:ff:feaa:bbcc", 64),
                    ],
                },
                DomainInterface {
                    name: "lo".into(),
                    hwaddr: None,
                    addrs: vec![addr(IpAddrType::IPV4, "127.0.0.1", 8)],
                },
            ],
        },
    ));
    let params = vec![
        param("hard_limit", TypedParamValue::ULLong(1 << 40)),
        param("i", TypedParamValue::Int(-3)),
        param("u", TypedParamValue::UInt(7)),
        param(
            "ll",
            TypedParamValue::LLong((1u64 << 63).wrapping_add(5) as i64),
        ),
        param("d", TypedParamValue::Double(1.5)),
        param("b", TypedParamValue::Boolean(true)),
        param("s", TypedParamValue::String("text".into())),
    ];
    out.push(reply(
        198,
        5,
        &DomainGetMemoryParametersRet {
            nparams: params.len() as i32,
            params,
        },
    ));
    let event = |procedure, msg: &[u8]| packet_bytes(procedure, MessageType::Message, 1, msg);
    out.push(event(
        319,
        &encode(&CallbackMsg {
            callback_id: 3,
            body: DomainOnly { dom: dom.clone() },
        }),
    ));
    out.push(event(
        362,
        &encode(&ConnectionClosedMsg {
            reason: ConnectCloseReason::EOF,
        }),
    ));
    // Shared types: the procedure word is the index into `xdr`'s list of them.
    let shared: [(i32, Vec<u8>); 13] = [
        (
            0,
            encode(&with_dom(peer::error(
                1,
                7,
                "internal error: wrong nlmsg len",
            ))),
        ),
        (
            1,
            encode(&param("cpu_shares", TypedParamValue::ULLong(1024))),
        ),
        (
            2,
            encode(&Params {
                params: vec![
                    param("a", TypedParamValue::Boolean(true)),
                    param("b", TypedParamValue::String("x".into())),
                ],
            }),
        ),
        (3, encode(&dom)),
        (
            5,
            encode(&NonnullStoragePool {
                name: "probe".into(),
                uuid: Uuid(POOL_UUID),
            }),
        ),
        (
            6,
            encode(&NonnullStorageVol {
                pool: "probe".into(),
                name: "rpc-rpcprobe2.raw".into(),
                key: "/srv/pool/rpc-rpcprobe2.raw".into(),
            }),
        ),
        (13, encode(&LvString::from("qemu:///system"))),
        (14, encode(&Some(LvString::from("x")))),
        (15, encode(&Some(dom.clone()))),
        (
            16,
            encode(&Names {
                names: vec!["a".into(), "bb".into(), "ccc".into()],
                opt: Some("d".into()),
            }),
        ),
        (
            20,
            encode(&StreamHole {
                length: 2 << 20,
                flags: 0,
            }),
        ),
        (24, encode(&f64::NAN)),
        (25, encode(b"abcde")),
    ];
    for (index, payload) in shared {
        out.push(shared_type(index, &payload));
    }
    out
}

fn encode(v: &(impl Encode + ?Sized)) -> Vec<u8> {
    xdr::to_bytes(v).expect("seed encodes").to_vec()
}

fn packet_bytes(procedure: i32, kind: MessageType, serial: u32, payload: &[u8]) -> Vec<u8> {
    let header = Header {
        kind,
        status: MessageStatus::Ok,
        ..peer::call_header(REMOTE_PROGRAM, procedure, serial)
    };
    peer::raw(header, payload).to_vec()
}

/// A packet whose type word (7) names no message type: `xdr_decode` checks its payload as
/// shared type number `index`.
fn shared_type(index: i32, payload: &[u8]) -> Vec<u8> {
    let mut p = packet_bytes(index, MessageType::Call, 0, payload);
    p[16..20].copy_from_slice(&7u32.to_be_bytes());
    p
}

/// Framing edge cases: a length word below and above the limits, the largest one, an unknown
/// type and status, and a cut length word.
pub fn framing_edges() -> Vec<Vec<u8>> {
    let mut unknown_type = packet_bytes(1, MessageType::Call, 0, &[]);
    unknown_type[16..20].copy_from_slice(&9u32.to_be_bytes());
    let mut unknown_status = packet_bytes(1, MessageType::Reply, 0, &[]);
    unknown_status[24..28].copy_from_slice(&7u32.to_be_bytes());
    vec![
        27u32.to_be_bytes().to_vec(),
        0x0200_0005u32.to_be_bytes().to_vec(),
        0x0200_0004u32.to_be_bytes().to_vec(),
        unknown_type,
        unknown_status,
        vec![0, 0],
    ]
}

/// Pack many single-packet `xdr_decode` inputs (each at most [`PACK_LIMIT`] bytes; longer
/// ones are left out) into few: each input is padded to a header, its length word set to its
/// real length, and the packets, sorted by type and procedure word, fill files of at most
/// [`PACK_LIMIT`] bytes. `xdr_decode` reads them back one by one.
pub fn pack(inputs: impl IntoIterator<Item = Vec<u8>>) -> Vec<Vec<u8>> {
    let mut packets: Vec<Vec<u8>> = inputs
        .into_iter()
        .filter(|d| d.len() <= PACK_LIMIT)
        .map(|mut d| {
            if d.len() < 28 {
                d.resize(28, 0);
            }
            let len = d.len() as u32;
            d[..4].copy_from_slice(&len.to_be_bytes());
            d
        })
        .collect();
    packets
        .sort_by(|a, b| (&a[16..20], &a[12..16], a.len()).cmp(&(&b[16..20], &b[12..16], b.len())));
    let mut files = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    for p in packets {
        if cur.len() + p.len() > PACK_LIMIT {
            files.push(std::mem::take(&mut cur));
        }
        cur.extend_from_slice(&p);
    }
    if !cur.is_empty() {
        files.push(cur);
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lines_parse() {
        let text = "===== client->server: 60 bytes\n\
            #000 len=28 prog=REMOTE vers=1 proc=66(AUTH_LIST) type=CALL serial=0 status=OK payload=0B\n\
            #001 len=32 prog=REMOTE vers=1 proc=60(CONNECT_SUPPORTS_FEATURE) type=CALL serial=1 status=OK payload=4B\n\
            \x20     hdr+payload hex: 0000002020008086000000010000003c0000000000000001000000000000000a\n\
            ===== server->client: 40 bytes\n\
            #000 len=40 prog=REMOTE vers=1 proc=66(AUTH_LIST) type=REPLY serial=0 status=OK payload=12B\n\
            \x20     hdr+payload hex: 0000002820008086000000010000004200000001000000000000000000\n";
        let p = parse_capture(text);
        assert_eq!(p.len(), 3);
        assert!(p[0].from_client && p[0].complete && p[0].bytes.len() == 28);
        assert_eq!(&p[0].bytes[12..16], &66u32.to_be_bytes());
        assert!(p[1].from_client && p[1].complete && p[1].bytes.len() == 32);
        assert!(!p[2].from_client && !p[2].complete && p[2].bytes.len() == 29);
    }

    #[test]
    fn synthesized_seeds_pass_the_checks() {
        for data in synthesized().iter().chain(&framing_edges()) {
            super::super::frame::check(data);
            super::super::xdr::check(data);
        }
    }

    #[test]
    fn packing_keeps_every_packet() {
        let inputs = synthesized();
        let files = pack(inputs.clone());
        assert!(files.iter().all(|f| f.len() <= PACK_LIMIT));
        let total: usize = files.iter().map(Vec::len).sum();
        let want: usize = inputs
            .iter()
            .filter(|d| d.len() <= PACK_LIMIT)
            .map(Vec::len)
            .sum();
        assert_eq!(total, want);
        for f in &files {
            super::super::xdr::check(f);
        }
    }
}
