//! The cap on calls in flight: how many calls the daemon holds unanswered at once.
//!
//! libvirtd reads a client's socket only while it has a receive buffer for it, and every
//! message it read and has not answered yet holds one of `max_client_requests` buffers
//! (default [`DAEMON_MAX_CLIENT_REQUESTS`]; libvirt's `virnetserverclient.c`: the count starts
//! at one for the receive buffer, each call keeps its buffer until its reply is written, and
//! a new receive buffer is made only while the count is under the limit). With that many calls
//! in the daemon's workers it stops reading: our keepalive answers sit unread and, after
//! `keepalive_interval * keepalive_count` seconds, the daemon drops the connection — in the
//! middle of the calls it was running.
//!
//! So the client keeps at most [`Config::max_in_flight`](super::Config::max_in_flight) calls
//! on the wire unanswered (default [`DEFAULT_MAX_IN_FLIGHT`], one under the daemon's default
//! limit, so it always has a buffer left for a keepalive packet). Calls beyond it are held
//! here, encoded, in the order they were made, and go to the send queue as replies come in:
//!
//! ```text
//!   call ──▶ in flight < cap and nothing held? ──yes──▶ send queue ──▶ wire (counted)
//!                        │ no                                           │
//!                        ▼                                              │ its REPLY
//!                  held (FIFO) ──── the oldest, when a counted call ◀───┘
//!                        │         is answered
//!                        └─ forgotten (future dropped) or past its deadline: removed,
//!                           never sent
//! ```
//!
//! Every call the daemon answers counts: typed and raw calls, calls with descriptors, the
//! connection's own event registrations and the opening call of a stream (until its REPLY,
//! which may come after the stream's first data). A forgotten call already on the wire still
//! counts until its late reply. Not gated, not counted: keepalive packets (PING/PONG: the
//! daemon answers them at once, in its event loop) and the packets of an open stream (data,
//! holes, finish, abort: handled in the daemon's event loop too, and a stream must be able to
//! finish).

use std::collections::VecDeque;
use std::num::NonZeroUsize;

use super::serials::SerialSet;
use super::transmit::Queued;

/// libvirtd's default `max_client_requests` (libvirtd.conf): messages of one client it holds
/// unanswered before it stops reading that client's socket.
pub const DAEMON_MAX_CLIENT_REQUESTS: usize = 5;

/// Default [`Config::max_in_flight`](super::Config::max_in_flight): one under
/// [`DAEMON_MAX_CLIENT_REQUESTS`], so the daemon always keeps a buffer to read our keepalive
/// answers into.
pub const DEFAULT_MAX_IN_FLIGHT: NonZeroUsize =
    NonZeroUsize::new(DAEMON_MAX_CLIENT_REQUESTS - 1).expect("libvirtd's default is above one");

/// Which calls are on the wire unanswered, and the calls held back by the cap.
#[derive(Debug, Default)]
pub(crate) struct Admission {
    /// `None`: no cap.
    cap: Option<NonZeroUsize>,
    /// Serials of calls sent (queued to send) whose REPLY has not come.
    in_flight: SerialSet<u32>,
    /// Calls over the cap, oldest first.
    held: VecDeque<(u32, Queued)>,
    /// The serials in `held`, to look one up without a scan.
    held_serials: SerialSet<u32>,
    /// Calls ever held (`Stats::calls_held`).
    pub(crate) held_total: u64,
}

impl Admission {
    pub(crate) fn new(cap: Option<NonZeroUsize>) -> Self {
        Self {
            cap,
            ..Self::default()
        }
    }

    fn has_room(&self) -> bool {
        self.cap.is_none_or(|c| self.in_flight.len() < c.get())
    }

    /// Call `serial` was made: its packet if it may go now (counted), or `None` (held).
    pub(crate) fn admit(&mut self, serial: u32, q: Queued) -> Option<Queued> {
        if self.held.is_empty() && self.has_room() {
            self.in_flight.insert(serial);
            return Some(q);
        }
        self.held_total += 1;
        self.held_serials.insert(serial);
        self.held.push_back((serial, q));
        None
    }

    /// A REPLY for `serial` arrived: true if it was a counted call (its slot is free now).
    pub(crate) fn answered(&mut self, serial: u32) -> bool {
        self.in_flight.remove(&serial)
    }

    /// The oldest held call, if there is room for it now (counted).
    pub(crate) fn release(&mut self) -> Option<Queued> {
        if !self.has_room() {
            return None;
        }
        let (serial, q) = self.held.pop_front()?;
        self.held_serials.remove(&serial);
        self.in_flight.insert(serial);
        Some(q)
    }

    /// Drop held call `serial` (forgotten, or past its deadline) before it was sent: true if
    /// it was held.
    pub(crate) fn unhold(&mut self, serial: u32) -> bool {
        self.take_held(serial).is_some()
    }

    /// Take held call `serial` out of the queue, uncounted: its packet, if it was held.
    pub(crate) fn take_held(&mut self, serial: u32) -> Option<Queued> {
        if !self.held_serials.remove(&serial) {
            return None;
        }
        let i = self.held.iter().position(|(s, _)| *s == serial)?;
        self.held.remove(i).map(|(_, q)| q)
    }

    /// True while `serial` is sent and unanswered, or held: not to be reused.
    pub(crate) fn knows(&self, serial: u32) -> bool {
        self.in_flight.contains(&serial) || self.is_held(serial)
    }

    /// True while `serial` is held.
    pub(crate) fn is_held(&self, serial: u32) -> bool {
        self.held_serials.contains(&serial)
    }

    /// Calls sent and unanswered.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Calls held back by the cap.
    pub(crate) fn held(&self) -> usize {
        self.held.len()
    }

    /// The connection died: nothing is in flight or held any more.
    pub(crate) fn clear(&mut self) {
        self.in_flight.clear();
        self.held.clear();
        self.held_serials.clear();
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    fn q() -> Queued {
        Queued::packet(Bytes::from_static(b"call"))
    }

    #[test]
    fn calls_over_the_cap_are_held_and_released_in_order() {
        let mut a = Admission::new(NonZeroUsize::new(2));
        assert!(a.admit(1, q()).is_some());
        assert!(a.admit(2, q()).is_some());
        assert!(a.admit(3, q()).is_none());
        assert!(a.admit(4, q()).is_none());
        assert!(a.release().is_none(), "no room yet");
        assert!(a.answered(2));
        assert!(!a.answered(2), "a slot frees once");
        assert!(a.release().is_some());
        assert!(a.knows(3) && a.knows(4));
        assert_eq!((a.in_flight(), a.held()), (2, 1));
        assert!(a.unhold(4));
        assert!(!a.unhold(4));
        assert!(!a.knows(4));
        assert_eq!(a.held_total, 2);
    }

    #[test]
    fn without_a_cap_nothing_is_held() {
        let mut a = Admission::new(None);
        for s in 0..100 {
            assert!(a.admit(s, q()).is_some());
        }
        assert_eq!(a.in_flight(), 100);
    }
}
