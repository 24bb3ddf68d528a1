//! Invariants of `wire::frame` on arbitrary bytes: the `frame_decode` fuzz target, and the
//! replay of its corpus under `cargo test`.
//!
//! One-shot: the whole input sits in one buffer and is decoded packet by packet.
//! * consumed + remaining == input length, after every step;
//! * every packet's length word is in `MIN_FRAME_LEN..=MAX_FRAME_LEN`, equals what was
//!   consumed, and header + payload re-encode to exactly the consumed bytes;
//! * the payload is a slice of the receive buffer (no copy);
//! * `Ok(None)` only while fewer bytes than the length word declares (or fewer than 4) are
//!   buffered; it consumes nothing and never grows the buffer (no allocation driven by the
//!   length word), and `bytes_needed` names exactly the missing count;
//! * an error consumes nothing, is repeatable, and agrees with `peek_len`/`bytes_needed`.
//!
//! Incremental: the same bytes fed in small chunks (as a socket would deliver them) give the
//! same packets and the same final outcome.
//!
//! Metered ([`check_with`] and a meter): the whole check holds at most 64 heap bytes per
//! input byte plus 64 KiB at once, so no length word drives an allocation.

use bytes::{BufMut, Bytes, BytesMut};

use super::xdr::Meter;
use libvirt_remote::conn::Connection;
use libvirt_remote::wire::frame::{
    self, FrameError, Header, LEN_WORD, MAX_FRAME_LEN, MIN_FRAME_LEN, MessageStatus, MessageType,
};

/// How decoding a byte string ended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum End {
    /// Stopped for lack of bytes; this many are buffered.
    Partial(usize),
    /// Stopped on a framing error.
    Error(FrameError),
}

/// [`check`], and with a `meter` also that it allocates in proportion to the input.
pub fn check_with(data: &[u8], meter: Option<Meter>) {
    let Some(meter) = meter else {
        return check(data);
    };
    let peak = meter(&mut || check(data));
    let bound = 64 * data.len() + 64 * 1024;
    assert!(
        peak <= bound,
        "{peak} heap bytes live for a {}-byte input",
        data.len()
    );
}

/// Check every invariant on `data`.
pub fn check(data: &[u8]) {
    let (frames, end) = one_shot(data);
    for chunk in [1, 3, 4, 29, 1024] {
        let (f2, e2) = incremental(data, chunk);
        assert_eq!(f2, frames, "chunk size {chunk}: different packets");
        assert_eq!(e2, end, "chunk size {chunk}: different outcome");
    }
}

fn word(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn one_shot(data: &[u8]) -> (Vec<(Header, Bytes)>, End) {
    let mut buf = BytesMut::from(data);
    let base = buf.as_ptr() as usize;
    let mut consumed = 0;
    let mut frames = Vec::new();
    loop {
        assert_eq!(
            consumed + buf.len(),
            data.len(),
            "consumed + remaining == input"
        );
        let before = buf.len();
        let capacity = buf.capacity();
        let peek = frame::peek_len(&buf);
        let needed = frame::bytes_needed(&buf);
        assert_eq!(Connection::bytes_needed(&buf), needed.clone().unwrap_or(0));
        match frame::decode(&mut buf) {
            Ok(Some(f)) => {
                let len = MIN_FRAME_LEN + f.payload.len();
                assert!(
                    (MIN_FRAME_LEN..=MAX_FRAME_LEN).contains(&len),
                    "frame length {len}"
                );
                assert_eq!(before - buf.len(), len, "consumed exactly one packet");
                assert_eq!(word(data, consumed) as usize, len, "length word");
                assert_eq!(peek, Ok(Some(len)));
                assert_eq!(needed, Ok(0), "a complete packet needs nothing more");
                // Zero copy: the payload points into the receive buffer.
                assert_eq!(f.payload.as_ptr() as usize, base + consumed + MIN_FRAME_LEN);
                // Header and payload re-encode to the very bytes consumed.
                let mut re = BytesMut::new();
                frame::encode_with(&mut re, &f.header, |b| b.put_slice(&f.payload))
                    .expect("a decoded packet re-encodes");
                assert_eq!(&re[..], &data[consumed..consumed + len], "packet roundtrip");
                let head = frame::encode_head(&f.header, f.payload.len()).expect("head encodes");
                assert_eq!(&head[..], &data[consumed..consumed + MIN_FRAME_LEN]);
                consumed += len;
                frames.push((f.header, f.payload));
            }
            Ok(None) => {
                assert_eq!(buf.len(), before, "Ok(None) consumes nothing");
                assert_eq!(buf.capacity(), capacity, "Ok(None) never reserves");
                let needed = needed.expect("bytes_needed agrees with decode");
                assert!(needed > 0, "Ok(None) means something is missing");
                match peek {
                    Ok(None) => {
                        assert!(before < LEN_WORD);
                        assert_eq!(needed, LEN_WORD - before);
                    }
                    Ok(Some(len)) => {
                        assert!(before < len, "Ok(None) with a whole packet buffered");
                        assert_eq!(needed, len - before);
                    }
                    Err(e) => panic!("peek_len failed ({e}) but decode asked for more"),
                }
                return (frames, End::Partial(before));
            }
            Err(e) => {
                assert_eq!(buf.len(), before, "an error consumes nothing");
                assert_eq!(buf.capacity(), capacity, "an error never reserves");
                assert_eq!(frame::decode(&mut buf), Err(e.clone()), "errors repeat");
                match &e {
                    FrameError::TooShort(l) => {
                        assert!(*l < MIN_FRAME_LEN);
                        assert_eq!(peek, Err(e.clone()));
                        assert_eq!(needed, Err(e.clone()));
                    }
                    FrameError::TooLong(l) => {
                        assert!(*l > MAX_FRAME_LEN);
                        assert_eq!(peek, Err(e.clone()));
                        assert_eq!(needed, Err(e.clone()));
                    }
                    FrameError::UnknownType(t) => {
                        // Judged only once the whole packet is buffered.
                        assert_eq!(needed, Ok(0));
                        assert!(MessageType::from_u32(*t).is_none());
                        assert_eq!(word(&buf, 16), *t);
                    }
                    FrameError::UnknownStatus(s) => {
                        assert_eq!(needed, Ok(0));
                        assert!(MessageType::from_u32(word(&buf, 16)).is_some());
                        assert!(MessageStatus::from_u32(*s).is_none());
                        assert_eq!(word(&buf, 24), *s);
                    }
                    other => panic!("decode returned an encode-side error: {other}"),
                }
                return (frames, End::Error(e));
            }
        }
    }
}

/// Feed `data` `chunk` bytes at a time, decoding after each, like a socket reader.
fn incremental(data: &[u8], chunk: usize) -> (Vec<(Header, Bytes)>, End) {
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    for piece in data.chunks(chunk).chain(std::iter::once(&[][..])) {
        buf.extend_from_slice(piece);
        loop {
            match frame::decode(&mut buf) {
                Ok(Some(f)) => frames.push((f.header, f.payload)),
                Ok(None) => break,
                Err(e) => return (frames, End::Error(e)),
            }
        }
    }
    let left = buf.len();
    (frames, End::Partial(left))
}
