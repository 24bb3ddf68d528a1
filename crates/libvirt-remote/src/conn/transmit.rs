//! What the connection has to send, and who writes it next.
//!
//! The send queue holds whole packets in order ([`Transmit`]: a head, raw stream data, and the
//! descriptors of a `CALL_WITH_FDS`); keepalive packets go ahead of the others, between whole
//! packets; an abort drops the data still queued for its stream.
//!
//! # Who writes next
//!
//! A client has two writers: the driver task, which takes packets with
//! [`poll_transmit`](Connection::poll_transmit) and writes them without holding anything,
//! and on a unix or TCP socket the caller of a lone call, which writes its own packet in one
//! non-blocking send instead of waking the driver ([`caller_transmit`](Connection::caller_transmit)
//! / [`handle_caller_written`](Connection::handle_caller_written)). Who may write next is
//! this state ([`Writer`]), so that nothing overtakes anything on the wire:
//!
//! ```text
//!            handle_caller_written: all of it
//!                  ┌─────────┐
//!                  │         ▼              poll_transmit
//!   new ──────▶ ┌──────────────┐ ─────────────────────────────▶ ┌──────────────────┐
//!               │    Idle      │                                 │      Driver      │
//!               │ turn: Caller │ ◀────────────────────────────── │   turn: Driver   │
//!               └──────────────┘  handle_written (all it took    └──────────────────┘
//!                  │                 is on the wire)                    ▲
//!                  │ handle_caller_written: part of the front packet    │ poll_transmit:
//!                  ▼                                                    │ its rest first
//!               ┌───────────────────────────────────────────────────┐  │
//!               │ CallerPartial   turn: Driver; a keepalive packet   ├──┘
//!               │ queues behind the begun packet, an abort keeps it  │
//!               └───────────────────────────────────────────────────┘
//!   any state ── the connection dies (the queue is cleared) ──▶ Idle
//! ```
//!
//! [`write_turn`](Connection::write_turn) is [`WriteTurn::Caller`] only in `Idle`, with the
//! caller-side write path on ([`set_caller_writes`](Connection::set_caller_writes)), exactly
//! one call pending (the one just made: with others in flight the driver batches) and at most
//! [`CALLER_WRITE_MAX`] queued; a packet with descriptors always goes whole from the driver
//! (a caller's write stops before it).
//!
//! # What a woken caller does, and the batch
//!
//! A reply completes its caller ([`Output::CallDone`](super::Output::CallDone)), which usually makes its next call at
//! once. The driver that routed N replies lets those callers run before it writes, so that
//! their N calls leave in one write — unless all N are queued already
//! ([`batch_wait`](Connection::batch_wait); the count runs from the `CallDone`s
//! [`poll_output`](Connection::poll_output) yields to the packets `poll_transmit` takes).

use std::collections::VecDeque;
use std::io::IoSlice;
use std::os::fd::OwnedFd;

use bytes::{Buf, Bytes};

use super::{Connection, StreamId};

/// At most this much queued for a caller to write it: a call's packet and what little may sit
/// before it (a keepalive answer). Uploads and big arguments go through the driver, which
/// batches and paces them.
pub const CALLER_WRITE_MAX: usize = 64 << 10;

/// Queued bytes below which the driver waits one scheduler turn for more calls to batch.
pub const BATCH_MAX: usize = 16 << 10;

/// One packet to write: `head` then `body` (either may be empty). Stream data travels in
/// `body` without being copied.
///
/// A `CALL_WITH_FDS` packet carries its descriptors in `fds`: after the packet's bytes, send
/// each one as `SCM_RIGHTS` ancillary data with one byte of data, in a message of its own
/// (as libvirt does: the daemon reads the packet, then one byte and one descriptor per
/// `recvmsg`).
#[derive(Default)]
pub struct Transmit {
    /// Length word, header and (for calls) the payload.
    pub head: Bytes,
    /// Raw stream data, sent after `head`.
    pub body: Bytes,
    /// Descriptors to send after the packet, one per message (empty but for
    /// `CALL_WITH_FDS`).
    pub fds: Vec<OwnedFd>,
}

impl Transmit {
    /// Total bytes.
    pub fn len(&self) -> usize {
        self.head.len() + self.body.len()
    }

