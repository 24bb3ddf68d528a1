//! `console`: a domain's serial console on this terminal, like `virsh console`.
//!
//! The terminal is put in raw mode (every key goes to the guest, Ctrl-C included) and
//! restored on every way out: `Ctrl-]` (leaves, like virsh), the console stream ending (the
//! guest shut down, another client took the console with `force`), an error, a panic. Not a
//! terminal (a pipe, a file): bytes are passed through as they are and the end of input
//! leaves.

use std::io::{self, Read as _};
use std::os::fd::AsFd;

use libvirt_remote::Domain;
use rustix::termios::{self, OptionalActions, Termios};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The byte `Ctrl-]` sends: leaves the console.
pub const ESCAPE: u8 = 0x1d;

/// `virDomainConsoleFlags::FORCE`: take the console over from another client.
const CONSOLE_FORCE: u32 = 1;

/// Attach this terminal to `dom`'s console `dev_name` (`None`: the first) until `Ctrl-]`, the
/// end of input, or the console's end. `force` takes it over from another client.
///
/// # Errors
/// The console cannot be opened (a stopped domain, no console, taken by another client
/// without `force`), the terminal cannot be set up, or the stream failed (the error carries
/// the `StreamError`, see [`libvirt_remote::client::stream_error`]). A console ended by the
/// daemon (the guest stopped) is not an error.
pub async fn console(dom: &Domain, dev_name: Option<&str>, force: bool) -> io::Result<()> {
    let flags = if force { CONSOLE_FORCE } else { 0 };
    let mut stream = dom
        .open_console(dev_name, flags)
        .await
        .map_err(io::Error::other)?;
    eprint!(
        "Connected to domain '{}'\r\nEscape character is ^] (Ctrl + ])\r\n",
        dom.name()
    );
    let _raw = RawTerminal::enter()?;
    let mut keys = stdin_reader();
    let mut out = tokio::io::stdout();
    let mut buf = vec![0u8; 16 << 10];
    let r = loop {
        tokio::select! {
            n = stream.read(&mut buf) => match n {
                Ok(0) => break Ok(()),
                Ok(n) => {
                    if let Err(e) = async {
                        out.write_all(&buf[..n]).await?;
                        out.flush().await
                    }.await {
                        break Err(e);
                    }
                }
                Err(e) => break Err(e),
            },
            k = keys.recv() => {
                let Some(k) = k else { break Ok(()) };
                let (send, leave) = until_escape(&k);
                if let Err(e) = stream.write_all(send).await {
                    break Err(e);
                }
                if leave {
                    break Ok(());
                }
            }
        }
    };
    // Leaving: end the stream from our side (the daemon releases the console).
    let _ = stream.shutdown().await;
    eprint!("\r\n");
    r
}

/// The bytes of `input` before the escape byte, and whether it was there.
pub fn until_escape(input: &[u8]) -> (&[u8], bool) {
    match input.iter().position(|&b| b == ESCAPE) {
        Some(i) => (&input[..i], true),
        None => (input, false),
    }
}

/// Keys from stdin, read on a thread of their own: a blocked terminal read must not keep
/// the runtime from shutting down once the console is left. `None` at the end of input.
fn stdin_reader() -> tokio::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    std::thread::spawn(move || {
        let mut buf = [0u8; 1024];
        loop {
            match io::stdin().lock().read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if tx.blocking_send(buf[..n].to_vec()).is_err() {
                        return;
                    }
                }
            }
        }
    });
    rx
}

/// Raw mode on stdin while alive; the saved settings come back on drop (every exit path,
/// unwinding included). Nothing is changed when stdin is not a terminal.
struct RawTerminal {
    saved: Option<Termios>,
}

impl RawTerminal {
    fn enter() -> io::Result<Self> {
        let stdin = io::stdin();
        if !termios::isatty(stdin.as_fd()) {
            return Ok(Self { saved: None });
        }
        let saved = termios::tcgetattr(stdin.as_fd())?;
        let mut raw = saved.clone();
        raw.make_raw();
        termios::tcsetattr(stdin.as_fd(), OptionalActions::Flush, &raw)?;
        Ok(Self { saved: Some(saved) })
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            let _ = termios::tcsetattr(io::stdin().as_fd(), OptionalActions::Flush, saved);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_stops_what_is_sent() {
        assert_eq!(until_escape(b"ls\r"), (&b"ls\r"[..], false));
        assert_eq!(until_escape(b"ab\x1dcd"), (&b"ab"[..], true));
        assert_eq!(until_escape(b"\x1d"), (&b""[..], true));
    }

    #[test]
    fn not_a_terminal_is_left_alone() {
        // Under the test harness stdin is not a terminal (or, if it is, it is restored).
        let t = RawTerminal::enter().unwrap();
        drop(t);
    }
}
