//! The caller-side write: on a plain unix or TCP socket, a call made while the driver holds
//! nothing to write goes out from the calling task, in the same lock that queued it.
//!
//! Without it every sequential call is a wake of the driver task, a write there, and the
//! driver's wake of the caller when the reply is in; libvirt's C library writes from the
//! calling thread. The core stays the owner of what is sent, in which order and by whom (its
//! write rule, [`Writer`]): under the state lock the caller asks it whose turn it is, writes
//! the queued bytes it is handed ([`Connection::caller_transmit`]) with one non-blocking
//! `sendmsg` (`MSG_DONTWAIT`) through a duplicate of the socket's descriptor, and reports what
//! the socket took. Whatever did not fit stays at the front of the core's queue, which the
//! driver takes first. A caller never waits for the socket while it holds the lock, so
//! `close()` never waits behind a stalled write (H1), and an error here is left for the
//! driver's own write to meet and report.
//!
//! [`Writer`]: crate::conn::Writer
//! [`Connection::caller_transmit`]: crate::conn::Connection::caller_transmit

use std::io::IoSlice;

use rustix::net::{SendAncillaryBuffer, SendFlags};

use super::shared::State;

/// Buffers per `sendmsg`.
const MAX_SLICES: usize = 16;

/// Write what the core has queued from the calling task, when it is the caller's turn
/// ([`Connection::write_turn`](crate::conn::Connection::write_turn), checked by the caller).
/// True when everything went out (the driver need not write for it); false when the driver
/// must (the socket took nothing, or part: the rest stays at the front of the core's queue,
/// [`Writer::CallerPartial`](crate::conn::Writer::CallerPartial)).
pub(crate) fn write(st: &mut State) -> bool {
    let State { direct, conn, .. } = st;
    let Some(fd) = direct.as_deref() else {
        return false;
    };
    let mut slices = [IoSlice::new(&[]); MAX_SLICES];
    let n = conn.caller_transmit(&mut slices);
    if n == 0 {
        return false;
    }
    let flags = SendFlags::DONTWAIT | SendFlags::NOSIGNAL;
    match rustix::net::sendmsg(fd, &slices[..n], &mut SendAncillaryBuffer::default(), flags) {
        Ok(wrote) => conn.handle_caller_written(wrote),
        Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => false,
        Err(e) => {
            // Not a socket we can write to directly after all, or a broken one: the
            // driver's write meets the error (if any) and closes the core with it.
            tracing::debug!(error = %e, "caller-side write refused; the driver writes");
            *direct = None;
            conn.set_caller_writes(false);
            false
        }
    }
}