    /// True when there is nothing to send.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::fmt::Debug for Transmit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transmit")
            .field("len", &self.len())
            .field("fds", &self.fds.len())
            .finish_non_exhaustive()
    }
}

/// A packet in the send queue, with what it is, so that a stream's data can be dropped
/// without reading the packet's header back.
#[derive(Debug)]
pub(crate) struct Queued {
    transmit: Transmit,
    /// A data or hole packet of this stream (not a call, nor a stream's finish or abort).
    stream_data: Option<StreamId>,
    /// Our PONG to the daemon's PING.
    pong: bool,
}

impl Queued {
    /// A whole packet in `head`: a call, a control or keepalive packet.
    pub(crate) fn packet(head: Bytes) -> Self {
        Self {
            transmit: Transmit {
                head,
                ..Transmit::default()
            },
            stream_data: None,
            pong: false,
        }
    }

    /// A data or hole packet of stream `id`.
    pub(crate) fn data(id: StreamId, head: Bytes, body: Bytes) -> Self {
        Self {
            transmit: Transmit {
                head,
                body,
                fds: Vec::new(),
            },
            stream_data: Some(id),
            pong: false,
        }
    }

    /// A call and the descriptors to send after it.
    pub(crate) fn with_fds(head: Bytes, fds: Vec<OwnedFd>) -> Self {
        Self {
            transmit: Transmit {
                head,
                body: Bytes::new(),
                fds,
            },
            stream_data: None,
            pong: false,
        }
    }
}

/// Who holds bytes taken from the send queue that are not on the wire yet (see the
/// [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Writer {
    /// Everything taken is on the wire: the next lone call may be written by its caller.
    #[default]
    Idle,
    /// A caller wrote part of the packet at the front of the queue: its rest must go next,
    /// whole, from the driver. Keepalive packets queue behind it and an abort keeps it.
    CallerPartial,
    /// The driver took packets ([`Connection::poll_transmit`]) and has not said they are all
    /// written ([`Connection::handle_written`]): callers leave their calls to it.
    Driver,
}

/// Who writes what is queued now ([`Connection::write_turn`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteTurn {
    /// The caller that just made a lone call writes the queue's packets itself
    /// ([`Connection::caller_transmit`], then [`Connection::handle_caller_written`]).
    Caller,
    /// The driver writes: wake it.
    Driver,
}

/// The write batching rule: after replies complete N callers, the driver yields one scheduler
/// turn before writing, so that the calls those callers send next leave together — unless
/// all N calls are queued already. Without that exception a lone caller's next call cost a
/// driver poll more than it needs: at 8 calls in flight most wake-ups bring one reply.
#[derive(Debug, Default)]
struct Batch {
    /// Callers woken since the last yield whose next call has not been taken yet.
    awaited: usize,
}

impl Batch {
    /// `n` callers were completed (their tasks woken).
    fn woke(&mut self, n: usize) {
        self.awaited += n;
    }

    /// `n` packets were taken to write (each, most likely, a woken caller's next call).
    fn taken(&mut self, n: usize) {
        self.awaited = self.awaited.saturating_sub(n);
    }

    /// Whether to yield before writing `queued` bytes (`queued_any`: anything, descriptors
    /// included, waits). Yields at most once per batch of woken callers.
    fn wait(&mut self, queued_any: bool, queued: usize) -> bool {
        if self.awaited == 0 || !queued_any || queued >= BATCH_MAX {
            return false;
        }
        self.awaited = 0;
        true
    }
}

/// The send queue and its write state, owned by the [`Connection`].
#[derive(Debug, Default)]
pub(crate) struct SendQueue {
    queue: VecDeque<Queued>,
    /// Bytes in `queue`.
    bytes: usize,
    /// Packets ever queued (`Stats::packets_out`).
    pub(crate) packets_out: u64,
    writer: Writer,
    /// The transport has a caller-side write path.
    callers: bool,
    /// A caller wrote everything queued since the driver last asked.
    caller_wrote: bool,
    /// A PONG is queued and not wholly taken yet: it answers every PING since, so a flood of
    /// PINGs (or a stalled socket) queues one, not one each.
    pong_unsent: bool,
    batch: Batch,
}

