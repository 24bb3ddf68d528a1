//! libvirt packet framing: `u32 len | 24-byte header | payload`.
//!
//! The length word counts itself, so the smallest packet is 28 bytes. A length outside
//! `28..=MAX_FRAME_LEN` is refused from the first four bytes, before any buffer grows.
//! "Need more bytes" is `Ok(None)`, never an error (tokio-util's `Decoder` contract).

use std::fmt;

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// Size of the length word.
pub const LEN_WORD: usize = 4;
/// Size of the serialized header.
pub const HEADER_LEN: usize = 24;
/// `VIR_NET_MESSAGE_MAX`: most bytes of header + payload (32 MiB).
pub const MESSAGE_MAX: usize = 33_554_432;
/// Smallest valid value of the length word.
pub const MIN_FRAME_LEN: usize = LEN_WORD + HEADER_LEN;
/// Largest valid value of the length word.
pub const MAX_FRAME_LEN: usize = LEN_WORD + MESSAGE_MAX;
/// Largest payload of one packet.
pub const PAYLOAD_MAX: usize = MESSAGE_MAX - HEADER_LEN;
/// `VIR_NET_MESSAGE_LEGACY_PAYLOAD_MAX`: the stream chunk size libvirt's own client uses and
/// the daemon sends. Larger packets work but made go-libvirt 2.5× slower; every libvirt
/// version accepts this.
pub const STREAM_CHUNK_MAX: usize = 262_120;

/// Our default upload packet payload: 128 KiB, half of [`STREAM_CHUNK_MAX`]. libvirtd 9.0
/// spends 15–20 % less CPU per uploaded byte with it: at 262,120 bytes its allocator returns
/// and re-faults its heap top on almost every packet (≈ 52 page faults per packet, 1.4
/// `brk` calls), at 128 KiB ≈ 20. The daemon's CPU is what bounds an upload. Measured in
/// docs/decisions.md.
pub const UPLOAD_CHUNK_DEFAULT: usize = 128 << 10;

/// `virNetMessageType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MessageType {
    /// Client → server procedure call.
    Call,
    /// Server → client answer to a call.
    Reply,
    /// Asynchronous message (events, keepalive).
    Message,
    /// Stream data or control.
    Stream,
    /// Call carrying file descriptors (unusable across SSH; never sent by us).
    CallWithFds,
    /// Reply carrying file descriptors.
    ReplyWithFds,
    /// A hole in a sparse stream.
    StreamHole,
}

impl MessageType {
    /// The wire value.
    pub fn to_u32(self) -> u32 {
        match self {
            Self::Call => 0,
            Self::Reply => 1,
            Self::Message => 2,
            Self::Stream => 3,
            Self::CallWithFds => 4,
            Self::ReplyWithFds => 5,
            Self::StreamHole => 6,
        }
    }

    /// Parse a wire value.
    pub fn from_u32(v: u32) -> Option<Self> {
        Some(match v {
            0 => Self::Call,
            1 => Self::Reply,
            2 => Self::Message,
            3 => Self::Stream,
            4 => Self::CallWithFds,
            5 => Self::ReplyWithFds,
            6 => Self::StreamHole,
            _ => return None,
        })
    }
}

/// `virNetMessageStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageStatus {
    /// Success / finish.
    Ok,
    /// Failure; the payload is a `remote_error` (or empty for a client stream abort).
    Error,
    /// Stream data follows.
    Continue,
}

impl MessageStatus {
    /// The wire value.
    pub fn to_u32(self) -> u32 {
        match self {
            Self::Ok => 0,
            Self::Error => 1,
            Self::Continue => 2,
        }
    }

    /// Parse a wire value.
    pub fn from_u32(v: u32) -> Option<Self> {
        Some(match v {
            0 => Self::Ok,
            1 => Self::Error,
            2 => Self::Continue,
            _ => return None,
        })
    }
}

