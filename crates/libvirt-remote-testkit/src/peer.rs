//! A scripted daemon-side peer, built on libvirt-remote's own framing.
//!
//! **This is not libvirtd.** It exists for tests that need states a real daemon cannot be made
//! to produce on demand (a reply for a serial nobody asked for, an error after a finish, a
//! truncated packet, a hole on a non-sparse stream, silence). Tests against a real daemon
//! live beside the scripted ones in libvirt-remote's `tests/` (`client_libvirtd.rs`); anything
//! that can be shown on a real libvirtd is shown there.
//!
//! The peer is sans-io too: feed it the client's bytes with [`Peer::feed`], take the client's
//! packets with [`Peer::recv`], and build answers with the `*_to` helpers (which know the
//! header conventions: replies echo the call's serial, stream packets use the opening call's
//! serial and procedure, events use serial 1, keepalive serial 0).

use bytes::{BufMut, Bytes, BytesMut};

use libvirt_remote::proto::WireError;
use libvirt_remote::proto::types::StreamHole;
use libvirt_remote::proto::{
    KEEPALIVE_PING, KEEPALIVE_PONG, KEEPALIVE_PROGRAM, KEEPALIVE_VERSION, REMOTE_PROGRAM,
    REMOTE_VERSION,
};
use libvirt_remote::wire::frame::{self, Frame, FrameError, Header, MessageStatus, MessageType};
use libvirt_remote::wire::xdr::{self, Encode, Encoder, LvString};

/// The daemon side of a scripted conversation.
#[derive(Debug, Default)]
pub struct Peer {
    rx: BytesMut,
}

impl Peer {
    /// A peer with nothing received.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes the client wrote.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.rx.extend_from_slice(bytes);
    }

    /// The next complete packet from the client.
    pub fn recv(&mut self) -> Result<Option<Frame>, FrameError> {
        frame::decode(&mut self.rx)
    }

    /// Bytes received but not yet framed.
    pub fn pending_bytes(&self) -> usize {
        self.rx.len()
    }
}

fn packet(header: Header, payload: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(frame::MIN_FRAME_LEN + payload.len());
    frame::encode_with(&mut b, &header, |b| b.put_slice(payload)).expect("scripted packet fits");
    b.freeze()
}

fn answer(call: &Header, kind: MessageType, status: MessageStatus) -> Header {
    Header {
        kind,
        status,
        ..*call
    }
}

/// REPLY OK to `call` with an encoded return value.
pub fn reply_to(call: &Header, ret: &impl Encode) -> Bytes {
    let payload = xdr::to_bytes(ret).expect("scripted reply encodes");
    packet(
        answer(call, MessageType::Reply, MessageStatus::Ok),
        &payload,
    )
}

/// REPLY ERROR to `call`.
pub fn reply_error_to(call: &Header, err: &WireError) -> Bytes {
    let payload = xdr::to_bytes(err).expect("scripted error encodes");
    packet(
        answer(call, MessageType::Reply, MessageStatus::Error),
        &payload,
    )
}

/// STREAM CONTINUE data for the stream opened by `call` (empty `data` = EOF).
pub fn stream_data_to(call: &Header, data: &[u8]) -> Bytes {
    packet(
        answer(call, MessageType::Stream, MessageStatus::Continue),
        data,
    )
}

/// `STREAM_HOLE` CONTINUE of `len` bytes.
pub fn stream_hole_to(call: &Header, len: i64) -> Bytes {
    let hole = StreamHole {
        length: len,
        flags: 0,
    };
    let payload = xdr::to_bytes(&hole).expect("a hole encodes");
    packet(
        answer(call, MessageType::StreamHole, MessageStatus::Continue),
        &payload,
    )
}

/// STREAM OK (finish or abort confirmation).
pub fn stream_ok_to(call: &Header) -> Bytes {
    packet(answer(call, MessageType::Stream, MessageStatus::Ok), &[])
}

/// STREAM ERROR with a `remote_error` (server error mid-stream).
pub fn stream_error_to(call: &Header, err: &WireError) -> Bytes {
    let payload = xdr::to_bytes(err).expect("scripted error encodes");
    packet(
        answer(call, MessageType::Stream, MessageStatus::Error),
        &payload,
    )
}

/// A remote-program MESSAGE (event) with serial 1, as libvirtd sends it.
pub fn event(procedure: i32, msg: &impl Encode) -> Bytes {
    let payload = xdr::to_bytes(msg).expect("scripted event encodes");
    message((REMOTE_PROGRAM, REMOTE_VERSION), procedure, 1, &payload)
}

/// A MESSAGE of `program` (number, version): events and keepalive.
fn message(program: (u32, u32), procedure: i32, serial: u32, payload: &[u8]) -> Bytes {
    let (program, version) = program;
    let h = Header {
        program,
        version,
        procedure,
        kind: MessageType::Message,
        serial,
        status: MessageStatus::Ok,
    };
    packet(h, payload)
}

/// A keepalive PING (the daemon asking us).
pub fn ping() -> Bytes {
    keepalive(KEEPALIVE_PING)
}

/// A keepalive PONG (the daemon answering us).
pub fn pong() -> Bytes {
    keepalive(KEEPALIVE_PONG)
}

fn keepalive(procedure: i32) -> Bytes {
    message((KEEPALIVE_PROGRAM, KEEPALIVE_VERSION), procedure, 0, &[])
}

/// A packet with an arbitrary header and payload (for malformed cases).
pub fn raw(header: Header, payload: &[u8]) -> Bytes {
    packet(header, payload)
}

/// The header of a CALL as the client sends it (every program it speaks is at version 1),
/// for answering a call a test did not read off the wire.
pub fn call_header(program: u32, procedure: i32, serial: u32) -> Header {
    Header {
        program,
        version: REMOTE_VERSION,
        procedure,
        kind: MessageType::Call,
        serial,
        status: MessageStatus::Ok,
    }
}

/// Arguments, a return value or an event body already in XDR: encodes as the bytes, padded
/// to four.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Raw(pub Bytes);

impl Encode for Raw {
    fn encode(&self, enc: &mut Encoder) {
        enc.put_fixed_opaque(&self.0);
    }
}

/// A `remote_error` like the daemon's, with `str1 = "%s"` and `str2 = message`.
pub fn error(code: i32, domain: i32, message: &str) -> WireError {
    WireError {
        code,
        domain,
        message: Some(LvString::from(message)),
        level: 2,
        dom: None,
        str1: Some(LvString::from_static("%s")),
        str2: Some(LvString::from(message)),
        str3: None,
        int1: -1,
        int2: -1,
        net: None,
    }
}