impl SendQueue {
    /// Bytes queued.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Queue a packet at the back.
    pub(crate) fn push(&mut self, q: Queued) {
        self.packets_out += 1;
        self.bytes += q.transmit.len();
        self.queue.push_back(q);
    }

    /// Queue a keepalive packet ahead of the others, so a long upload cannot delay it: at the
    /// front, or right behind a packet a caller has begun to write. A `pong` is not queued
    /// while another one is still unsent (that one answers this PING too).
    pub(crate) fn push_urgent(&mut self, head: Bytes, pong: bool) {
        if pong && self.pong_unsent {
            return;
        }
        self.pong_unsent |= pong;
        self.packets_out += 1;
        self.bytes += head.len();
        let at = usize::from(self.writer == Writer::CallerPartial);
        self.queue.insert(
            at,
            Queued {
                pong,
                ..Queued::packet(head)
            },
        );
    }

    /// Forget queued data and hole packets of stream `id`, but for one a caller has begun to
    /// write (its rest must follow what went out).
    pub(crate) fn drop_stream_data(&mut self, id: StreamId) {
        let begun = usize::from(self.writer == Writer::CallerPartial);
        let before = self.queue.len();
        let mut at = 0;
        self.queue.retain(|q| {
            at += 1;
            at <= begun || q.stream_data != Some(id)
        });
        if self.queue.len() != before {
            self.bytes = self.queue.iter().map(|q| q.transmit.len()).sum();
        }
    }

    /// The connection died: nothing more is sent.
    pub(crate) fn clear(&mut self) {
        self.queue.clear();
        self.bytes = 0;
        self.pong_unsent = false;
        self.writer = Writer::Idle;
    }

    /// The driver takes the packet at the front (the rest of a begun one first).
    fn pop(&mut self) -> Option<Transmit> {
        let q = self.queue.pop_front()?;
        self.pong_unsent &= !q.pong;
        let t = q.transmit;
        self.bytes -= t.len();
        self.writer = Writer::Driver;
        self.batch.taken(1);
        Some(t)
    }

    /// The bytes of the packets at the front, up to the first one that carries descriptors,
    /// as slices for one vectored write; how many slices were filled.
    fn caller_slices<'a>(&'a self, out: &mut [IoSlice<'a>]) -> usize {
        let mut n = 0;
        'packets: for q in &self.queue {
            if !q.transmit.fds.is_empty() {
                break;
            }
            for b in [&q.transmit.head, &q.transmit.body] {
                if b.is_empty() {
                    continue;
                }
                if n == out.len() {
                    break 'packets;
                }
                out[n] = IoSlice::new(b);
                n += 1;
            }
        }
        n
    }

    /// A caller wrote `n` bytes of [`caller_slices`](Self::caller_slices): drop them from the
    /// front. True when the queue is empty now.
    fn caller_written(&mut self, mut n: usize) -> bool {
        assert!(n <= self.bytes, "a caller wrote more than was queued");
        self.bytes -= n;
        while n > 0 {
            let t = &mut self.queue.front_mut().expect("bytes are queued").transmit;
            for b in [&mut t.head, &mut t.body] {
                let k = n.min(b.len());
                b.advance(k);
                n -= k;
            }
            if t.is_empty() {
                // Caller slices never reach a packet with descriptors.
                let q = self.queue.pop_front().expect("the front packet");
                self.pong_unsent &= !q.pong;
            } else {
                self.writer = Writer::CallerPartial;
            }
        }
        let all = self.queue.is_empty();
        self.caller_wrote |= all;
        all
    }
}

impl Connection {
    /// Who holds bytes taken from the send queue that are not on the wire yet.
    pub fn writer(&self) -> Writer {
        self.sendq.writer
    }

    /// The transport has a write path a caller can use without the driver (a duplicate of a
    /// unix or TCP socket's descriptor, written with non-blocking sends). Off by default.
    pub fn set_caller_writes(&mut self, on: bool) {
        self.sendq.callers = on;
    }

    /// Who writes what is queued now: the caller of the call just made, if it is the only
    /// call pending, the caller-side write path is on, nothing taken is still unwritten
    /// ([`Writer::Idle`]) and at most [`CALLER_WRITE_MAX`] is queued; otherwise the driver.
    pub fn write_turn(&self) -> WriteTurn {
        if self.sendq.callers
            && self.sendq.writer == Writer::Idle
            && self.pending_calls() == 1
            && self.sendq.bytes <= CALLER_WRITE_MAX
        {
            WriteTurn::Caller
        } else {
            WriteTurn::Driver
        }
    }