/// `virNetMessageHeader`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header {
    /// Program number (remote, keepalive, qemu, lxc).
    pub program: u32,
    /// Program version (1 for all known programs).
    pub version: u32,
    /// Procedure number within the program.
    pub procedure: i32,
    /// Message type.
    pub kind: MessageType,
    /// Call serial (the opening call's serial for stream packets; meaningless on MESSAGE).
    pub serial: u32,
    /// Status.
    pub status: MessageStatus,
}

impl Header {
    /// Append the 24 header bytes.
    pub fn encode(&self, buf: &mut BytesMut) {
        buf.put_u32(self.program);
        buf.put_u32(self.version);
        buf.put_i32(self.procedure);
        buf.put_u32(self.kind.to_u32());
        buf.put_u32(self.serial);
        buf.put_u32(self.status.to_u32());
    }

    /// Parse 24 header bytes.
    pub fn decode(b: &[u8; HEADER_LEN]) -> Result<Self, FrameError> {
        let mut b = &b[..];
        let program = b.get_u32();
        let version = b.get_u32();
        let procedure = b.get_i32();
        let kind = b.get_u32();
        let serial = b.get_u32();
        let status = b.get_u32();
        Ok(Self {
            program,
            version,
            procedure,
            kind: MessageType::from_u32(kind).ok_or(FrameError::UnknownType(kind))?,
            serial,
            status: MessageStatus::from_u32(status).ok_or(FrameError::UnknownStatus(status))?,
        })
    }
}

/// A decoded packet; the payload is a slice of the receive buffer (no copy).
#[derive(Clone, PartialEq, Eq)]
pub struct Frame {
    /// The header.
    pub header: Header,
    /// The payload (XDR, or raw stream bytes).
    pub payload: Bytes,
}

impl fmt::Debug for Frame {
    // Never print payload bytes: they may be image data or secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Frame")
            .field("header", &self.header)
            .field("payload_len", &self.payload.len())
            .finish()
    }
}

/// Why bytes could not be framed. Every variant is fatal for the connection: the byte
/// stream can no longer be trusted to be in sync.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The length word is below 28 (no room for a header).
    #[error("packet length {0} is shorter than the 28-byte minimum")]
    TooShort(usize),
    /// The length word is above `MAX_FRAME_LEN`.
    #[error("packet length {0} exceeds the maximum {MAX_FRAME_LEN}")]
    TooLong(usize),
    /// A header type outside `virNetMessageType`.
    #[error("unknown message type {0}")]
    UnknownType(u32),
    /// A header status outside `virNetMessageStatus`.
    #[error("unknown message status {0}")]
    UnknownStatus(u32),
    /// An encoded packet would exceed `MAX_FRAME_LEN`.
    #[error("refusing to encode a {0}-byte packet: the limit is {MAX_FRAME_LEN}")]
    EncodeTooLong(usize),
}

/// Peek at the length word of the packet at the front of `buf`, validating it.
/// `Ok(None)`: fewer than 4 bytes buffered.
pub fn peek_len(buf: &[u8]) -> Result<Option<usize>, FrameError> {
    let Some(word) = buf.get(..LEN_WORD) else {
        return Ok(None);
    };
    let len = u32::from_be_bytes(word.try_into().expect("4 bytes")) as usize;
    if len < MIN_FRAME_LEN {
        return Err(FrameError::TooShort(len));
    }
    if len > MAX_FRAME_LEN {
        return Err(FrameError::TooLong(len));
    }
    Ok(Some(len))
}

/// Split one complete packet off the front of `buf`.
///
/// `Ok(None)` means more bytes are needed (see [`bytes_needed`]). The payload shares `buf`'s
/// allocation. Nothing is consumed on error.
pub fn decode(buf: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
    let Some(len) = peek_len(buf)? else {
        return Ok(None);
    };
    if buf.len() < len {
        return Ok(None);
    }
    let header_bytes: &[u8; HEADER_LEN] =
        buf[LEN_WORD..MIN_FRAME_LEN].try_into().expect("24 bytes");
    let header = Header::decode(header_bytes)?;
    let mut packet = buf.split_to(len);
    packet.advance(MIN_FRAME_LEN);
    Ok(Some(Frame {
        header,
        payload: packet.freeze(),
    }))
}

