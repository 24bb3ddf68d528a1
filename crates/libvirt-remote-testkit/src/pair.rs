//! A client connection and a scripted peer joined in memory, with a virtual clock.

use std::time::{Duration, Instant};

use std::io::IoSlice;

use bytes::{Bytes, BytesMut};
use libvirt_remote::conn::{Config, Connection, ConnectionError, Output, WriteTurn};
use libvirt_remote::proto::procs::connect::{ConnectGetLibVersion, ConnectGetLibVersionRet};
use libvirt_remote::wire::frame::{Frame, Header, STREAM_CHUNK_MAX};
use libvirt_remote::wire::xdr;

use crate::peer::{self, Peer};

/// The next output of `conn` is the successful reply to call `serial`: returns its payload,
/// and panics naming what came instead.
pub fn reply_payload(conn: &mut Connection, serial: u32) -> Bytes {
    match conn.poll_output() {
        Some(Output::CallDone {
            serial: s,
            result: Ok(payload),
        }) if s == serial => payload,
        other => panic!("no reply to call {serial}: {other:?}"),
    }
}

/// The sans-io core under test ([`conn`](Self::conn)) and the daemon side ([`peer`](Self::peer)),
/// with nothing in between: what the client queues reaches the peer on [`flush`](Self::flush),
/// what a test [`deliver`](Self::deliver)s reaches the client, and time moves only on
/// [`advance`](Self::advance). Deterministic: no sockets, no sleeps.
#[derive(Debug)]
pub struct Pair {
    /// The client side.
    pub conn: Connection,
    /// The daemon side: frames what the client sends.
    pub peer: Peer,
    /// The virtual clock: the time every `handle_*` call is given.
    pub now: Instant,
    /// Bytes delivered to the client and not yet consumed by `handle_input`.
    pub rx: BytesMut,
    /// Descriptors the last [`transmit`](Self::transmit) carried (closed on arrival).
    pub last_fds: usize,
}

impl Pair {
    /// A fresh connection with `config`, at an arbitrary start time.
    pub fn new(config: Config) -> Self {
        let now = Instant::now();
        Self {
            conn: Connection::new(config, now),
            peer: Peer::new(),
            now,
            rx: BytesMut::new(),
            last_fds: 0,
        }
    }

    /// Default settings without keepalive, so no timer fires unless a test sets one.
    pub fn no_keepalive() -> Self {
        Self::new(Config {
            keepalive: None,
            ..Config::default()
        })
    }

    /// As [`no_keepalive`](Self::no_keepalive), with upload packets the size virsh sends (to
    /// match the captures).
    pub fn virsh_chunks() -> Self {
        Self::new(Config {
            keepalive: None,
            stream_chunk: STREAM_CHUNK_MAX,
            ..Config::default()
        })
    }

    /// Move one transmit from the client to the peer: its size in bytes and the packet it
    /// completes. Panics unless a transmit completes exactly one valid packet (a whole one, or
    /// the rest of one a [`caller_write`](Self::caller_write) began).
    pub fn transmit(&mut self) -> Option<(usize, Frame)> {
        let t = self.conn.poll_transmit()?;
        assert!(!t.is_empty(), "an empty transmit");
        // The descriptors "reach the daemon": dropped (closed) here.
        self.last_fds = t.fds.len();
        self.peer.feed(&t.head);
        self.peer.feed(&t.body);
        let f = self
            .peer
            .recv()
            .expect("client packets frame")
            .expect("a transmit completes a packet (a whole one, or the rest of a begun one)");
        assert_eq!(
            self.peer.pending_bytes(),
            0,
            "a transmit holds more than one packet"
        );
        Some((t.len(), f))
    }

    /// The caller-side write of a lone call, as the client makes it: when the core says it is
    /// the caller's turn ([`Connection::write_turn`]), its queued bytes reach the peer, at most
    /// `max` of them (what a socket took), and the core is told. Returns the packets the peer
    /// completed, or `None` when the turn is the driver's. A packet left half-written is
    /// completed by the next [`transmit`](Self::transmit).
    pub fn caller_write(&mut self, max: usize) -> Option<Vec<Frame>> {
        if self.conn.write_turn() != WriteTurn::Caller {
            return None;
        }
        let mut slices = [IoSlice::new(&[]); 16];
        let n = self.conn.caller_transmit(&mut slices);
        let mut wrote = 0;
        for s in &slices[..n] {
            let k = s.len().min(max - wrote);
            self.peer.feed(&s[..k]);
            wrote += k;
        }
        self.conn.handle_caller_written(wrote);
        self.last_fds = 0;
        Some(std::iter::from_fn(|| self.peer.recv().expect("client packets frame")).collect())
    }

    /// Move everything the client queued to the peer, as a driver writes it, and tell the
    /// core it is all written ([`Connection::handle_written`]); return the client's packets.
    pub fn flush(&mut self) -> Vec<Frame> {
        let frames = std::iter::from_fn(|| self.transmit().map(|(_, f)| f)).collect();
        self.conn.handle_written();
        frames
    }

    /// Bytes from the daemon: append them to the receive buffer and let the client read.
    pub fn deliver(&mut self, bytes: &[u8]) -> Result<(), ConnectionError> {
        self.rx.extend_from_slice(bytes);
        self.conn.handle_input(&mut self.rx, self.now)
    }

    /// Every output the client has queued.
    pub fn outputs(&mut self) -> Vec<Output> {
        std::iter::from_fn(|| self.conn.poll_output()).collect()
    }

    /// Move the clock by `d`; fire the client's timers if one is due.
    pub fn advance(&mut self, d: Duration) {
        self.now += d;
        if self.conn.poll_timeout().is_some_and(|t| t <= self.now) {
            self.conn.handle_timeout(self.now);
        }
    }

    /// Answer the opening call of stream `id` (already queued by `open_stream*`) with REPLY
    /// OK, check the client reports it open, and return the opening call's header (what the
    /// daemon's stream packets echo).
    pub fn accept_open(&mut self, id: u32) -> Header {
        let call = self.flush().pop().expect("the opening call was sent");
        assert_eq!(
            call.header.serial, id,
            "a stream is named by its call's serial"
        );
        self.deliver(&peer::reply_to(&call.header, &()))
            .expect("the open REPLY is accepted");
        assert_eq!(self.outputs(), vec![Output::StreamOpened(id)]);
        call.header
    }

    /// The daemon answers `call` (a `get_lib_version`) with 9.0.0, and the client reads it.
    pub fn answer_lib_version(&mut self, call: &Header) -> Result<(), ConnectionError> {
        self.deliver(&peer::reply_to(
            call,
            &ConnectGetLibVersionRet { lib_ver: 9_000_000 },
        ))
    }

    /// Call `get_lib_version` and answer it: proves the connection still works.
    pub fn roundtrip_works(&mut self) {
        let serial = self
            .conn
            .call::<ConnectGetLibVersion>(&(), None)
            .expect("the connection takes calls");
        let f = self.flush().pop().expect("call sent");
        assert_eq!(f.header.serial, serial);
        self.answer_lib_version(&f.header)
            .expect("the reply is accepted");
        let outs = self.outputs();
        let Some(Output::CallDone {
            serial: s,
            result: Ok(p),
        }) = outs.last()
        else {
            panic!("no reply: {outs:?}")
        };
        assert_eq!(*s, serial);
        let ret: ConnectGetLibVersionRet = xdr::from_bytes(p.clone()).expect("reply decodes");
        assert_eq!(ret.lib_ver, 9_000_000);
    }
}