    /// For a caller whose [`write_turn`](Self::write_turn) it is: the queued bytes, in order,
    /// as slices for one vectored send, up to the first packet that carries descriptors (those
    /// go from the driver). Returns how many slices were filled; report what the send took
    /// with [`handle_caller_written`](Self::handle_caller_written).
    pub fn caller_transmit<'a>(&'a self, out: &mut [IoSlice<'a>]) -> usize {
        self.sendq.caller_slices(out)
    }

    /// A caller's send took `n` bytes of [`caller_transmit`](Self::caller_transmit)'s slices.
    /// Returns true when nothing is left to write (the driver need not write for the call); a
    /// packet left half-written is the driver's to finish, first ([`Writer::CallerPartial`]).
    pub fn handle_caller_written(&mut self, n: usize) -> bool {
        self.sendq.caller_written(n)
    }

    /// The driver wrote everything it took with [`poll_transmit`](Self::poll_transmit):
    /// callers may write again ([`Writer::Driver`] becomes [`Writer::Idle`]).
    pub fn handle_written(&mut self) {
        if self.sendq.writer == Writer::Driver {
            self.sendq.writer = Writer::Idle;
        }
    }

    /// Whether a caller wrote everything queued since the last time this was asked (the
    /// driver counts its busy-poll budget from such a write).
    pub fn take_caller_wrote(&mut self) -> bool {
        std::mem::take(&mut self.sendq.caller_wrote)
    }

    /// The driver is about to write `held` bytes (`held_any`: anything at all, descriptors
    /// included): whether to yield one scheduler turn first, so that the callers completed
    /// since the last yield add their next calls to this write. At most once per batch of
    /// completed callers; never for nothing, nor for [`BATCH_MAX`] bytes or more.
    pub fn batch_wait(&mut self, held_any: bool, held: usize) -> bool {
        self.sendq.batch.wait(held_any, held)
    }

    /// A call was completed ([`Output::CallDone`](super::Output::CallDone) handed out): its
    /// caller's next call is coming.
    pub(crate) fn caller_woken(&mut self) {
        self.sendq.batch.woke(1);
    }

    /// The next packet to write, in order (the driver's side: see [`Writer::Driver`]).
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.sendq.pop()
    }
}

#[cfg(test)]
mod send_queue_tests {
    use super::*;

    fn t(head: &'static [u8], body: &'static [u8]) -> Queued {
        Queued {
            transmit: Transmit {
                head: Bytes::from_static(head),
                body: Bytes::from_static(body),
                fds: Vec::new(),
            },
            stream_data: None,
            pong: false,
        }
    }

    fn heads(q: &SendQueue) -> Vec<&[u8]> {
        q.queue.iter().map(|q| &q.transmit.head[..]).collect()
    }

    #[test]
    fn consume_drops_written_packets_and_keeps_the_rest_in_order() {
        let mut q = SendQueue::default();
        for p in [t(b"ab", b"cd"), t(b"ef", b""), t(b"gh", b"ij")] {
            q.push(p);
        }
        assert!(!q.caller_written(5));
        assert_eq!(q.queue.len(), 2);
        assert_eq!(&q.queue[0].transmit.head[..], b"f");
        assert_eq!(&q.queue[1].transmit.head[..], b"gh");
        assert!(!q.caller_written(1));
        assert_eq!(q.queue.len(), 1);
        assert!(q.caller_written(4));
        assert!(q.queue.is_empty());
    }

    #[test]
    fn a_packet_with_descriptors_is_left_whole_for_the_driver() {
        let fd = std::fs::File::open("/dev/null").unwrap().into();
        let mut q = SendQueue::default();
        q.push(t(b"ab", b""));
        q.push(Queued::with_fds(Bytes::from_static(b"abc"), vec![fd]));
        q.push(t(b"de", b""));
        let mut slices = [IoSlice::new(&[]); 8];
        assert_eq!(q.caller_slices(&mut slices), 1, "the slices stop before it");
        assert!(!q.caller_written(2));
        assert_eq!(q.queue.len(), 2);
        assert_eq!(q.queue[0].transmit.fds.len(), 1);
        assert_eq!(&q.queue[0].transmit.head[..], b"abc");
    }

