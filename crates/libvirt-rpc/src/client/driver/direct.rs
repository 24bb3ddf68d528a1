//! The caller-side write: on a plain unix or TCP socket, a call made while the driver holds
//! nothing to write goes out from the calling task, in the same lock that queued it.
//!
//! Without it every sequential call is a wake of the driver task, a write there, and the
//! driver's wake of the caller when the reply is in; libvirt's C library writes from the
//! calling thread. The core stays the owner of what is sent and in which order: the caller
//! takes the transmit bytes from it ([`Connection::poll_transmit`]) under the state lock and
//! makes one non-blocking `sendmsg` (`MSG_DONTWAIT`) through a duplicate of the socket's
//! descriptor. Whatever did not fit stays in [`State::unsent`], which the driver writes
//! before anything else it takes from the core. A caller never waits for the socket while it
//! holds the lock, so `close()` never waits behind a stalled write (H1), and an error here is
//! left for the driver's own write to meet and report.
//!
//! [`Connection::poll_transmit`]: crate::conn::Connection::poll_transmit

use std::collections::VecDeque;
use std::io::IoSlice;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Buf;
use rustix::net::{SendAncillaryBuffer, SendFlags};

use super::shared::State;
use crate::conn::Transmit;

/// At most this much queued in the core for a caller to write it: a call's packet and what
/// little may sit before it (a keepalive answer). Uploads and big arguments go through the
/// driver, which batches and paces them.
const DIRECT_MAX: usize = 64 << 10;
/// Buffers per `sendmsg`.
const MAX_SLICES: usize = 16;

/// Write what the core has queued from the calling task, if the driver holds nothing. True
/// when everything went out (the driver need not write for it); false when the driver must
/// (nothing was tried, or a remainder is in [`State::unsent`]).
///
/// `driver_writing` ([`Inner::driver_writing`](super::shared::Inner::driver_writing)) is set
/// by the driver, under the state lock, when it takes bytes to write, and cleared once it has
/// written them all; seeing it clear under the lock, the caller's bytes follow the driver's on
/// the wire.
pub(crate) fn write(st: &mut State, driver_writing: &AtomicBool) -> bool {
    let State {
        direct,
        unsent,
        conn,
        ..
    } = st;
    let Some(fd) = direct.as_deref() else {
        return false;
    };
    if !unsent.is_empty()
        || conn.transmit_queued() > DIRECT_MAX
        || driver_writing.load(Ordering::Acquire)
    {
        return false;
    }
    while let Some(t) = conn.poll_transmit() {
        unsent.push_back(t);
    }
    // The bytes up to the first descriptor: those go from the driver, after their packet.
    let mut slices = [IoSlice::new(&[]); MAX_SLICES];
    let mut n = 0;
    'packets: for t in &*unsent {
        for b in [&t.head, &t.body] {
            if b.is_empty() {
                continue;
            }
            if n == MAX_SLICES {
                break 'packets;
            }
            slices[n] = IoSlice::new(b);
            n += 1;
        }
        if !t.fds.is_empty() {
            break;
        }
    }
    if n > 0 {
        let flags = SendFlags::DONTWAIT | SendFlags::NOSIGNAL;
        match rustix::net::sendmsg(fd, &slices[..n], &mut SendAncillaryBuffer::default(), flags) {
            Ok(wrote) => consume(unsent, wrote),
            Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => {}
            Err(e) => {
                // Not a socket we can write to directly after all, or a broken one: the
                // driver's write meets the error (if any) and closes the core with it.
                tracing::debug!(error = %e, "caller-side write refused; the driver writes");
                *direct = None;
            }
        }
    }
    unsent.is_empty()
}

/// Drop `n` written bytes from the front of `unsent`. A packet whose bytes are all out but
/// whose descriptors are not stays, empty, for the driver to send them.
fn consume(unsent: &mut VecDeque<Transmit>, mut n: usize) {
    while let Some(t) = unsent.front_mut() {
        for b in [&mut t.head, &mut t.body] {
            let k = n.min(b.len());
            b.advance(k);
            n -= k;
        }
        if !t.is_empty() || !t.fds.is_empty() {
            break;
        }
        unsent.pop_front();
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    fn t(head: &'static [u8], body: &'static [u8]) -> Transmit {
        Transmit {
            head: Bytes::from_static(head),
            body: Bytes::from_static(body),
            fds: Vec::new(),
        }
    }

    #[test]
    fn consume_drops_written_packets_and_keeps_the_rest_in_order() {
        let mut q: VecDeque<Transmit> = [t(b"ab", b"cd"), t(b"ef", b""), t(b"gh", b"ij")].into();
        consume(&mut q, 5);
        assert_eq!(q.len(), 2);
        assert_eq!(&q[0].head[..], b"f");
        assert_eq!(&q[1].head[..], b"gh");
        consume(&mut q, 1);
        assert_eq!(q.len(), 1);
        consume(&mut q, 4);
        assert!(q.is_empty());
    }

    #[test]
    fn a_written_packet_with_descriptors_stays_for_the_driver() {
        let fd = std::fs::File::open("/dev/null").unwrap().into();
        let mut q: VecDeque<Transmit> = [
            Transmit {
                fds: vec![fd],
                ..t(b"abc", b"")
            },
            t(b"de", b""),
        ]
        .into();
        consume(&mut q, 3);
        assert_eq!(q.len(), 2);
        assert!(q[0].is_empty());
        assert_eq!(q[0].fds.len(), 1);
    }
}