/// How many more bytes the packet at the front of `buf` needs (at least 1 when incomplete,
/// 0 when a whole packet is buffered). Validates the length word like [`decode`].
pub fn bytes_needed(buf: &[u8]) -> Result<usize, FrameError> {
    match peek_len(buf)? {
        None => Ok(LEN_WORD - buf.len()),
        Some(len) => Ok(len.saturating_sub(buf.len())),
    }
}

/// Append a packet with an XDR payload produced by `body`; refuses packets over the limit
/// (the buffer is then left as it was).
pub fn encode_with(
    buf: &mut BytesMut,
    header: &Header,
    body: impl FnOnce(&mut BytesMut),
) -> Result<(), FrameError> {
    let start = buf.len();
    buf.put_u32(0);
    header.encode(buf);
    body(buf);
    let len = buf.len() - start;
    if len > MAX_FRAME_LEN {
        buf.truncate(start);
        return Err(FrameError::EncodeTooLong(len));
    }
    buf[start..start + LEN_WORD].copy_from_slice(&(len as u32).to_be_bytes());
    Ok(())
}

/// The 28 bytes (length word + header) that precede a raw payload of `payload_len` bytes,
/// for sending stream data without copying it.
pub fn encode_head(header: &Header, payload_len: usize) -> Result<Bytes, FrameError> {
    let len = MIN_FRAME_LEN + payload_len;
    if len > MAX_FRAME_LEN {
        return Err(FrameError::EncodeTooLong(len));
    }
    let mut buf = BytesMut::with_capacity(MIN_FRAME_LEN);
    buf.put_u32(len as u32);
    header.encode(&mut buf);
    Ok(buf.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn partial_is_not_an_error() {
        let full = hex("0000001c6b65657000000001000000010000000200000000000000000000");
        let full = &full[..28];
        for cut in 0..full.len() {
            let mut b = BytesMut::from(&full[..cut]);
            assert_eq!(decode(&mut b).unwrap(), None, "cut at {cut}");
            assert_eq!(b.len(), cut, "nothing consumed");
            assert!(bytes_needed(&b).unwrap() > 0);
        }
        let mut b = BytesMut::from(full);
        let f = decode(&mut b).unwrap().unwrap();
        assert_eq!(f.header.program, 0x6b65_6570);
        assert_eq!(f.header.kind, MessageType::Message);
        assert!(f.payload.is_empty() && b.is_empty());
    }

    #[test]
    fn bad_lengths_are_refused_from_the_length_word() {
        let mut b = BytesMut::from(&hex("0000001b")[..]);
        assert_eq!(decode(&mut b), Err(FrameError::TooShort(27)));
        let mut b = BytesMut::from(&hex("02000005")[..]);
        assert_eq!(decode(&mut b), Err(FrameError::TooLong(MAX_FRAME_LEN + 1)));
        let mut b = BytesMut::from(&hex("02000004")[..]);
        assert_eq!(decode(&mut b), Ok(None));
    }

    #[test]
    fn encode_refuses_oversized() {
        let h = Header {
            program: 1,
            version: 1,
            procedure: 1,
            kind: MessageType::Call,
            serial: 0,
            status: MessageStatus::Ok,
        };
        let mut buf = BytesMut::from(&b"keep"[..]);
        let r = encode_with(&mut buf, &h, |b| b.put_bytes(0, PAYLOAD_MAX + 1));
        assert_eq!(r, Err(FrameError::EncodeTooLong(MAX_FRAME_LEN + 1)));
        assert_eq!(&buf[..], b"keep");
        assert!(encode_with(&mut buf, &h, |b| b.put_bytes(0, PAYLOAD_MAX)).is_ok());
        assert_eq!(buf.len(), 4 + MAX_FRAME_LEN);
    }
}