    #[test]
    fn a_begun_packet_stays_ahead_of_keepalive_and_of_its_streams_abort() {
        let mut q = SendQueue::default();
        let mut data = t(b"data-head", b"data-body");
        data.stream_data = Some(7);
        q.push(data);
        let mut more = t(b"more", b"");
        more.stream_data = Some(7);
        q.push(more);
        assert!(!q.caller_written(5), "\"data-\" of \"data-head\"");
        assert_eq!(q.writer, Writer::CallerPartial);
        q.push_urgent(Bytes::from_static(b"ping"), false);
        assert_eq!(heads(&q), [&b"head"[..], b"ping", b"more"]);
        q.drop_stream_data(7);
        assert_eq!(heads(&q), [&b"head"[..], b"ping"]);
        assert_eq!(q.bytes(), 4 + 9 + 4);
        let rest = q.pop().unwrap();
        assert_eq!(
            (&rest.head[..], &rest.body[..]),
            (&b"head"[..], &b"data-body"[..])
        );
        assert_eq!(q.writer, Writer::Driver);
        q.push_urgent(Bytes::from_static(b"pong"), true);
        assert_eq!(
            heads(&q),
            [&b"pong"[..], b"ping"],
            "nothing begun: keepalive first"
        );
    }

    #[test]
    fn one_unsent_pong_answers_every_ping_until_it_is_wholly_written() {
        let mut q = SendQueue::default();
        q.push_urgent(Bytes::from_static(b"pong-1"), true);
        q.push_urgent(Bytes::from_static(b"pong-2"), true);
        assert_eq!(
            heads(&q),
            [&b"pong-1"[..]],
            "one queued PONG answers both PINGs"
        );
        q.push(t(b"call", b""));
        assert!(!q.caller_written(3), "\"pon\" of the PONG went out");
        assert_eq!(q.writer, Writer::CallerPartial);
        q.push_urgent(Bytes::from_static(b"pong-3"), true);
        assert_eq!(
            heads(&q),
            [&b"g-1"[..], b"call"],
            "a PONG begun but not wholly written still answers"
        );
        let rest = q.pop().expect("the driver finishes the begun PONG");
        assert_eq!(&rest.head[..], b"g-1");
        q.push_urgent(Bytes::from_static(b"pong-4"), true);
        assert_eq!(
            heads(&q),
            [&b"pong-4"[..], b"call"],
            "written: the next PING gets its own"
        );
        q.clear();
        q.push_urgent(Bytes::from_static(b"pong-5"), true);
        assert_eq!(heads(&q), [&b"pong-5"[..]], "a cleared queue owes none");
    }
}

#[cfg(test)]
mod batch_tests {
    use super::Batch;

    /// A call packet's size on the wire (a `get_lib_version`).
    const CALL: usize = 28;

    #[test]
    fn a_lone_woken_callers_call_is_written_without_a_yield() {
        let mut b = Batch::default();
        b.woke(1);
        b.taken(1);
        assert!(
            !b.wait(true, CALL),
            "the one woken caller's call is queued: nothing more is coming to batch with it"
        );
    }

    #[test]
    fn calls_still_to_come_get_one_yield() {
        let mut b = Batch::default();
        b.woke(3);
        b.taken(1);
        assert!(b.wait(true, CALL), "two woken callers have not sent yet");
        b.taken(2);
        assert!(!b.wait(true, 3 * CALL), "one yield per batch");
    }

    #[test]
    fn packets_taken_before_the_replies_do_not_count() {
        let mut b = Batch::default();
        // One round's pump: a keepalive answer taken, then a reply routed.
        b.taken(1);
        b.woke(1);
        assert!(b.wait(true, CALL));
    }

    #[test]
    fn nothing_queued_or_a_big_batch_is_not_held() {
        let mut b = Batch::default();
        b.woke(2);
        assert!(!b.wait(false, 0));
        assert!(!b.wait(true, super::BATCH_MAX));
        assert!(b.wait(true, CALL), "still owed its one yield");
    }
}
